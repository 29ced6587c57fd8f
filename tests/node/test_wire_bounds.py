"""The wire contract's bounds (issue 12, docs/wire.md "Bounds"): every message that breaks one is a
``WireError`` naming it — never a RecursionError, an OverflowError or an unbounded parse."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from wire_contract import bounds
from wire_contract.messages import (
    BoardStatus,
    Command,
    EventEnvelope,
    StateSnapshot,
    WireError,
    decode,
    parse_command,
    txn_of,
)


def event(**over: Any) -> dict[str, Any]:
    ev: dict[str, Any] = {
        "v": 1,
        "board": "5",
        "node": "node-c",
        "game": "r1-b5",
        "session": 1,
        "seq": 1,
        "ts": time.time_ns() // 1_000_000,
        "type": "move",
        "replay": False,
        "clock": {"red_ms": 1_800_000, "black_ms": 1_800_000, "running": "black"},
        "data": {"side": "red", "used_ms": 1000, "move": 1},
    }
    ev.update(over)
    return ev


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("model", [EventEnvelope, StateSnapshot, BoardStatus, Command])
def test_ten_kilobytes_of_nested_arrays_is_a_wire_error_not_a_recursion(model: Any) -> None:
    with pytest.raises(WireError, match="nested deeper"):
        decode(model, nested(5000))


def test_deep_nesting_inside_an_object_is_refused_before_parsing() -> None:
    payload = json.dumps(event()).encode()[:-1] + b', "x": ' + nested(20) + b"}"
    with pytest.raises(WireError, match="nested deeper"):
        decode(EventEnvelope, payload)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"a": "[[[[[[[[[[{{{{{{{{{{\\\"[[[[[[", "b": [[1]]}).encode()
    assert bounds.json_depth(text) == 3
    bounds.check_payload(text)


def test_nesting_at_the_bound_parses_and_one_past_it_does_not() -> None:
    bounds.check_payload(nested(bounds.MAX_JSON_DEPTH))
    with pytest.raises(bounds.PayloadBoundError):
        bounds.check_payload(nested(bounds.MAX_JSON_DEPTH + 1))


def test_a_payload_over_the_size_bound_is_refused_before_parsing() -> None:
    ok = json.dumps(event()).encode()
    decode(EventEnvelope, ok)
    big = ok[:-1] + b', "pad": "' + b"x" * bounds.MAX_PAYLOAD_BYTES + b'"}'
    with pytest.raises(WireError, match=f"over the {bounds.MAX_PAYLOAD_BYTES}-byte bound"):
        decode(EventEnvelope, big)


def test_a_deep_command_gets_no_txn_but_no_crash() -> None:
    assert txn_of(nested(5000)) is None
    with pytest.raises(WireError):
        parse_command(nested(5000))


@pytest.mark.parametrize("field", ["seq", "session", "ts"])
@pytest.mark.parametrize("value", [2**53, 2**63, 10**30])
def test_integers_past_the_safe_range_are_refused(field: str, value: int) -> None:
    with pytest.raises(WireError, match=field):
        decode(EventEnvelope, json.dumps(event(**{field: value})))


def test_the_largest_safe_integer_is_accepted() -> None:
    ev = decode(EventEnvelope, json.dumps(event(seq=2**53 - 1, session=2**53 - 1)))
    assert ev.seq == 2**53 - 1


@pytest.mark.parametrize(
    ("over", "where"),
    [
        ({"game": "g" * 65}, "game"),
        ({"clock": {"red_ms": 10**15, "black_ms": 0, "running": None}}, "red_ms"),
        (
            {"type": "foul", "data": {"side": "red", "reason": "x" * 65, "status": "pending",
                                      "count": 0}},
            "reason",
        ),
        (
            {"type": "foul", "data": {"side": "red", "reason": "pause\x1b[2J", "status": "pending",
                                      "count": 0}},
            "reason",
        ),
        (
            {"type": "warning", "data": {"reason": "battery_low", "detail": "d" * 257}},
            "detail",
        ),
        (
            {"type": "result", "data": {"winner": "red", "reason": "resign", "ref": 2**63}},
            "ref",
        ),
        ({"txn": "t" * 65}, "txn"),
    ],
)  # fmt: skip
def test_strings_and_integers_of_an_event_are_bounded(over: dict[str, Any], where: str) -> None:
    with pytest.raises(WireError, match=where):
        decode(EventEnvelope, json.dumps(event(**over)))


def test_a_game_of_exactly_64_characters_is_accepted() -> None:
    assert decode(EventEnvelope, json.dumps(event(game="g" * 64))).game == "g" * 64


def test_a_command_names_limits_are_bounded() -> None:
    with pytest.raises(WireError, match="red"):
        parse_command(
            json.dumps(
                {"txn": "t1", "cmd": "set_game", "args": {"game": "g", "tc": "30m+5s",
                                                           "red": "n" * 65}}
            )
        )  # fmt: skip
