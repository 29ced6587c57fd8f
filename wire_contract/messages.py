"""The MQTT wire contract (DESIGN.md §4) as pydantic models: topics, payloads, commands.

Both ends use these: the node builds its messages with them and validates the commands it
receives; the station validates everything it receives. ``docs/asyncapi.yaml`` is checked
against these models by a test.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from wire_contract import bounds
from wire_contract.bounds import PayloadBoundError, check_payload
from wire_contract.event_data import (
    EVENT_DATA,
    AdjustedData,
    EmptyData,
    FlagData,
    ForfeitData,
    FoulData,
    HandicapArgs,
    LateData,
    MoveCountData,
    MoveData,
    PausedData,
    ReadyData,
    ResultData,
    ShutdownData,
    StartedData,
    WarningData,
)
from wire_contract.fields import (
    MAX_WALL_MS,
    ClockMs,
    Count,
    GameId,
    Id,
    Moves,
    Ms,
    Name,
    Reason,
    Seq,
    SideName,
    TcText,
    Txn,
    WireModel,
)
from wire_contract.topics import (
    ID_PATTERN,
    TopicName,
    Topics,
    WireError,
    check_id,
    parse_topic,
)

__all__ = [
    "COMMAND_ARGS",
    "EVENT_DATA",
    "ID_PATTERN",
    "MAX_WALL_MS",
    "PROTOCOL_VERSION",
    "AdjustedData",
    "BoardStatus",
    "ClockPart",
    "ClockProbeArgs",
    "Command",
    "Decision",
    "EmptyData",
    "EventEnvelope",
    "FlagData",
    "ForfeitData",
    "FoulData",
    "HandicapArgs",
    "LateData",
    "MoveCountData",
    "MoveData",
    "PausedData",
    "ProbeTimes",
    "ReadyData",
    "Reply",
    "ResendAsk",
    "ResultData",
    "ShutdownData",
    "StartedData",
    "StateSnapshot",
    "StationStatus",
    "TopicName",
    "Topics",
    "WarningData",
    "WireError",
    "check_id",
    "decode",
    "encode",
    "parse_command",
    "parse_topic",
    "to_payload",
    "txn_of",
]

PROTOCOL_VERSION = 1
_Model = WireModel  # the contract's base model (fields.py)
_PRINTABLE = bounds.PRINTABLE_PATTERN


# -- status and state ------------------------------------------------------------------------
class BoardStatus(_Model):
    state: Literal["online", "offline", "lost"]
    node: Id
    session: Count
    ts: Ms
    # The epoch of the MQTT connection this status speaks for: the node's wall ms when it built
    # it, strictly increasing within a node's life. A will is built before its connection is
    # made, so its ``ts`` is older than the ``online`` it follows: order statuses by
    # (session, conn), and within one connection its end
    # (``lost``/``offline``) after its ``online``. Absent from older nodes (then: by ts).
    conn: Annotated[int, Field(ge=1, le=MAX_WALL_MS, strict=True)] | None = None
    # "failing": the node's journal refuses writes (a full or broken SD card). Its clocks run
    # on; its events are held on the node and published once they are on disk, so the
    # station's view of the board is behind until then. Absent when the journal writes.
    journal: Literal["failing"] | None = None
    # True: the node heard another connection write this board's status since it started —
    # two nodes with one identity (a copied node.toml, a cloned SD card; board_nodes/
    # identity_clash.py). Absent otherwise.
    clash: Literal[True] | None = None
    OMIT_IF_NONE: ClassVar[tuple[str, ...]] = ("conn", "journal", "clash")

    def order_key(self) -> tuple[int, int, int]:
        """Later statuses have larger keys; only meaningful when ``conn`` is set."""
        return (self.session, self.conn or 0, 0 if self.state == "online" else 1)


class StationStatus(_Model):
    state: Literal["online", "offline", "lost"]
    session: Count
    ts: Ms


class Decision(_Model):
    """A board's event the station decided (issue 27, docs/security.md): the event's key, what
    it decides, the txn of the arbiter's command that asked it and who sent that command. The
    hub counts a decision only when the board's event and this agree."""

    v: Literal[1] = 1
    board: Id
    session: Count
    seq: Seq
    game: GameId | None
    type: Literal["result", "foul", "forfeit"]
    status: Literal["confirmed", "dismissed"]
    winner: SideName | None = None  # a result's (None: a draw, or both lose)
    side: SideName | None = None  # a foul's or forfeit's
    reason: Reason
    ref: Seq | None = None  # the proposal it settles
    txn: Txn
    by: Annotated[str, Field(max_length=64, pattern=_PRINTABLE)] | None = None
    ts: Ms


class ResendAsk(_Model):
    """The hub's ask for events of one board it lacks (``station/resend``, from the centre):
    seqs ``from_seq`` … ``to_seq``. The venue's station answers with the copies it stored, on
    ``resent/board/{board}/event``, which the bridge carries out as the board's events."""

    v: Literal[1] = 1
    board: Id
    from_seq: Seq
    to_seq: Seq
    ts: Ms

    @model_validator(mode="after")
    def _a_bounded_range(self) -> ResendAsk:
        if self.to_seq < self.from_seq:
            raise ValueError(f"to_seq {self.to_seq} is before from_seq {self.from_seq}")
        if self.to_seq - self.from_seq >= bounds.MAX_RESEND_EVENTS:
            raise ValueError(f"more than {bounds.MAX_RESEND_EVENTS} events in one ask")
        return self


class SidePair(_Model):
    red: Moves
    black: Moves


class StateSnapshot(_Model):
    v: Literal[1] = 1
    board: Id
    node: Id
    session: Count
    seq: Count
    ts: Ms
    game: GameId | None
    tc: TcText | None
    phase: Literal["idle", "ready", "running", "paused", "finished"]
    running: SideName | None
    red_ms: ClockMs
    black_ms: ClockMs
    moves: SidePair
    flag: SideName | None
    fouls: SidePair
    result: dict[str, Any] | None = None
    # Beyond the minimum of DESIGN.md §4: optional, ignored by those who don't know them.
    red: Name | None = None
    black: Name | None = None
    arbiter_mode: bool = False
    pending: Annotated[list[dict[str, Any]], Field(max_length=bounds.MAX_LIST_ITEMS)] = Field(
        default_factory=list
    )
    handicap: HandicapArgs | None = None  # only in a handicap game: older readers know no key
    # why the board's clock face cannot serve (failed to open, refused, link lost); null when
    # it serves. A ``warning`` (clock_fault, link_lost) says the same as an event.
    clock_fault: Annotated[str, Field(max_length=300)] | None = None
    OMIT_IF_NONE: ClassVar[tuple[str, ...]] = ("handicap",)


# -- events ----------------------------------------------------------------------------------
class ClockPart(_Model):
    red_ms: ClockMs
    black_ms: ClockMs
    running: SideName | None


class EventEnvelope(_Model):
    v: Literal[1] = 1
    board: Id
    node: Id
    game: GameId | None
    session: Count
    seq: Seq
    ts: Ms
    type: Annotated[str, Field(max_length=16)]
    replay: bool = False
    clock: ClockPart
    data: dict[str, Any]
    # The station's command this event answers (a result, a ruling, an arbiter's foul): only
    # those decide; without it a decision is a proposal (docs/security.md).
    txn: Txn | None = None
    OMIT_IF_NONE: ClassVar[tuple[str, ...]] = ("txn",)

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in EVENT_DATA:
            raise ValueError(f"unknown event type {value!r}")
        return value

    @model_validator(mode="after")
    def _valid_data(self) -> EventEnvelope:
        try:
            EVENT_DATA[self.type].model_validate(self.data)
        except ValidationError as exc:
            raise ValueError(f"data of a {self.type!r} event: {_first_error(exc)}") from None
        return self


# -- commands --------------------------------------------------------------------------------
class SetGameArgs(_Model):
    game: GameId
    tc: TcText
    red: Name | None = None
    black: Name | None = None
    black_tc: TcText | None = None
    tiebreak: bool = False
    handicap: HandicapArgs | None = None  # 让二先, decided by the station from the players
    # carry-over to a spare clock
    red_ms: ClockMs | None = None
    black_ms: ClockMs | None = None
    moves: SidePair | None = None
    on_move: SideName | None = None


class StartArgs(_Model):
    at: Ms | None = None


class AdjustArgs(_Model):
    side: SideName
    delta_ms: Annotated[int, Field(ge=-36_000_000, le=36_000_000)]


class ArbiterModeArgs(_Model):
    on: bool


class ResolveArgs(_Model):
    seq: Seq
    status: Literal["confirmed", "dismissed"]


class WithdrawArgs(_Model):
    seq: Seq  # the foul's own event (its first report)


# the arbiter's free text beside a reason code
Note = Annotated[str, Field(max_length=200, pattern=bounds.PRINTABLE_PATTERN)]


class ResultArgs(_Model):
    winner: SideName | None  # None: a draw, or both lose with reason double_forfeit
    reason: Reason
    note: Note | None = None  # kept in the station's command log; the node ignores it


class MoveCountArgs(_Model):
    limit: Annotated[int, Field(ge=1, le=500)] | None = None
    # 提出方, the side that claims the count: kept in the station's command log (a game record
    # leaves out its checks per the profile); the node ignores it
    claimant: SideName | None = None


class RebirthArgs(_Model):
    # Replay journaled events from this seq on; without it, the current game's events.
    from_seq: Seq | None = None


class FoulArgs(_Model):
    side: SideName
    reason: Reason
    note: Note | None = None  # kept in the station's command log; the node ignores it


class ProbeTimes(_Model):
    """A node's answer to ``clock_probe``: its wall clock (ms) when the probe arrived (``rx``)
    and when the answer left (``tx``). With the station's send and receive times this is an
    NTP round trip: the node's offset is measured apart from the network's delay."""

    rx: Annotated[int, Field(ge=0, le=MAX_WALL_MS)]
    tx: Annotated[int, Field(ge=0, le=MAX_WALL_MS)]

    @model_validator(mode="after")
    def _ordered(self) -> ProbeTimes:
        if self.tx < self.rx:
            raise ValueError("tx must not be before rx")
        return self


class ClockProbeArgs(_Model):
    t0: Annotated[int, Field(ge=0, le=MAX_WALL_MS)]  # the station's wall ms when it sent it


COMMAND_ARGS: dict[str, type[_Model]] = {
    "set_game": SetGameArgs,
    "start": StartArgs,
    "pause": EmptyData,
    "resume": EmptyData,
    "adjust": AdjustArgs,
    "arbiter_mode": ArbiterModeArgs,
    "resolve": ResolveArgs,
    "withdraw": WithdrawArgs,
    "result": ResultArgs,
    "move_count": MoveCountArgs,
    "foul": FoulArgs,
    "reset": EmptyData,
    "rebirth": RebirthArgs,
    "clock_probe": ClockProbeArgs,
}
VENUE_COMMANDS = frozenset({"start", "pause", "resume", "rebirth"})


class Command(_Model):
    txn: Txn
    cmd: Annotated[str, Field(max_length=32)]
    args: dict[str, Any] = Field(default_factory=dict)


ReplyCode = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[a-z][a-z0-9_]*$")]
ReplyArg = (
    Annotated[int, Field(ge=-bounds.MAX_SAFE_INT, le=bounds.MAX_SAFE_INT)]
    | Annotated[str, Field(max_length=bounds.MAX_REASON_LEN, pattern=_PRINTABLE)]
)


class Reply(_Model):
    """``error`` is the English reason; ``code`` the same as a machine code and ``args`` its
    arguments (an optional addition: the pages translate it, a station that predates it reads
    ``error``). Codes: docs/wire.md "Reply codes"."""

    txn: Txn
    ok: bool
    error: Annotated[str, Field(max_length=bounds.MAX_DETAIL_LEN)] | None = None
    clock: ProbeTimes | None = None  # only in the answer to ``clock_probe``
    code: ReplyCode | None = None  # only with ok: false
    args: Annotated[dict[ReplyCode, ReplyArg], Field(max_length=8)] | None = None
    OMIT_IF_NONE: ClassVar[tuple[str, ...]] = ("clock", "code", "args")


# -- coding ----------------------------------------------------------------------------------
def encode(model: BaseModel) -> bytes:
    """JSON of a model; the optional additions a model names in ``OMIT_IF_NONE`` are left out
    when unset, so a consumer that predates them (``extra`` forbidden) still reads it."""
    omit = {name for name in getattr(model, "OMIT_IF_NONE", ()) if getattr(model, name) is None}
    return model.model_dump_json(exclude=omit or None).encode()


def to_payload(model: BaseModel) -> dict[str, Any]:
    """The JSON object of a model as ``encode`` writes it, for those who keep it as a dict
    (the node's journal keeps each event's payload)."""
    omit = {name for name in getattr(model, "OMIT_IF_NONE", ()) if getattr(model, name) is None}
    return model.model_dump(mode="json", exclude=omit or None)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "payload"
    return f"{where}: {err['msg']}"


M = TypeVar("M", bound=BaseModel)


def decode(model: type[M], payload: bytes | str) -> M:
    """Parse and validate a payload; ``WireError`` says what and where.

    The byte-level bounds are checked first: nothing over them reaches the JSON parser.
    """
    raw = payload.encode() if isinstance(payload, str) else bytes(payload)
    try:
        check_payload(raw)
    except PayloadBoundError as exc:
        raise WireError(f"too large: {exc}") from None
    try:
        # One pass of pydantic's JSON parser (~9 µs an event, where json.loads and then
        # validating the objects took ~24: issue 30). It accepts nothing the path below would
        # refuse; what it refuses goes that way, which says what and where as it always did.
        return model.model_validate_json(raw)
    except ValidationError:
        pass
    try:
        obj = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WireError(f"not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise WireError(f"expected a JSON object, got {type(obj).__name__}")
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise WireError(f"{model.__name__}: {_first_error(exc)}") from None


def txn_of(payload: bytes | str) -> str | None:
    """The ``txn`` of a command payload if one can be read, so a bad command still gets a reply."""
    raw = payload.encode() if isinstance(payload, str) else bytes(payload)
    try:
        check_payload(raw)
        obj = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, PayloadBoundError):
        return None
    txn = obj.get("txn") if isinstance(obj, dict) else None
    return txn if isinstance(txn, str) and 0 < len(txn) <= 64 else None


def parse_command(payload: bytes | str, *, venue_wide: bool = False) -> tuple[Command, _Model]:
    """Validate a command and its args; returns ``(command, args)`` or raises ``WireError``.

    The ``txn`` is recovered when possible so that even a bad command can be answered.
    """
    command = decode(Command, payload)
    model = COMMAND_ARGS.get(command.cmd)
    if model is None:
        raise WireError(f"unknown cmd {command.cmd!r}")
    if venue_wide and command.cmd not in VENUE_COMMANDS:
        raise WireError(f"cmd {command.cmd!r} is not a venue-wide command")
    try:
        return command, model.model_validate(command.args)
    except ValidationError as exc:
        raise WireError(f"{command.cmd} args: {_first_error(exc)}") from None
