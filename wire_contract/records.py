"""A board's game record on the wire (issue 29, docs/wire.md "Game records").

The station publishes the whole record of a board's current game, retained, on
``qz/v1/{venue}/station/record/{board}`` after every stored change; the venue bridge carries it
to the centre, where the hub checks it (moves replayed by ``clock_service.xiangqi``) before the
public pages see it. Bounded: at most ``MAX_RECORD_PLIES`` plies, each with its clock or null.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from wire_contract import bounds
from wire_contract.event_data import HandicapArgs
from wire_contract.fields import ClockMs, GameId, Id, Ms

__all__ = ["ICCS_PATTERN", "GameRecord", "PlyClock"]

ICCS_PATTERN = r"^[a-i][0-9][a-i][0-9]$"
Iccs = Annotated[str, Field(pattern=ICCS_PATTERN)]
Fen = Annotated[
    str, Field(min_length=1, max_length=bounds.MAX_FEN_LEN, pattern=r"^[A-Za-z0-9/ -]+$")
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlyClock(_Model):
    """One move's clock: the time it took and the time its side had left after it (ms)."""

    used: ClockMs
    left: ClockMs


class GameRecord(_Model):
    v: Literal[1] = 1
    board: Id
    game: GameId
    round: Annotated[int, Field(ge=0, le=999)]
    start_fen: Fen
    moves: Annotated[list[Iccs], Field(max_length=bounds.MAX_RECORD_PLIES)]
    # clocks[i] belongs to moves[i]; null where the move has no clock press (yet)
    clocks: Annotated[list[PlyClock | None], Field(max_length=bounds.MAX_RECORD_PLIES)]
    ts: Ms
    # 让二先: the receiver's first moves in a row (as the game's set_game has it); absent when none
    handicap: HandicapArgs | None = None

    @model_validator(mode="after")
    def _one_clock_per_move(self) -> GameRecord:
        if len(self.clocks) != len(self.moves):
            raise ValueError(
                f"clocks: {len(self.clocks)} entries for {len(self.moves)} moves (one each)"
            )
        return self
