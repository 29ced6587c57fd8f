"""GameClock.take_late_press: the flagged side pressed before its flag, the press reached the
clock only after the flag stood, and the arbiter dismissed the loss. The press counts at its
own instant (the player is charged for the instant they acted): the figures below are worked
out by hand from the time control, not read from the clock."""

from __future__ import annotations

import pytest
from support.fake_time import MS, S, clock

from clock_service import ClockError, Flagged, Moved, Paused, Phase, Resumed, Side

RED, BLACK = Side.RED, Side.BLACK


def red_flags_at_1815_s(t):
    """30m+5s from t0: red moves at 10 s, black at 20 s; red then has 1,795 s, flag at 1,815 s."""
    c = clock(t)
    t0 = t.ns
    c.start()
    t.advance(s=10)
    c.press(RED)
    t.advance(s=10)
    c.press(BLACK)
    t.advance(s=1795)
    assert c.settle() == (Flagged(RED),) and c.flagged_ns == t0 + 1815 * S
    t.advance(s=2)  # the flag stood unproven; the press comes in after it
    return c, t0


def test_the_press_counts_at_its_instant(t):
    c, t0 = red_flags_at_1815_s(t)
    press = t0 + 1815 * S - 300 * MS  # 0.3 s before the flag
    t.advance(s=40)  # the arbiter walks over and rules: nobody's time runs
    events = c.take_late_press(press)
    # red's turn ran from 20 s to the press, 1,794.7 s; its second move
    assert events == (Moved(RED, 1_794_700, 2), Paused(BLACK))
    assert (c.phase, c.flag, c.flagged_ns, c.side_on_move) == (Phase.PAUSED, None, None, BLACK)
    # red: the 0.3 s it had left, and the move's 5 s; black: 1,795 s less the 0.3 s it ran
    assert (c.remaining_ms(RED), c.remaining_ms(BLACK)) == (5_300, 1_794_700)
    assert c.moves(RED) == 2 and c.used_ms(RED) == 10_000 + 1_794_700
    t.advance(s=7)
    assert c.remaining_ms(BLACK) == 1_794_700  # paused until the arbiter resumes
    assert c.resume() == (Resumed(BLACK),)
    t.advance(s=4)
    assert c.press(BLACK) == (Moved(BLACK, 4_300, 2),)  # its turn: 0.3 s then 4 s
    assert c.remaining_ms(BLACK) == 1_794_700 - 4_000 + 5_000


def test_the_other_side_can_run_out_between_the_press_and_the_flag(t):
    """Black had 5 s left, red's press was 10 s before red's flag: black's own flag fell first."""
    c = clock(t, black="10s")
    t0 = t.ns
    c.start()
    t.advance(s=1)
    c.press(RED)
    t.advance(s=5)
    c.press(BLACK)  # black: 5 s left, no increment
    t.advance(s=1804)
    assert c.settle() == (Flagged(RED),) and c.flagged_ns == t0 + 1810 * S
    events = c.take_late_press(t0 + 1800 * S)
    assert events == (Moved(RED, 1_794_000, 2), Flagged(BLACK))
    assert c.flag is BLACK and c.flagged_ns == t0 + 1805 * S
    assert c.remaining_ms(RED) == 15_000  # the 10 s it had, and the 5 s bonus


def test_refused_changing_nothing(t):
    c, t0 = red_flags_at_1815_s(t)
    before = c.snapshot()
    with pytest.raises(ClockError, match="not within"):
        c.take_late_press(t0 + 1815 * S)  # at the flag: not before it
    with pytest.raises(ClockError, match="stopped or was adjusted"):
        c.take_late_press(t0 + 19 * S)  # before red's turn began
    assert c.snapshot() == before and c.flag is RED

    running = clock(t)
    running.start()
    with pytest.raises(ClockError, match="no flag"):
        running.take_late_press(t.ns - MS)


def test_byo_yomi_is_left_to_the_arbiter(t):
    c = clock(t, "1m:3x30s")
    c.start()
    t.advance(s=150)
    assert c.settle() == (Flagged(RED),)
    with pytest.raises(ClockError, match="byo-yomi"):
        c.take_late_press(t.ns - 2 * S)
    assert c.flag is RED


def test_a_press_before_a_pause_is_left_to_the_arbiter(t):
    """5m: red's press went out at 120 s with 190 s left; the arbiter paused 60 s; red's flag
    fell at 370 s. Replaying the press would give red back 250 s of wall time, 60 s of it a
    pause that charged nobody (a reviewer): refused, nothing changed."""
    c = clock(t, "5m")
    t0 = t.ns
    c.start()
    t.advance(s=110)
    press = t.ns  # red has 190 s left
    t.advance(s=10)
    c.pause()
    t.advance(s=60)
    c.resume()
    t.advance(s=180)
    assert c.settle() == (Flagged(RED),) and c.flagged_ns == t0 + 360 * S
    before = c.snapshot()
    with pytest.raises(ClockError, match="stopped or was adjusted"):
        c.take_late_press(press)
    assert c.snapshot() == before and c.flag is RED
