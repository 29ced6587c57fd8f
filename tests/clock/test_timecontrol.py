"""TimeControl: parsing every accepted form, the canonical round trip, every malformed input."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clock_service import Bonus, ByoYomi, Period, TimeControl

S, M, H = 1_000, 60_000, 3_600_000


@pytest.mark.parametrize(
    ("text", "periods", "byoyomi", "canonical"),
    [
        ("1800+5", [(None, 30 * M, 5 * S, Bonus.FISCHER)], None, "30m+5s"),
        ("300+0", [(None, 5 * M, 0, Bonus.FISCHER)], None, "5m"),
        ("600", [(None, 10 * M, 0, Bonus.FISCHER)], None, "10m"),
        (
            "40/5400+30:1800+30",
            [(40, 90 * M, 30 * S, Bonus.FISCHER), (None, 30 * M, 30 * S, Bonus.FISCHER)],
            None,
            "40/1h30m+30s:30m+30s",
        ),
        ("30m+5s", [(None, 30 * M, 5 * S, Bonus.FISCHER)], None, "30m+5s"),
        ("35m+5s", [(None, 35 * M, 5 * S, Bonus.FISCHER)], None, "35m+5s"),
        ("10m+3s", [(None, 10 * M, 3 * S, Bonus.FISCHER)], None, "10m+3s"),
        ("90m+30s", [(None, 90 * M, 30 * S, Bonus.FISCHER)], None, "1h30m+30s"),
        ("1h30m+30s", [(None, 90 * M, 30 * S, Bonus.FISCHER)], None, "1h30m+30s"),
        ("1H30M+30S", [(None, 90 * M, 30 * S, Bonus.FISCHER)], None, "1h30m+30s"),
        ("  6m  ", [(None, 6 * M, 0, Bonus.FISCHER)], None, "6m"),
        ("2s500ms+100ms", [(None, 2500, 100, Bonus.FISCHER)], None, "2s500ms+100ms"),
        ("30m+d5s", [(None, 30 * M, 5 * S, Bonus.SIMPLE_DELAY)], None, "30m+d5s"),
        ("30m+b5s", [(None, 30 * M, 5 * S, Bonus.BRONSTEIN)], None, "30m+b5s"),
        ("1800+d5", [(None, 30 * M, 5 * S, Bonus.SIMPLE_DELAY)], None, "30m+d5s"),
        ("30m:3x30s", [(None, 30 * M, 0, Bonus.FISCHER)], (3, 30 * S), "30m:3x30s"),
        ("1h:1x60s", [(None, H, 0, Bonus.FISCHER)], (1, M), "1h:1x1m"),
        ("40/2h", [(40, 2 * H, 0, Bonus.FISCHER)], None, "40/2h"),
        (
            "40/2h:20/1h:30m+d5s:5x1m",
            [
                (40, 2 * H, 0, Bonus.FISCHER),
                (20, H, 0, Bonus.FISCHER),
                (None, 30 * M, 5 * S, Bonus.SIMPLE_DELAY),
            ],
            (5, M),
            "40/2h:20/1h:30m+d5s:5x1m",
        ),
    ],
)
def test_parse_accepted_forms(text, periods, byoyomi, canonical):
    tc = TimeControl.parse(text)
    got = [(p.moves, p.time_ms, p.bonus_ms, p.bonus) for p in tc.periods]
    assert got == periods
    assert (None if tc.byoyomi is None else (tc.byoyomi.periods, tc.byoyomi.period_ms)) == byoyomi
    assert str(tc) == canonical
    assert TimeControl.parse(canonical) == tc
    assert repr(tc) == f"TimeControl({canonical!r})"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("30q", "unknown unit 'q' (use h, m, s or ms) at position 3"),
        ("30m+5y", "unknown unit 'y'"),
        ("m+5s", "expected the period's time (a number), found 'm' at position 1"),
        ("30m+", "expected an increment or delay after '+' (a number), found 'the end'"),
        ("30m+s", "expected an increment or delay after '+' (a number), found 's'"),
        ("+5s", "expected the period's time"),
        ("0+5", "the period's time must be positive at position 1"),
        ("0m", "the period's time must be positive"),
        ("-5m", "negative times are not allowed at position 1"),
        ("30m-5s", "negative times are not allowed"),
        ("30m+-5s", "a negative increment or delay is not allowed at position 5"),
        ("30m+d0s", "a delay must be positive at position 6"),
        ("30m:", "nothing after the trailing ':' at position 4"),
        ("40/90m:", "nothing after the trailing ':'"),
        ("40/", "expected the period's time (a number), found 'the end' at position 4"),
        ("0/30m", "a period's move count must be positive at position 1"),
        ("30m:30m", "a period follows one without a move count"),
        ("3x30s", "byo-yomi needs a main time before it"),
        ("30m:0x30s", "the byo-yomi period count must be positive at position 5"),
        ("30m:3x0s", "the byo-yomi period time must be positive"),
        ("30m:3x", "expected the byo-yomi period time (a number), found 'the end' at position 7"),
        ("30m:3xs", "expected the byo-yomi period time (a number), found 's'"),
        ("30x", "unknown unit 'x' (use h, m, s or ms) at position 3"),
        ("30m:3x30s:5m", "byo-yomi must be the last part at position 11"),
        ("1m1h", "unit 'h' repeated or out of order at position 4"),
        ("1m1m", "unit 'm' repeated or out of order"),
        ("30m5", "the number 5 has no unit at position 4"),
        ("30m 5s", "unexpected ' ' at position 4"),
        ("30m+5s+5s", "unexpected '+' at position 7"),
        ("30m,5s", "unexpected ','"),
    ],
)
def test_parse_rejects_malformed(text, message):
    with pytest.raises(ValueError) as info:
        TimeControl.parse(text)
    assert message in str(info.value)
    assert repr(text) in str(info.value)  # the error quotes the text it refers to


def test_parse_rejects_non_text():
    with pytest.raises(ValueError, match="must be text"):
        TimeControl.parse(1800)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "canonical"),
    [
        ({"base_ms": 30 * M, "increment_ms": 5 * S}, "30m+5s"),
        ({"base_ms": 30 * M, "delay_ms": 5 * S}, "30m+d5s"),
        ({"base_ms": 30 * M, "bronstein_ms": 5 * S}, "30m+b5s"),
        ({"base_ms": 30 * M, "byoyomi_periods": 3, "byoyomi_ms": 30 * S}, "30m:3x30s"),
        ({"base_ms": 6 * M}, "6m"),
    ],
)
def test_from_ms(kwargs, canonical):
    tc = TimeControl.from_ms(**kwargs)
    assert str(tc) == canonical
    assert tc == TimeControl.parse(canonical)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_ms": 0}, "period time must be positive"),
        ({"base_ms": -1}, "period time must be positive"),
        ({"base_ms": 1.5}, "must be an int of milliseconds"),
        ({"base_ms": True}, "must be an int of milliseconds"),
        ({"base_ms": M, "increment_ms": -1}, "fischer bonus must be zero or more"),
        ({"base_ms": M, "increment_ms": 1, "delay_ms": 1}, "at most one of"),
        ({"base_ms": M, "byoyomi_periods": 3}, "byo-yomi period time must be positive"),
        ({"base_ms": M, "byoyomi_ms": 3}, "byo-yomi period count must be positive"),
    ],
)
def test_from_ms_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TimeControl.from_ms(**kwargs)


def test_from_ms_is_keyword_only():
    with pytest.raises(TypeError):
        TimeControl.from_ms(1800_000)  # type: ignore[misc]


def test_direct_construction_is_validated():
    with pytest.raises(ValueError, match="at least one period"):
        TimeControl(())
    with pytest.raises(ValueError, match="period 1 is for the rest of the game"):
        TimeControl((Period(M), Period(M)))
    with pytest.raises(ValueError, match="period move count must be positive"):
        Period(M, moves=0)


def test_frozen_and_hashable():
    tc = TimeControl.parse("30m+5s")
    with pytest.raises(dataclasses.FrozenInstanceError):
        tc.byoyomi = None  # type: ignore[misc]
    assert {tc, TimeControl.parse("1800+5")} == {tc}


def test_accessors():
    tc = TimeControl.parse("40/5400+30:1800+30")
    assert (tc.base_ms, tc.increment_ms, tc.delay_ms) == (90 * M, 30 * S, 0)
    assert TimeControl.parse("30m+b5s").delay_ms == 5 * S
    assert TimeControl.parse("30m+b5s").increment_ms == 0


@pytest.mark.parametrize(
    ("text", "moves", "period", "added"),
    [
        ("40/90m+30s:30m+30s", 0, 0, 0),
        ("40/90m+30s:30m+30s", 39, 0, 0),
        ("40/90m+30s:30m+30s", 40, 1, 30 * M),
        ("40/90m+30s:30m+30s", 41, 1, 0),
        ("40/90m+30s:30m+30s", 80, 1, 0),
        ("40/2h:20/1h", 60, 1, H),  # the last period with a move count repeats
        ("40/2h:20/1h", 80, 1, H),
        ("40/2h:20/1h", 81, 1, 0),
        ("30m+5s", 500, 0, 0),
    ],
)
def test_period_schedule(text, moves, period, added):
    tc = TimeControl.parse(text)
    assert tc.period_for(moves)[0] == period
    assert tc.time_added_after(moves) == added


@pytest.mark.parametrize(
    ("text", "pgn"),
    [("30m+5s", "1800+5"), ("40/90m+30s:30m+30s", "40/5400+30:1800+30"), ("10m", "600")],
)
def test_pgn_form(text, pgn):
    assert TimeControl.parse(text).pgn() == pgn
    assert TimeControl.parse(pgn) == TimeControl.parse(text)


@pytest.mark.parametrize("text", ["30m+d5s", "30m:3x30s", "1s500ms"])
def test_pgn_form_refused_when_not_expressible(text):
    with pytest.raises(ValueError, match="has no PGN form"):
        TimeControl.parse(text).pgn()


_ms = st.integers(min_value=1, max_value=10 * 3_600_000)
_bonus = st.sampled_from(list(Bonus))


@st.composite
def time_controls(draw: st.DrawFn) -> TimeControl:
    count = draw(st.integers(min_value=1, max_value=4))
    periods = []
    for index in range(count):
        bonus = draw(_bonus)
        low = 0 if bonus is Bonus.FISCHER else 1
        last = index == count - 1
        moves = draw(st.none() | st.integers(1, 200)) if last else draw(st.integers(1, 200))
        periods.append(
            Period(
                time_ms=draw(_ms),
                moves=moves,
                bonus_ms=draw(st.integers(low, 600_000)),
                bonus=bonus,
            )
        )
    byoyomi = draw(st.none() | st.builds(ByoYomi, st.integers(1, 20), _ms))
    return TimeControl(tuple(periods), byoyomi)


@given(time_controls())
def test_round_trip(tc):
    text = str(tc)
    assert TimeControl.parse(text) == tc
    assert str(TimeControl.parse(text)) == text
