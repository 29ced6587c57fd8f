"""From a JetStream message to a validated record: which venue, board and kind, and the report.

The subject names the venue and board (``fed.qz.v1.{venue}.board.{board}.{kind}``); the payload
must be the wire contract's event or state and must speak for the same board — a venue cannot
file a report under another board's subject. Everything bad raises :class:`RecordError`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from federation_hub.errors import RecordError
from wire_contract.messages import Decision, EventEnvelope, StateSnapshot, WireError, check_id

__all__ = [
    "MAX_PAYLOAD",
    "DecisionRecord",
    "EventRecord",
    "StateRecord",
    "is_decision_subject",
    "parse_decision",
    "parse_event",
    "parse_state",
    "split",
]

MAX_PAYLOAD = 64 * 1024  # the centre's max_payload; a snapshot is < 1 KiB
MAX_INT = 2**53  # session, seq and ts: JSON's exact integers, and within PostgreSQL's BIGINT


@dataclass(frozen=True, slots=True)
class EventRecord:
    venue: str
    board: str
    session: int
    seq: int
    type: str
    game: str | None
    ts: int
    # The event as JSON text exactly as the venue sent it (from the wire: validated, never
    # parsed into a dict only to be encoded again) or as an object (built in code).
    body: dict[str, Any] | str


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """A venue station's decision (wire ``Decision``): the board event it decides, by key."""

    venue: str
    board: str
    session: int
    seq: int
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StateRecord:
    venue: str
    board: str
    session: int
    seq: int
    ts: int
    body: dict[str, Any]


def _head(prefix: str) -> str:
    """What every federation subject begins with: the venues' roots under the prefix."""
    return prefix.replace("/", ".") + ".qz.v1."


def split(subject: str, prefix: str) -> tuple[str, str, str]:
    """``(venue, board, kind)`` of a federation subject."""
    head = _head(prefix)
    if not subject.startswith(head):
        raise RecordError(f"{subject}: not under {head}")
    parts = subject[len(head) :].split(".")
    if len(parts) != 4 or parts[1] != "board":
        raise RecordError(f"{subject}: expected {head}<venue>.board.<board>.<kind>")
    venue, _, board, kind = parts
    try:
        check_id("venue", venue)
        check_id("board", board)
    except WireError as exc:
        raise RecordError(f"{subject}: {exc}") from None
    return venue, board, kind


def _payload(subject: str, data: bytes) -> None:
    if len(data) > MAX_PAYLOAD:
        raise RecordError(f"{subject}: payload of {len(data)} bytes is over {MAX_PAYLOAD}")


def _decode(subject: str, model: type[BaseModel], data: bytes) -> tuple[Any, dict[str, Any]]:
    """The validated model and the JSON object, parsed once (the hub's hot path)."""
    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{subject}: not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise RecordError(f"{subject}: expected a JSON object, got {type(obj).__name__}")
    try:
        return model.model_validate(obj), obj
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "payload"
        raise RecordError(f"{subject}: {model.__name__}: {where}: {err['msg']}") from None


def _validate_text(subject: str, model: type[BaseModel], data: bytes) -> tuple[Any, str]:
    """The validated model and the payload's text: one pass of pydantic's JSON parser.

    The text is what the store keeps. Whatever passes the event contract is JSON PostgreSQL's
    ``json`` type accepts too: the parser refuses lone surrogates and trailing garbage, and no
    event field takes a float, so ``NaN``/``Infinity`` (which ``json.loads`` would take and
    PostgreSQL would not) never validate (tests/federation/test_federation_records.py).
    """
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        raise RecordError(f"{subject}: not JSON: {exc}") from None
    try:
        return model.model_validate_json(text), text
    except ValidationError as exc:
        err = exc.errors()[0]
        if err["type"] == "json_invalid":
            raise RecordError(f"{subject}: not JSON: {err['msg']}") from None
        if err["type"] == "model_type":
            raise RecordError(f"{subject}: expected a JSON object") from None
        where = ".".join(str(p) for p in err["loc"]) or "payload"
        raise RecordError(f"{subject}: {model.__name__}: {where}: {err['msg']}") from None


def _bounded(subject: str, **values: int) -> None:
    for name, value in values.items():
        if value > MAX_INT:
            raise RecordError(f"{subject}: {name} {value} is over {MAX_INT}")


def parse_event(subject: str, data: bytes, prefix: str) -> EventRecord:
    venue, board, kind = split(subject, prefix)
    if kind != "event":
        raise RecordError(f"{subject}: not an event subject")
    _payload(subject, data)
    ev, body = _validate_text(subject, EventEnvelope, data)
    if ev.board != board:
        raise RecordError(f"{subject}: payload speaks for board {ev.board!r}")
    _bounded(subject, session=ev.session, seq=ev.seq, ts=ev.ts)
    return EventRecord(venue, board, ev.session, ev.seq, ev.type, ev.game, ev.ts, body)


def parse_state(subject: str, data: bytes, prefix: str) -> StateRecord | None:
    """A state snapshot; ``None`` for a status message (kept in the stream, not stored)."""
    venue, board, kind = split(subject, prefix)
    if kind == "status":
        return None
    if kind != "state":
        raise RecordError(f"{subject}: not a state subject")
    _payload(subject, data)
    st, body = _decode(subject, StateSnapshot, data)
    if st.board != board:
        raise RecordError(f"{subject}: payload speaks for board {st.board!r}")
    _bounded(subject, session=st.session, seq=st.seq, ts=st.ts)
    return StateRecord(venue, board, st.session, st.seq, st.ts, body)


def is_resent_subject(subject: str, prefix: str) -> bool:
    """A venue station's stored copy of a board's event, sent again because the hub asked
    (``{prefix}.qz.v1.{venue}.resent.board.{board}.event``; federation_hub/mender.py)."""
    head = _head(prefix)
    return subject.startswith(head) and ".resent.board." in subject[len(head) :]


def parse_resent(subject: str, data: bytes, prefix: str) -> EventRecord:
    """As ``parse_event``, for the board's event the station sent again."""
    head = _head(prefix)
    venue, _, rest = subject[len(head) :].partition(".resent.board.")
    if not is_resent_subject(subject, prefix) or "." in venue:
        raise RecordError(f"{subject}: expected {head}<venue>.resent.board.<board>.event")
    return parse_event(f"{head}{venue}.board.{rest}", data, prefix)


def is_decision_subject(subject: str, prefix: str) -> bool:
    head = _head(prefix)
    return subject.startswith(head) and subject.endswith(".station.decision")


def parse_decision(subject: str, data: bytes, prefix: str) -> DecisionRecord:
    """A station's decision on ``{prefix}.qz.v1.{venue}.station.decision`` (issue 27): only the
    venue's station account may publish it there (broker_config/acl.py)."""
    head = _head(prefix)
    venue = (
        subject[len(head) : -len(".station.decision")]
        if is_decision_subject(subject, prefix)
        else ""
    )
    try:
        check_id("venue", venue)
    except WireError as exc:
        raise RecordError(f"{subject}: {exc}") from None
    _payload(subject, data)
    d, body = _decode(subject, Decision, data)
    _bounded(subject, session=d.session, seq=d.seq, ts=d.ts)
    return DecisionRecord(venue, d.board, d.session, d.seq, body)
