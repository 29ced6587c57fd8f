"""GameClock.reopen: a flag the arbiter dismissed, and the game goes on.

A flag dismissed because the game should continue (the press came first, a faulty clock)
must leave the arbiter a way on: the flagged side gets the time the arbiter gives, the clock
waits paused, and from ``resume()`` it is an ordinary clock again — it can flag a second time.
"""

from __future__ import annotations

import pytest
from support.fake_time import MS, clock

from clock_service import Adjusted, ClockError, Flagged, GameClock, Moved, Phase, Resumed, Side

RED, BLACK = Side.RED, Side.BLACK


def flagged_red(t):
    c = clock(t)  # 30m+5s
    c.start()
    t.advance(s=1800)
    assert c.settle() == (Flagged(RED),)
    return c


def test_reopen_gives_the_flagged_side_time_and_waits_paused(t):
    c = flagged_red(t)
    t.advance(s=40)  # the arbiter walks over: nobody's time runs
    assert c.reopen(60_000) == (Adjusted(RED, 60_000),)
    assert (c.phase, c.flag, c.flagged_ns, c.running) == (Phase.PAUSED, None, None, None)
    assert (c.remaining_ms(RED), c.remaining_ms(BLACK)) == (60_000, 1_800_000)
    assert c.side_on_move is RED and c.used_ms(RED) == 1_800_000
    t.advance(s=5)
    assert c.remaining_ms(RED) == 60_000  # paused: still nothing runs
    assert c.resume() == (Resumed(RED),)
    t.advance(s=10)
    # the move's turn began before the flag: 30 min spent then, 10 s now
    assert c.press(RED) == (Moved(RED, 1_810_000, 1),)
    assert c.remaining_ms(RED) == 55_000  # 60 − 10 + the 5 s increment


def test_a_reopened_clock_flags_again_at_its_own_zero(t):
    c = flagged_red(t)
    c.reopen(30_000)
    c.resume()
    t.advance(ms=29_999)
    assert c.flag is None
    t.advance(ns=MS)
    assert c.flag is RED and c.settle() == (Flagged(RED),)
    assert c.flagged_ns == t.ns


def test_reopen_survives_snapshot_and_restore(t):
    c = flagged_red(t)
    c.reopen(90_000)
    back = GameClock.restore(c.snapshot(), now=t)
    assert back.snapshot() == c.snapshot()
    assert back.snapshot()["phase"] == "paused" and back.snapshot()["flag"] is None
    assert back.resume() == (Resumed(RED),)
    assert back.remaining_ms(RED) == 90_000


def test_reopen_in_byoyomi_gives_main_time(t):
    c = clock(t, "10s:2x5s")
    c.start()
    t.advance(s=20)
    assert c.settle() == (Flagged(RED),)
    c.reopen(7_000)
    r = c.reading(RED)
    assert (r.main_ms, r.periods) == (7_000, 0)
    c.resume()
    t.advance(s=7)
    assert c.flag is RED


@pytest.mark.parametrize("delta", [0, -1, 1.5, True])
def test_reopen_needs_positive_whole_ms(t, delta):
    c = flagged_red(t)
    before = c.snapshot()
    with pytest.raises(ClockError, match="delta_ms"):
        c.reopen(delta)
    assert c.snapshot() == before and c.flag is RED


@pytest.mark.parametrize("state", ["idle", "running", "paused"])
def test_reopen_without_a_flag_is_refused_and_changes_nothing(t, state):
    c = clock(t)
    if state != "idle":
        c.start()
        t.advance(s=3)
    if state == "paused":
        c.pause()
    before = c.snapshot()
    with pytest.raises(ClockError, match="no flag"):
        c.reopen(60_000)
    assert c.snapshot() == before


def test_reopen_past_an_unsettled_deadline_settles_the_flag_first(t):
    c = clock(t)
    c.start()
    t.advance(s=1801)  # the flag fell 1 s ago; nobody settled it yet
    assert c.reopen(10_000) == (Flagged(RED), Adjusted(RED, 10_000))
    assert c.remaining_ms(RED) == 10_000 and c.phase is Phase.PAUSED
