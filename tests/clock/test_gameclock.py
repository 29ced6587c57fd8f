"""GameClock rules of play, one table or test per rule, under a fake monotonic time source:
starting and pressing, pause and resume, the flag, whole games to the nanosecond.

The fixture ``t`` (a ``FakeTime``) is in this folder's conftest.py.
"""

from __future__ import annotations

import pytest
from support.fake_time import MS, clock

from clock_service import (
    Flagged,
    Moved,
    Paused,
    Phase,
    Resumed,
    Side,
    Started,
)

RED, BLACK = Side.RED, Side.BLACK


# -- starting and pressing ------------------------------------------------------------------


def test_nothing_runs_before_start(t):
    c = clock(t)
    t.advance(s=100)
    assert (c.phase, c.running, c.flag, c.deadline_ns()) == (Phase.IDLE, None, None, None)
    assert c.remaining_ms(RED) == c.remaining_ms(BLACK) == 1_800_000
    assert c.side_on_move is RED


def test_start_runs_red_once(t):
    c = clock(t)
    assert c.start() == (Started(RED),)
    assert c.start() == ()
    assert c.running is RED and c.phase is Phase.RUNNING
    t.advance(ms=1234)
    assert c.remaining_ms(RED) == 1_800_000 - 1234
    assert c.remaining_ms(BLACK) == 1_800_000
    assert c.deadline_ns() == t.ns - 1234 * MS + 1_800_000 * MS


@pytest.mark.parametrize(
    ("setup", "presser"),
    [
        ("idle", RED),  # before start
        ("running", BLACK),  # the side not on move
        ("paused", RED),  # while paused
        ("paused", BLACK),
    ],
)
def test_press_that_changes_nothing(t, setup, presser):
    c = clock(t)
    if setup != "idle":
        c.start()
        t.advance(s=3)
    if setup == "paused":
        c.pause()
    before = c.snapshot()
    if setup != "running":
        t.advance(s=1)  # and no time passes either
    assert c.press(presser) == ()
    assert c.snapshot() == before


def test_press_switches_sides_and_adds_increment(t):
    c = clock(t)
    c.start()
    t.advance(s=10)
    assert c.press(RED) == (Moved(RED, 10_000, 1),)
    assert c.remaining_ms(RED) == 1_800_000 - 10_000 + 5_000
    assert c.running is BLACK and c.side_on_move is BLACK
    t.advance(ms=2500)
    assert c.press(BLACK) == (Moved(BLACK, 2500, 1),)
    assert c.remaining_ms(BLACK) == 1_800_000 + 2_500
    assert (c.moves(RED), c.moves(BLACK)) == (1, 1)
    assert (c.used_ms(RED), c.used_ms(BLACK)) == (10_000, 2_500)


@pytest.mark.parametrize(
    ("tc", "red_moves_ms", "expected_red_ms"),
    [
        # Fischer: the increment on every completed move.
        ("1m+2s", [1000, 1000, 1000], 60_000 - 3_000 + 3 * 2_000),
        ("1m", [1000, 1000], 58_000),
        # Multi-period: the next period's time on completing the period's last move.
        ("2/1m+1s:30s+2s", [1000, 1000], 60_000 - 2_000 + 2 * 1_000 + 30_000),
        ("2/1m+1s:30s+2s", [1000, 1000, 1000], 60_000 - 3_000 + 2 * 1_000 + 30_000 + 2_000),
        ("2/1m:1/10s", [1000, 1000, 1000, 1000], 60_000 - 4_000 + 3 * 10_000),  # repeats
    ],
)
def test_bonus_table(t, tc, red_moves_ms, expected_red_ms):
    c = clock(t, tc)
    c.start()
    for used in red_moves_ms:
        t.advance(ms=used)
        c.press(RED)
        c.press(BLACK)
    assert c.remaining_ms(RED) == expected_red_ms


# -- pause and resume -------------------------------------------------------------------------


def test_no_time_passes_while_paused_and_resume_continues_the_same_side(t):
    c = clock(t)
    c.start()
    t.advance(s=5)
    c.press(RED)
    t.advance(s=7)
    assert c.pause() == (Paused(BLACK),)
    assert c.pause() == ()
    assert (c.phase, c.running, c.deadline_ns()) == (Phase.PAUSED, None, None)
    t.advance(s=600)
    assert c.remaining_ms(BLACK) == 1_800_000 - 7_000
    assert c.resume() == (Resumed(BLACK),)
    assert c.resume() == ()
    assert c.running is BLACK
    t.advance(s=1)
    assert c.press(BLACK) == (Moved(BLACK, 8_000, 1),)


def test_pause_and_resume_before_start_do_nothing(t):
    c = clock(t)
    assert c.pause() == () and c.resume() == ()
    assert c.phase is Phase.IDLE


# -- the flag ---------------------------------------------------------------------------------


def test_flag_is_true_at_the_exact_instant_without_polling(t):
    c = clock(t, "10s")
    c.start()
    deadline = c.deadline_ns()
    t.ns = deadline - 1
    assert (c.flag, c.remaining_ms(RED), c.running) == (None, 1, RED)
    t.ns = deadline
    assert (c.flag, c.remaining_ms(RED), c.running, c.phase) == (RED, 0, None, Phase.FINISHED)
    t.advance(s=50)
    assert c.remaining_ms(RED) == 0  # never negative
    assert c.used_ms(RED) == 10_000  # time past the flag is not "used"


def test_press_after_zero_is_a_flag_not_a_move(t):
    c = clock(t, "10s")
    c.start()
    t.advance(s=10)
    assert c.press(RED) == (Flagged(RED),)
    assert c.moves(RED) == 0
    assert c.press(RED) == () and c.press(BLACK) == ()
    assert c.flag is RED


@pytest.mark.parametrize("call", ["pause", "resume", "start", "settle", "adjust", "press_black"])
def test_every_state_changing_call_materialises_the_flag_first(t, call):
    c = clock(t, "10s")
    c.start()
    t.advance(s=11)
    events = {
        "pause": c.pause,
        "resume": c.resume,
        "start": c.start,
        "settle": c.settle,
        "adjust": lambda: c.adjust(BLACK, 5000),
        "press_black": lambda: c.press(BLACK),
    }[call]()
    assert events == (Flagged(RED),)
    assert c.settle() == ()  # reported once
    assert c.snapshot()["phase"] == "finished"


def test_after_the_first_flag_nothing_runs_and_the_flag_is_kept(t):
    c = clock(t, "10s", black="20s")
    c.start()
    t.advance(s=2)
    c.press(RED)
    t.advance(s=20)
    assert c.settle() == (Flagged(BLACK),)
    t.advance(s=100)
    assert (c.flag, c.running, c.deadline_ns()) == (BLACK, None, None)
    assert c.remaining_ms(RED) == 8_000
    assert c.resume() == () and c.start() == () and c.adjust(RED, 1000) == ()
    assert c.remaining_ms(RED) == 8_000 and c.flag is BLACK


# -- whole games, exactness ------------------------------------------------------------------


def test_a_35_minute_game_in_microseconds(t):
    """Wulong 2015: 35 min + 5 s; 60 moves each, then black runs out."""
    c = clock(t, "35m+5s")
    c.start()
    log = []
    for move in range(60):
        t.advance(ms=31_000 + move)  # red thinks ~31 s
        log += c.press(RED)
        t.advance(ms=29_000 + 7 * move)
        log += c.press(BLACK)
    assert c.remaining_ms(RED) == 2_100_000 + 60 * 5_000 - sum(31_000 + m for m in range(60))
    black_left = 2_100_000 + 60 * 5_000 - sum(29_000 + 7 * m for m in range(60))
    assert c.remaining_ms(BLACK) == black_left
    t.advance(ms=1)
    c.press(RED)
    assert c.remaining_ms(BLACK) == black_left
    t.advance(ms=black_left)
    assert c.press(BLACK) == (Flagged(BLACK),)
    assert [e.move for e in log if isinstance(e, Moved) and e.side is RED] == list(range(1, 61))
    assert c.phase is Phase.FINISHED and c.flag is BLACK


def test_no_drift_after_hundreds_of_sub_millisecond_presses(t):
    c = clock(t, "1m")
    c.start()
    moved = []
    for _ in range(999):
        t.advance(ns=333_667)  # a third of a millisecond and a bit
        moved += c.press(RED)
        t.advance(ns=1)
        moved += c.press(BLACK)
    red_used = sum(e.used_ms for e in moved if e.side is RED)
    assert red_used == c.used_ms(RED) == (999 * 333_667) // MS
    assert c.remaining_ms(RED) + c.used_ms(RED) == 60_000
    assert c.remaining_ms(BLACK) == 60_000 - 0  # 999 ns in all: rounds up to the full minute
