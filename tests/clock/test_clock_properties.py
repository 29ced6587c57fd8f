"""Property tests: time conservation and the flag invariants for any sequence of operations."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.fake_time import MS, FakeTime

from clock_service import Adjusted, ClockError, Flagged, GameClock, Moved, Side, TimeControl

# Fischer and multi-period controls, where "base + increments" has a closed form.
CONTROLS = ["30m+5s", "10s+1s", "2s", "3/2s+500ms:1s+10ms", "2/1s:1/300ms+1ms", "1s+1ms"]

_op = st.one_of(
    st.tuples(st.just("advance"), st.integers(0, 3_000 * MS)),
    st.tuples(st.just("advance"), st.integers(0, 2 * MS)),  # sub-millisecond steps
    st.tuples(st.just("press"), st.sampled_from(list(Side))),
    st.tuples(st.just("press"), st.none()),  # the side on move presses: games get long
    st.tuples(st.just("press"), st.none()),
    st.tuples(st.just("press"), st.none()),
    st.tuples(st.just("pause"), st.none()),
    st.tuples(st.just("resume"), st.none()),
    st.tuples(st.just("start"), st.none()),
    st.tuples(st.just("adjust"), st.tuples(st.sampled_from(list(Side)), st.integers(-5000, 5000))),
    st.tuples(st.just("snapshot"), st.none()),
)


def credited_ms(tc: TimeControl, moves: int) -> int:
    """Independent closed form: base, each move's period increment, each new period's time."""
    total = tc.base_ms
    for done in range(moves):
        _, period = tc.period_for(done)
        total += period.increment_ms + tc.time_added_after(done + 1)
    return total


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(CONTROLS),
    st.sampled_from([None, *CONTROLS]),
    st.booleans(),
    st.lists(_op, min_size=30, max_size=150),
)
def test_time_conservation_and_flag_invariants(red_tc, black_tc, started_first, ops):
    t = FakeTime(5 * 10**15)
    tcs = {Side.RED: TimeControl.parse(red_tc)}
    tcs[Side.BLACK] = TimeControl.parse(black_tc) if black_tc else tcs[Side.RED]
    clock = GameClock(tcs[Side.RED], now=t, black=tcs[Side.BLACK])
    if started_first:
        clock.start()
    adjusted = {Side.RED: 0, Side.BLACK: 0}
    moved_ms = {Side.RED: 0, Side.BLACK: 0}
    flags = 0
    for op, arg in ops:
        events: tuple = ()
        flag_before = clock.flag
        if op == "advance":
            t.ns += arg
        elif op == "press":
            events = clock.press(arg or clock.side_on_move)
        elif op in ("pause", "resume", "start"):
            events = getattr(clock, op)()
        elif op == "adjust":
            try:
                events = clock.adjust(*arg)
            except ClockError:
                assert clock.remaining_ms(arg[0]) + arg[1] <= 0 or arg[1] < 0
        elif op == "snapshot":
            restored = GameClock.restore(clock.snapshot(), now=t)
            for side in Side:
                assert restored.remaining_ms(side) == clock.remaining_ms(side)
                assert restored.used_ms(side) == clock.used_ms(side)
                assert restored.moves(side) == clock.moves(side)
            assert restored.flag == clock.flag
        for event in events:
            if isinstance(event, Adjusted):
                adjusted[event.side] += event.delta_ms
            elif isinstance(event, Moved):
                moved_ms[event.side] += event.used_ms
                assert event.move == clock.moves(event.side)
                # the per-move figures add up exactly to the time used, no drift
                assert moved_ms[event.side] == clock.used_ms(event.side)
            elif isinstance(event, Flagged):
                flags += 1
                assert event.side == flag_before
        if events and isinstance(events[0], Flagged):
            assert events == (events[0],)  # a materialised flag is the only thing that happens
        for side in Side:
            remaining = clock.remaining_ms(side)
            assert remaining >= 0
            expected = credited_ms(tcs[side], clock.moves(side)) + adjusted[side]
            assert remaining + clock.used_ms(side) == expected, side
            assert (remaining == 0) == (clock.flag is side)
        assert flags <= 1
        if clock.flag is not None:
            assert clock.running is None and clock.deadline_ns() in (None, clock.deadline_ns())
    if clock.flag is not None:
        frozen = [clock.remaining_ms(s) for s in Side]
        t.ns += 10**12
        assert [clock.remaining_ms(s) for s in Side] == frozen


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["1m+d5s", "1m+b5s", "20s:3x5s", "10s+2s:2x3s"]), st.lists(_op, max_size=60))
def test_delay_and_byoyomi_budget_is_monotonic_and_flags_at_zero(tc, ops):
    """For delays and byo-yomi: a side's budget only drops while its own time runs."""
    t = FakeTime(5 * 10**15)
    clock = GameClock(TimeControl.parse(tc), now=t)
    for op, arg in ops:
        before = {s: clock.remaining_ms(s) for s in Side}
        running = clock.running
        if op == "advance":
            t.ns += arg
            for side in Side:
                if side is not running:
                    assert clock.remaining_ms(side) == before[side]
                else:
                    assert before[side] - clock.remaining_ms(side) <= -(-arg // MS)
        elif op == "press":
            clock.press(arg or clock.side_on_move)
        elif op in ("pause", "resume", "start"):
            getattr(clock, op)()
        for side in Side:
            assert clock.remaining_ms(side) >= 0
            assert (clock.remaining_ms(side) == 0) == (clock.flag is side)
