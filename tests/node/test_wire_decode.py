"""``decode`` takes pydantic's JSON parser first (issue 30) and falls back to ``json.loads`` and
validating the objects, the path it always had. The fast path must accept nothing the old one
refuses, and give the same model when both accept: checked on events, statuses and states whose
fields are swapped for any JSON value (hypothesis), and on the edge cases of each parser."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from wire_contract.messages import BoardStatus, EventEnvelope, StateSnapshot, WireError, decode

EVENT = {
    "v": 1,
    "board": "12",
    "node": "pi-06",
    "game": "r7-b12",
    "session": 3,
    "seq": 118,
    "ts": 1_481_333_462_123,
    "type": "move",
    "replay": False,
    "clock": {"red_ms": 1_000_000, "black_ms": 998_000, "running": "black"},
    "data": {"side": "red", "used_ms": 1234, "move": 7},
}
STATUS = {"state": "online", "node": "pi-06", "session": 3, "ts": 1_481_333_462_123, "conn": 5}


def old_decode(model: type[BaseModel], raw: bytes) -> Any:
    """What ``decode`` did before its fast path (after the byte bounds)."""
    obj = json.loads(raw)
    if not isinstance(obj, dict):
        raise ValueError("not an object")
    return model.model_validate(obj)


def outcome(fn: Any, *args: Any) -> tuple[bool, Any]:
    try:
        return True, fn(*args)
    except (WireError, ValueError, ValidationError, UnicodeDecodeError):
        return False, None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)  # fmt: skip


def _with(base: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(base))
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


PATHS = [(k,) for k in EVENT] + [("clock", k) for k in EVENT["clock"]] + [
    ("data", k) for k in EVENT["data"]
]


@settings(max_examples=400, deadline=None)
@given(path=st.sampled_from(PATHS), value=json_values)
def test_a_changed_event_field_is_judged_as_before(path: tuple[str, ...], value: Any) -> None:
    raw = json.dumps(_with(EVENT, path, value)).encode()
    now, old = outcome(decode, EventEnvelope, raw), outcome(old_decode, EventEnvelope, raw)
    assert now[0] == old[0], (path, value)
    if now[0]:
        assert now[1] == old[1]


@settings(max_examples=200, deadline=None)
@given(key=st.sampled_from(list(STATUS)), value=json_values)
def test_a_changed_status_field_is_judged_as_before(key: str, value: Any) -> None:
    raw = json.dumps({**STATUS, key: value}).encode()
    now, old = outcome(decode, BoardStatus, raw), outcome(old_decode, BoardStatus, raw)
    assert now[0] == old[0], (key, value)
    if now[0]:
        assert now[1] == old[1]


@pytest.mark.parametrize(
    "raw",
    [
        b'{"state": "online", "node": "pi-06", "session": 3, "ts": NaN}',
        b'{"state": "online", "node": "pi-\\ud800", "session": 3, "ts": 1}',  # a lone surrogate
        b'{"state": "online", "node": "pi-06", "session": 3, "ts": 1, "ts": 2}',  # a key twice
        '{"state": "online", "node": "pi-06", "session": 3, "ts": 1}'.encode("utf-16"),
        b'\xef\xbb\xbf{"state": "online", "node": "pi-06", "session": 3, "ts": 1}',  # a BOM
        b'{"state": "online", "node": "pi-06", "session": 3.0, "ts": 1}',
        b'{"state": "online", "node": "pi-06", "session": true, "ts": 1}',
        b'{"state": "online", "node": "pi-06", "session": "3", "ts": 1}',
        b'{"state": "online", "node": "pi-06", "session": 3, "ts": 1} trailing',
        b"[1]",
        b"",
    ],
)
def test_the_parsers_edge_cases_are_judged_as_before(raw: bytes) -> None:
    now, old = outcome(decode, BoardStatus, raw), outcome(old_decode, BoardStatus, raw)
    assert now[0] == old[0]
    if now[0]:
        assert now[1] == old[1]


def test_a_state_snapshot_decodes_the_same_both_ways() -> None:
    state = {
        "v": 1, "board": "12", "node": "pi-06", "session": 3, "seq": 118, "ts": 1,
        "game": "r7-b12", "tc": "30m+5s", "phase": "running", "running": "red",
        "red_ms": 1, "black_ms": 2, "moves": {"red": 1, "black": 0}, "flag": None,
        "fouls": {"red": 0, "black": 1}, "pending": [{"kind": "pause"}],
    }  # fmt: skip
    raw = json.dumps(state).encode()
    now, old = outcome(decode, StateSnapshot, raw), outcome(old_decode, StateSnapshot, raw)
    assert now[0] and now == old
