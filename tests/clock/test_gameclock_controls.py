"""GameClock under the arbiter's hand and the time controls beyond Fischer: adjustments,
delays and byo-yomi, a separate control for black, the carry-over to a spare clock.
"""

from __future__ import annotations

import pytest
from support.fake_time import MS, clock

from clock_service import (
    Adjusted,
    ClockError,
    Flagged,
    GameClock,
    Moved,
    Phase,
    Resumed,
    Side,
    Started,
    TimeControl,
)

RED, BLACK = Side.RED, Side.BLACK

# -- arbiter adjustments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("running", "side", "delta", "expected"),
    [
        (True, RED, 60_000, 1_800_000 - 3_000 + 60_000),
        (True, RED, -60_000, 1_800_000 - 3_000 - 60_000),
        (True, BLACK, 1, 1_800_001),
        (False, BLACK, -1_799_999, 1),
    ],
)
def test_adjust_table(t, running, side, delta, expected):
    c = clock(t)
    c.start()
    t.advance(s=3)
    if not running:
        c.pause()
    assert c.adjust(side, delta) == (Adjusted(side, delta),)
    assert c.remaining_ms(side) == expected
    if running and side is RED:
        assert c.deadline_ns() == t.ns + expected * MS
    assert c.adjust(side, 0) == ()


@pytest.mark.parametrize(
    ("side", "delta", "error"),
    [
        (RED, -1_797_000, "would leave it no time"),
        (BLACK, -1_800_001, "would leave it no time"),
        (RED, 1.5, "delta_ms must be an int"),
        (RED, True, "delta_ms must be an int"),
        ("red", 1000, "side must be a Side"),
    ],
)
def test_adjust_rejected_changes_nothing(t, side, delta, error):
    c = clock(t)
    c.start()
    t.advance(s=3)
    before = c.snapshot()
    with pytest.raises(ClockError, match=error):
        c.adjust(side, delta)
    assert c.snapshot() == before


# -- delays and byo-yomi ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tc", "turn_ms", "main_after_ms"),
    [
        ("1m+d5s", 3_000, 60_000),  # inside the delay: no time consumed
        ("1m+d5s", 5_000, 60_000),
        ("1m+d5s", 8_000, 57_000),  # only what exceeds the delay
        ("1m+b5s", 3_000, 60_000),  # Bronstein: refund of the time used...
        ("1m+b5s", 8_000, 57_000),  # ...up to the delay
        ("1m+5s", 3_000, 62_000),  # Fischer for comparison
    ],
)
def test_delay_table(t, tc, turn_ms, main_after_ms):
    c = clock(t, tc)
    c.start()
    t.advance(ms=turn_ms)
    c.press(RED)
    assert c.reading(RED).main_ms == main_after_ms
    assert c.remaining_ms(RED) == main_after_ms  # no delay banked for the side not on move


def test_simple_delay_shows_main_time_still_during_the_delay_and_flags_after_delay_plus_main(t):
    c = clock(t, "10s+d5s")
    c.start()
    assert c.remaining_ms(RED) == 15_000  # time until the flag
    t.advance(s=3)
    r = c.reading(RED)
    assert (r.main_ms, r.delay_ms) == (10_000, 2_000)
    t.advance(s=3)
    assert (c.reading(RED).main_ms, c.reading(RED).delay_ms) == (9_000, 0)
    t.advance(s=9)
    assert c.flag is RED


def test_bronstein_flags_when_main_time_runs_out(t):
    c = clock(t, "10s+b5s")
    c.start()
    assert c.remaining_ms(RED) == 10_000
    t.advance(s=10)
    assert c.flag is RED


def test_byoyomi_periods(t):
    c = clock(t, "10s:3x5s")
    c.start()
    assert c.remaining_ms(RED) == 25_000
    t.advance(s=12)  # main spent, 2 s into the first period
    r = c.reading(RED)
    assert (r.main_ms, r.periods, r.period_ms, r.in_byoyomi) == (0, 3, 3_000, True)
    c.press(RED)  # inside the period: it is kept, and full again next turn
    assert c.reading(RED).periods == 3 and c.reading(RED).period_ms == 5_000
    c.press(BLACK)
    t.advance(s=7)  # one period lost, 2 s into the next
    assert (c.reading(RED).periods, c.reading(RED).period_ms) == (2, 3_000)
    c.press(RED)
    c.press(BLACK)
    assert c.remaining_ms(RED) == 10_000
    t.advance(ms=9_999)
    assert c.flag is None
    t.advance(ns=MS)
    assert c.flag is RED and c.settle() == (Flagged(RED),)


def test_adding_time_in_byoyomi_returns_to_main_time_and_keeps_the_periods(t):
    c = clock(t, "10s:3x5s")
    c.start()
    t.advance(s=12)
    with pytest.raises(ClockError, match="no time"):
        c.adjust(RED, -1000)  # nothing left of the main time to remove
    c.adjust(RED, 30_000)
    r = c.reading(RED)
    assert (r.main_ms, r.periods, r.period_ms) == (30_000, 3, 3_000)


# -- separate control for black, carry-over --------------------------------------------------


def test_armageddon_separate_time_controls(t):
    c = clock(t, "6m", black="4m")
    assert (c.remaining_ms(RED), c.remaining_ms(BLACK)) == (360_000, 240_000)
    assert str(c.black_tc) == "4m" and str(c.tc) == "6m"
    assert str(clock(t).black_tc) == "30m+5s"


def test_carry_over_to_a_spare_clock(t):
    c = GameClock.carry_over(
        TimeControl.parse("30m+5s"),
        now=t,
        red_ms=1_234_567,
        black_ms=987_654,
        moves_red=21,
        moves_black=20,
        side_on_move=BLACK,
    )
    assert (c.phase, c.running, c.side_on_move) == (Phase.PAUSED, None, BLACK)
    assert (c.remaining_ms(RED), c.remaining_ms(BLACK)) == (1_234_567, 987_654)
    t.advance(s=100)
    assert c.start() == (Started(BLACK),)
    t.advance(s=4)
    assert c.press(BLACK) == (Moved(BLACK, 4_000, 21),)
    assert c.remaining_ms(BLACK) == 987_654 + 1_000


def test_carry_over_can_also_be_resumed(t):
    c = GameClock.carry_over(
        TimeControl.parse("30m"), now=t, red_ms=5, black_ms=5, moves_red=0, moves_black=0,
        side_on_move=RED,
    )  # fmt: skip
    assert c.resume() == (Resumed(RED),)
    assert c.start() == ()


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"red_ms": 0, "red_periods": 0}, "red would have no time left"),
        ({"black_ms": -5}, "black_ms must be at least 0"),
        ({"moves_red": -1}, "moves_red must be at least 0"),
        ({"red_ms": 1.0}, "red_ms must be an int"),
        ({"side_on_move": "red"}, "side_on_move must be a Side"),
        ({"red_periods": 4}, "red_periods must be at most 3"),
    ],
)
def test_carry_over_rejects(t, kwargs, error):
    args = dict(red_ms=1000, black_ms=1000, moves_red=3, moves_black=3, side_on_move=RED)
    with pytest.raises(ClockError, match=error):
        GameClock.carry_over(TimeControl.parse("30m:3x30s"), now=t, **(args | kwargs))


def test_carry_over_in_byoyomi(t):
    c = GameClock.carry_over(
        TimeControl.parse("30m:3x30s"), now=t, red_ms=0, black_ms=1000, moves_red=3,
        moves_black=3, side_on_move=RED, red_periods=1,
    )  # fmt: skip
    assert c.remaining_ms(RED) == 30_000
