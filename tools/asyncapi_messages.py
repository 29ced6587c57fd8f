"""``components/messages`` of ``docs/asyncapi.yaml``: each message's summary and examples.

The examples are whole payloads a receiver accepts; ``tests/node/test_asyncapi_contract.py``
runs them through both the document's schemas and the pydantic models.
"""

from __future__ import annotations

from typing import Any

from asyncapi_schemas import ref

from wire_contract import messages as wire

# -- examples ------------------------------------------------------------------------------------
_CLOCK = {"red_ms": 1712345, "black_ms": 1598000, "running": "black"}
_ENVELOPE = {
    "v": 1,
    "board": "12",
    "node": "pi-06",
    "game": "r7-b12",
    "session": 3,
    "seq": 119,
    "ts": 1481333462123,
    "replay": False,
    "clock": _CLOCK,
}
EVENT_EXAMPLES: dict[str, dict[str, Any]] = {
    "ready": {"game": "r7-b12", "tc": "30m+5s", "red": "Wang", "black": "Lü"},
    "started": {"side_on_move": "red"},
    "move": {"side": "red", "used_ms": 8123, "move": 21},
    "paused": {"by": "board", "side_on_move": "black"},
    "resumed": {"side_on_move": "black"},
    "flag": {"side": "black"},
    "foul": {"side": "red", "reason": "board_pause", "status": "pending", "count": 1},
    "forfeit": {"side": "red", "reason": "fouls", "status": "pending"},
    "shutdown": {
        "cause": "node_restart",
        "duration_ms": 42000,
        "side_on_move": "black",
        "authorised": False,
    },
    "late": {"side": "black"},
    "adjusted": {"side": "red", "delta_ms": -60000, "by": "arbiter"},
    "result": {"winner": "red", "reason": "flag", "status": "pending", "ref": 140},
    "move_count": {"status": "started", "limit": 60},
    "warning": {"reason": "outbox_filling", "detail": "80% of the outbox used"},
}
COMMAND_EXAMPLES: dict[str, dict[str, Any]] = {
    "set_game": {"game": "r7-b12", "tc": "30m+5s", "red": "Wang", "black": "Lü"},
    "start": {"at": 1481333400000},
    "pause": {},
    "resume": {},
    "adjust": {"side": "red", "delta_ms": 60000},
    "arbiter_mode": {"on": True},
    "resolve": {"seq": 131, "status": "confirmed"},
    "withdraw": {"seq": 118},
    "result": {"winner": None, "reason": "agreed_draw"},
    "move_count": {"limit": 60, "claimant": "black"},
    "foul": {"side": "black", "reason": "touch_move"},
    "reset": {},
    "rebirth": {"from_seq": 100},
    "clock_probe": {"t0": 1481333462000},
}
STATE_EXAMPLE = wire.to_payload(
    wire.StateSnapshot(
        board="12",
        node="pi-06",
        session=3,
        seq=118,
        ts=1481333462123,
        game="r7-b12",
        tc="30m+5s",
        phase="running",
        running="red",
        red_ms=1712345,
        black_ms=1598000,
        moves=wire.SidePair(red=21, black=20),
        flag=None,
        fouls=wire.SidePair(red=0, black=1),
        result=None,
    )
)


def _examples(pairs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"name": name, "payload": payload} for name, payload in pairs]


def _message(
    name: str, title: str, summary: str, schema: str, examples: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "name": name,
        "title": title,
        "summary": summary,
        "contentType": "application/json",
        "payload": ref("schemas", schema),
        "examples": examples,
    }


def message_components() -> dict[str, Any]:
    events = [
        (t, {**_ENVELOPE, "seq": 119 + i, "type": t, "data": d})
        for i, (t, d) in enumerate(EVENT_EXAMPLES.items())
    ]
    commands = [
        (c, {"txn": f"st-{i + 1:04d}", "cmd": c, "args": a})
        for i, (c, a) in enumerate(COMMAND_EXAMPLES.items())
    ]
    status = {
        "state": "online",
        "node": "pi-06",
        "session": 3,
        "ts": 1481333462123,
        "conn": 1481333461990,
    }
    return {
        "BoardStatus": _message(
            "BoardStatus",
            "Board status",
            "Birth (`online`), clean stop "
            "(`offline`) or the will (`lost`) of a board's node connection.",
            "BoardStatus",
            _examples(
                [("online", status), ("lost", {**status, "state": "lost", "ts": 1481333461990})]
            ),
        ),
        "Decision": _message(
            "Decision",
            "Station decision",
            "Station to hub, on `qz/v1/{venue}/station/decision` (QoS 1, not retained; only "
            "the station account publishes it, the venue bridge carries it to the centre): a "
            "board event the station decided. The hub counts a board's decision only beside "
            "an agreeing one. No node sends or receives it.",
            "Decision",
            _examples(
                [
                    (
                        "result",
                        {
                            "v": 1,
                            "board": "6",
                            "session": 3,
                            "seq": 131,
                            "game": "r3-b6",
                            "type": "result",
                            "status": "confirmed",
                            "winner": "red",
                            "reason": "resignation",
                            "txn": "st-5f0c2a9e1b7d4c3a",
                            "by": "arb1",
                            "ts": 1481333470000,
                        },
                    )
                ]
            ),
        ),
        "GameRecord": _message(
            "GameRecord",
            "Game record",
            "Station to hub, on `qz/v1/{venue}/station/record/{board}` (QoS 1, retained; only "
            "the station account publishes it, the venue bridge carries it to the centre): the "
            "whole record of the board's current game after every stored change, moves in ICCS "
            "from `start_fen`, `clocks[i]` the clock of `moves[i]` (null: no press paired), at "
            "most 360 plies. The hub replays the moves before the public sees them. No node "
            "sends or receives it.",
            "GameRecord",
            _examples(
                [
                    (
                        "two plies",
                        {
                            "v": 1,
                            "board": "1",
                            "game": "r3-b1",
                            "round": 3,
                            "start_fen": "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/"
                            "RNBAKABNR w - - 0 1",
                            "moves": ["h2e2", "h9g7"],
                            "clocks": [{"used": 12000, "left": 1788000}, None],
                            "ts": 1481333470000,
                        },
                    )
                ]
            ),
        ),
        "ResendAsk": _message(
            "ResendAsk",
            "Hub's ask for events",
            "Hub to station, on `qz/v1/{venue}/station/resend` (QoS 0, not retained; the one "
            "topic the venue bridge brings in from the centre, read by the station alone): the "
            "board's seqs `from_seq` to `to_seq` (at most 1,000) the hub lacks after a centre node "
            "died with them. The station sends its stored copies again on "
            "`qz/v1/{venue}/resent/board/{board}/event` (station account only, `replay: true`), "
            "which the bridge carries out as the board's events. No node sends or receives it.",
            "ResendAsk",
            _examples(
                [
                    (
                        "a hole of three events",
                        {"v": 1, "board": "6", "from_seq": 118, "to_seq": 120,
                         "ts": 1481333470000},
                    )
                ]
            ),
        ),
        "StationStatus": _message(
            "StationStatus",
            "Station status",
            "The station's birth and will; nodes rebirth and replay when it turns online.",
            "StationStatus",
            _examples([("online", {"state": "online", "session": 9, "ts": 1481333400000})]),
        ),
        "StateSnapshot": _message(
            "StateSnapshot",
            "Board state",
            "Full snapshot of a board; a "
            "display extrapolates the running side as `*_ms - (now - ts)`.",
            "StateSnapshot",
            _examples([("running", STATE_EXAMPLE)]),
        ),
        "Event": _message(
            "Event",
            "Clock event",
            "One fact of a board, numbered by `seq`.",
            "EventEnvelope",
            _examples(events),
        ),
        "BoardCommand": _message(
            "BoardCommand",
            "Board command",
            "A command for one board.",
            "BoardCommand",
            _examples(commands),
        ),
        "VenueCommand": _message(
            "VenueCommand",
            "Venue command",
            "A command for every board of the venue; each board replies on its own reply topic.",
            "VenueCommand",
            _examples([c for c in commands if c[0] in wire.VENUE_COMMANDS]),
        ),
        "Reply": _message(
            "Reply",
            "Command reply",
            "The answer to a command's `txn`; a bad "
            "command gets `ok: false` with the reason and changed nothing.",
            "Reply",
            _examples(
                [
                    ("ok", {"txn": "st-0005", "ok": True, "error": None}),
                    ("rejected", {"txn": "st-0006", "ok": False, "error": "unknown cmd 'castle'"}),
                    (
                        "clock",
                        {
                            "txn": "cp-0007",
                            "ok": True,
                            "error": None,
                            "clock": {"rx": 1481333462201, "tx": 1481333462202},
                        },
                    ),
                ]
            ),
        ),
    }
