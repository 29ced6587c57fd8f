"""Every bound of the wire contract in one place (DESIGN.md §4, principle 7; docs/wire.md).

A message is checked against the byte-level bounds (size, JSON nesting) *before* it is
parsed, so no payload can make a parser recurse or allocate without limit; the models in
``wire.py`` then bound every integer and string with the constants below. Integers stop at
2**53 - 1: the largest a JSON number carries exactly, and below PostgreSQL's BIGINT.
"""

from __future__ import annotations

import re

from wire_contract.errors import WireContractError

__all__ = [
    "MAX_CLOCK_MS",
    "MAX_COUNT",
    "MAX_DETAIL_LEN",
    "MAX_GAME_LEN",
    "MAX_JSON_DEPTH",
    "MAX_LIST_ITEMS",
    "MAX_MOVES",
    "MAX_NAME_LEN",
    "MAX_PAYLOAD_BYTES",
    "MAX_REASON_LEN",
    "MAX_RECORD_PLIES",
    "MAX_SAFE_INT",
    "MAX_TC_LEN",
    "MAX_TXN_LEN",
    "PayloadBoundError",
    "check_payload",
    "json_depth",
]

# Bytes of one message: a state snapshot is < 1 KiB, an event < 600 B. The broker refuses
# packets above 256 KiB (broker_config.mosquitto_conf.MAX_PACKET_BYTES) before we see them.
MAX_PAYLOAD_BYTES = 16 * 1024
# Nesting of objects and arrays: the deepest message of the contract (a state's pending
# proposal's data) is 4 deep.
MAX_JSON_DEPTH = 8
MAX_SAFE_INT = 2**53 - 1  # seq, session, ts, durations, refs
MAX_CLOCK_MS = 24 * 3600 * 1000  # a clock shows at most a day (the longest control is hours)
MAX_MOVES = 10_000
MAX_COUNT = 1_000  # fouls per side, etc.
MAX_GAME_LEN = 64  # games.game, events.game are VARCHAR(64)
MAX_TC_LEN = 32  # rounds.tc, games.tc are VARCHAR(32)
MAX_NAME_LEN = 64  # players.name is VARCHAR(64)
MAX_REASON_LEN = 64  # reasons are codes (flag, pause, switch_off, ...) or a short phrase
MAX_DETAIL_LEN = 256  # free text beside a reason
MAX_TXN_LEN = 64  # commands.txn is VARCHAR(64)
MAX_LIST_ITEMS = 64  # a state's open proposals
# Plies of one game record on station/record/{board} (issue 29): 360 plies with their clocks
# stay under MAX_PAYLOAD_BYTES (41 bytes a ply at worst); longer games are not relayed live.
MAX_RECORD_PLIES = 360
MAX_FEN_LEN = 100  # a xiangqi FEN is at most ~90 characters
# Events one resend ask may name (station/resend, the hub's mending): a whole game's worth; a
# longer gap is asked in several.
MAX_RESEND_EVENTS = 1_000
# Text fields refuse control characters (they would reach every page and export).
PRINTABLE_PATTERN = r"^[^\x00-\x1f\x7f]*$"
_PRINTABLE = re.compile(PRINTABLE_PATTERN)


class PayloadBoundError(WireContractError, ValueError):
    """A payload over a byte-level bound; the message says which bound and by how much."""


def json_depth(payload: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in a JSON text, ignoring brackets inside strings.

    A scan of bytes, no parsing (so it cannot recurse); stops early past ``MAX_JSON_DEPTH``.
    """
    depth = deepest = 0
    in_string = escaped = False
    for byte in payload:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_JSON_DEPTH:
                    return deepest
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def check_payload(payload: bytes) -> None:
    """Raise ``PayloadBoundError`` for a payload too large or too deeply nested to parse."""
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise PayloadBoundError(
            f"payload of {len(payload)} bytes is over the {MAX_PAYLOAD_BYTES}-byte bound"
        )
    # Fast path: fewer openers than the bound cannot nest past it (nearly every message).
    if payload.count(b"[") + payload.count(b"{") <= MAX_JSON_DEPTH:
        return
    depth = json_depth(payload)
    if depth > MAX_JSON_DEPTH:
        raise PayloadBoundError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def is_printable(text: str) -> bool:
    return bool(_PRINTABLE.match(text))
