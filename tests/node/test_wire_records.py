"""The game record on the wire (issue 29): its topic, its bounds, and that the longest record the
contract allows, every clock at its widest, still fits the payload bound."""

from __future__ import annotations

import json

import pytest

from clock_service.xiangqi import START_FEN
from wire_contract.bounds import MAX_CLOCK_MS, MAX_PAYLOAD_BYTES, MAX_RECORD_PLIES
from wire_contract.messages import Topics, WireError, decode, encode, parse_topic
from wire_contract.records import GameRecord


def record(**kw: object) -> dict[str, object]:
    body: dict[str, object] = {
        "v": 1, "board": "1", "game": "r1-b1", "round": 1, "start_fen": START_FEN,
        "moves": ["h2e2", "h9g7"], "clocks": [{"used": 1000, "left": 1_799_000}, None],
        "ts": 1_700_000_000_000,
    }  # fmt: skip
    body.update(kw)
    return body


def test_the_topic_is_the_stations_and_parses_back() -> None:
    topic = Topics("va").station_record("7")
    assert topic == "qz/v1/va/station/record/7"
    parsed = parse_topic(topic)
    assert (parsed.venue, parsed.kind, parsed.leaf, parsed.board) == (
        "va",
        "station",
        "record",
        "7",
    )
    for bad in ("qz/v1/va/station/record", "qz/v1/va/station/record/a.b", "qz/v1/va/station/x/1"):
        with pytest.raises(WireError):
            parse_topic(bad)


def test_the_longest_record_fits_the_payload_bound() -> None:
    widest = {"used": MAX_CLOCK_MS, "left": MAX_CLOCK_MS}
    body = record(moves=["h2e2"] * MAX_RECORD_PLIES, clocks=[widest] * MAX_RECORD_PLIES)
    payload = encode(GameRecord.model_validate(body))
    assert len(payload) < MAX_PAYLOAD_BYTES, len(payload)
    assert decode(GameRecord, payload).moves == ["h2e2"] * MAX_RECORD_PLIES


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"moves": ["h2e2"] * (MAX_RECORD_PLIES + 1), "clocks": [None] * (MAX_RECORD_PLIES + 1)},
         "moves"),
        ({"moves": ["h2e2"], "clocks": []}, "clocks"),  # one clock per move
        ({"moves": ["h2e"], "clocks": [None]}, "moves"),
        ({"moves": ["z2e2"], "clocks": [None]}, "moves"),
        ({"clocks": [{"used": MAX_CLOCK_MS + 1, "left": 0}, None]}, "clocks"),
        ({"start_fen": "x" * 101}, "start_fen"),
        ({"start_fen": "rnbakabnr\n"}, "start_fen"),
        ({"board": "../1"}, "board"),
        ({"round": 1000}, "round"),
        ({"extra": 1}, "extra"),
    ],
)  # fmt: skip
def test_a_record_out_of_bounds_is_refused_naming_the_field(
    change: dict[str, object], where: str
) -> None:
    with pytest.raises(WireError, match=where):
        decode(GameRecord, json.dumps(record(**change)))
