"""The wire contract's bounded fields and the base of its models (DESIGN.md §4,
docs/wire.md): every integer and string of the contract is bounded (``bounds.py``), and every
model forbids a field it does not know and is frozen."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from wire_contract import bounds
from wire_contract.topics import ID_PATTERN

__all__ = [
    "MAX_WALL_MS",
    "ClockMs",
    "Count",
    "Detail",
    "Fouls",
    "GameId",
    "Id",
    "Moves",
    "Ms",
    "Name",
    "Reason",
    "Seq",
    "SideName",
    "TcText",
    "Txn",
    "WireModel",
]

MAX_WALL_MS = 2**53  # a wall ms beyond any real clock, within JSON's exact integers

Id = Annotated[str, Field(pattern=ID_PATTERN)]
SideName = Literal["red", "black"]
Ms = Annotated[int, Field(ge=0, le=bounds.MAX_SAFE_INT)]  # wall ms, durations
ClockMs = Annotated[int, Field(ge=0, le=bounds.MAX_CLOCK_MS)]  # what a clock shows
Count = Annotated[int, Field(ge=0, le=bounds.MAX_SAFE_INT)]  # session, seq >= 0
Seq = Annotated[int, Field(ge=1, le=bounds.MAX_SAFE_INT)]
Moves = Annotated[int, Field(ge=0, le=bounds.MAX_MOVES)]
Fouls = Annotated[int, Field(ge=0, le=bounds.MAX_COUNT)]

_PRINTABLE = bounds.PRINTABLE_PATTERN
GameId = Annotated[str, Field(min_length=1, max_length=bounds.MAX_GAME_LEN, pattern=_PRINTABLE)]
TcText = Annotated[str, Field(min_length=1, max_length=bounds.MAX_TC_LEN, pattern=_PRINTABLE)]
Name = Annotated[str, Field(max_length=bounds.MAX_NAME_LEN, pattern=_PRINTABLE)]
Reason = Annotated[str, Field(min_length=1, max_length=bounds.MAX_REASON_LEN, pattern=_PRINTABLE)]
Detail = Annotated[str, Field(max_length=bounds.MAX_DETAIL_LEN, pattern=_PRINTABLE)]
Txn = Annotated[str, Field(min_length=1, max_length=bounds.MAX_TXN_LEN, pattern=_PRINTABLE)]


class WireModel(BaseModel):
    """Every model of the contract: a field it does not know is refused; frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)
