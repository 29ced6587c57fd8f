"""GameClock rules, one table or test per rule, under a fake monotonic time source."""

from __future__ import annotations

import json

import pytest

from clock_service import (
    Adjusted,
    ClockError,
    Flagged,
    GameClock,
    Moved,
    Paused,
    Phase,
    Resumed,
    Side,
    Started,
    TimeControl,
)

RED, BLACK = Side.RED, Side.BLACK
MS, S = 1_000_000, 1_000_000_000  # in ns


class FakeTime:
    """A monotonic ns source the test moves by hand."""

    def __init__(self, start: int = 10**12) -> None:
        self.ns = start

    def __call__(self) -> int:
        return self.ns

    def advance(self, ns: int = 0, *, ms: int = 0, s: int = 0) -> None:
        self.ns += ns + ms * MS + s * S


@pytest.fixture
def t() -> FakeTime:
    return FakeTime()


def clock(t: FakeTime, tc: str = "30m+5s", black: str | None = None) -> GameClock:
    return GameClock(
        TimeControl.parse(tc), now=t, black=None if black is None else TimeControl.parse(black)
    )


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


# -- snapshot and restore --------------------------------------------------------------------


def test_snapshot_is_plain_json_and_restores_paused_by_default(t):
    c = clock(t, "40/90m+30s:30m+30s", black="1h")
    c.start()
    t.advance(ms=1500)
    c.press(RED)
    t.advance(ms=700)
    snap = c.snapshot()
    assert json.loads(json.dumps(snap)) == snap and snap["v"] == 1
    assert snap["phase"] == "running" and snap["black_tc"] == "1h"
    t.advance(s=1000)  # power is off for a while
    restored = GameClock.restore(json.loads(json.dumps(snap)), now=t)
    assert (restored.phase, restored.side_on_move) == (Phase.PAUSED, BLACK)
    assert restored.remaining_ms(BLACK) == 3_600_000 - 700
    assert restored.remaining_ms(RED) == c.remaining_ms(RED)
    assert restored.resume() == (Resumed(BLACK),)
    t.advance(ms=300)
    assert restored.press(BLACK) == (Moved(BLACK, 1000, 1),)


def test_restore_running_on_request(t):
    c = clock(t)
    c.start()
    t.advance(s=3)
    restored = GameClock.restore(c.snapshot(), now=t, resume=True)
    assert restored.running is RED
    t.advance(s=1)
    assert restored.remaining_ms(RED) == 1_800_000 - 4_000


def test_restore_a_finished_clock_and_a_fresh_one(t):
    c = clock(t, "1s")
    assert GameClock.restore(c.snapshot(), now=t).phase is Phase.IDLE
    c.start()
    t.advance(s=2)
    snap = c.snapshot()  # the flag is derived, not yet settled: the snapshot says so anyway
    assert (snap["phase"], snap["flag"]) == ("finished", "red")
    restored = GameClock.restore(snap, now=t)
    assert (restored.flag, restored.phase, restored.settle()) == (RED, Phase.FINISHED, ())


def _mutated(t, path, value):
    c = clock(t, "30m:3x30s")
    c.start()
    t.advance(s=1)
    snap = c.snapshot()
    target = snap
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return snap


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "error"),
    [
        (("v",), 2, "snapshot 'v': version 2 is not 1"),
        (("tc",), "30x", "snapshot 'tc': time control '30x'"),
        (("tc",), 30, "snapshot 'tc': bad value 30"),
        (("phase",), "flying", "snapshot 'phase': bad value 'flying'"),
        (("side_on_move",), "white", "snapshot 'side_on_move'"),
        (("flag",), "red", "'flag' must be set exactly when 'phase' is 'finished'"),
        (("started",), 1, "snapshot 'started'"),
        (("extra",), 1, "unknown \\['extra'\\]"),
        (("flag",), _DELETE, "missing \\['flag'\\]"),
        (("red", "main_ns"), -1, "snapshot red.main_ns: must be a non-negative int"),
        (("red", "moves"), "3", "snapshot red.moves"),
        (("black", "used_ns"), True, "snapshot black.used_ns"),
        (("black", "turn_ns"), 5, "black.turn_ns: is more than used_ns"),
        (("red", "periods"), 4, "byo-yomi state does not fit"),
        (("red", "bogus"), 4, "snapshot 'red': must be a mapping with exactly the keys"),
        (("black",), [], "snapshot 'black': must be a mapping"),
    ],
)
def test_restore_rejects_malformed(t, path, value, error):
    with pytest.raises(ValueError, match=error):
        GameClock.restore(_mutated(t, path, value), now=t)


def test_restore_rejects_no_time_without_flag(t):
    snap = _mutated(t, ("black", "main_ns"), 0)
    snap["black"]["periods"] = 0
    with pytest.raises(ValueError, match="snapshot black: no time left but no flag"):
        GameClock.restore(snap, now=t)
    with pytest.raises(ValueError, match="must be a mapping"):
        GameClock.restore([], now=t)  # type: ignore[arg-type]


# -- events, construction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "type_", "data", "text"),
    [
        (Started(RED), "started", {"side_on_move": "red"}, "<started side_on_move=red>"),
        (Moved(RED, 8123, 21), "move", {"side": "red", "used_ms": 8123, "move": 21},
         "<move side=red used_ms=8123 move=21>"),
        (Paused(BLACK), "paused", {"side_on_move": "black"}, "<paused side_on_move=black>"),
        (Resumed(BLACK), "resumed", {"side_on_move": "black"}, "<resumed side_on_move=black>"),
        (Flagged(RED), "flag", {"side": "red"}, "<flag side=red>"),
        (Adjusted(BLACK, -5000), "adjusted", {"side": "black", "delta_ms": -5000},
         "<adjusted side=black delta_ms=-5000>"),
    ],
)  # fmt: skip
def test_event_types_match_the_wire(event, type_, data, text):
    assert (event.type, event.data(), repr(event)) == (type_, data, text)


def test_constructor_validates(t):
    with pytest.raises(TypeError, match="tc must be a TimeControl"):
        GameClock("30m+5s", now=t)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="now must be a callable"):
        GameClock(TimeControl.parse("30m"), now=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        GameClock(TimeControl.parse("30m"), t)  # type: ignore[misc]


def test_repr_is_readable(t):
    c = clock(t, "6m", black="4m")
    assert repr(c) == (
        "<GameClock idle on_move=red flag=None red=360000ms/0 black=240000ms/0 tc=6m black_tc=4m>"
    )


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
