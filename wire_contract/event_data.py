"""The ``data`` of each event type (DESIGN.md §4, docs/wire.md "Events"): ``EVENT_DATA`` maps
an event's ``type`` to the model its ``data`` must validate as (``EventEnvelope`` checks it)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from wire_contract import bounds
from wire_contract.fields import (
    Detail,
    Fouls,
    GameId,
    Ms,
    Name,
    Reason,
    Seq,
    SideName,
    TcText,
    WireModel,
)

__all__ = [
    "EVENT_DATA",
    "AdjustedData",
    "EmptyData",
    "FlagData",
    "ForfeitData",
    "FoulData",
    "HandicapArgs",
    "LateData",
    "MoveCountData",
    "MoveData",
    "PausedData",
    "ReadyData",
    "ResultData",
    "ShutdownData",
    "StartedData",
    "WarningData",
]

_Model = WireModel


class HandicapArgs(_Model):
    """A handicap game (让二先): ``receiver`` makes its first ``moves`` moves in a row."""

    receiver: SideName
    moves: Annotated[int, Field(ge=2, le=10)]


class ReadyData(_Model):
    game: GameId
    tc: TcText
    red: Name | None = None
    black: Name | None = None
    black_tc: TcText | None = None
    handicap: HandicapArgs | None = None


class EmptyData(_Model):
    pass


class StartedData(_Model):
    side_on_move: SideName | None = None


class MoveData(_Model):
    side: SideName
    used_ms: Ms
    move: Annotated[int, Field(ge=1, le=bounds.MAX_MOVES)]
    # The press's frame came this long after the press (>= 100 ms: it was resent); the
    # event's ts is the press's own instant.
    arrived_after_ms: Ms | None = None


class PausedData(_Model):
    by: Literal["board", "arbiter"]
    side_on_move: SideName | None


class FlagData(_Model):
    side: SideName
    # How long after its deadline (the event's ts) the flag stood: the proof that no earlier
    # press was in flight (docs/protocol.md §6), or the press that settled it.
    stood_after_ms: Ms | None = None


class FoulData(_Model):
    side: SideName
    reason: Reason
    status: Literal["pending", "confirmed", "dismissed"]
    count: Fouls
    ref: Seq | None = None  # seq of the event this ruling settles


class ForfeitData(_Model):
    side: SideName
    reason: Reason
    status: Literal["pending", "confirmed", "dismissed"]
    ref: Seq | None = None


class ShutdownData(_Model):
    cause: Literal["power_switch", "node_restart"]
    duration_ms: Ms
    side_on_move: SideName | None
    authorised: bool


class LateData(_Model):
    side: SideName


class AdjustedData(_Model):
    side: SideName
    delta_ms: Annotated[int, Field(ge=-bounds.MAX_CLOCK_MS, le=bounds.MAX_CLOCK_MS)]
    by: Literal["arbiter", "board"] = "arbiter"


class ResultData(_Model):
    winner: SideName | None  # None: a draw, or with reason double_forfeit both lose (0:0)
    reason: Reason
    # A flag's result is proposed (pending) until the arbiter confirms it; entered ones stand.
    status: Literal["pending", "confirmed", "dismissed"] = "confirmed"
    ref: Seq | None = None


class MoveCountData(_Model):
    status: Literal["started", "reached"]
    limit: Annotated[int, Field(ge=1, le=bounds.MAX_MOVES)]
    at_move: Annotated[int, Field(ge=0, le=bounds.MAX_MOVES)] | None = None


class WarningData(_Model):
    reason: Reason
    side: SideName | None = None
    detail: Detail | None = None
    # press_before_flag: how long before the flag's ts the press was (the warning's ts)
    early_ms: Ms | None = None
    status: Literal["pending", "confirmed", "dismissed"] = "confirmed"
    ref: Seq | None = None  # a ruling on a pending warning: the seq of the warning it settles


EVENT_DATA: dict[str, type[_Model]] = {
    "ready": ReadyData,
    "started": StartedData,
    "move": MoveData,
    "paused": PausedData,
    "resumed": StartedData,
    "flag": FlagData,
    "foul": FoulData,
    "forfeit": ForfeitData,
    "shutdown": ShutdownData,
    "late": LateData,
    "adjusted": AdjustedData,
    "result": ResultData,
    "move_count": MoveCountData,
    "warning": WarningData,
}
