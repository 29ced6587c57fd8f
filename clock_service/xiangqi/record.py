"""A game record: the start position and the moves, each one legal where it was played.

A 让二先 game (``handicap``: the receiver makes its first moves in a row, as its clock has it,
clock_service.handicap) is recorded as played: after each of the receiver's given moves the
receiver is to move again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from clock_service.handicap import Handicap
from clock_service.xiangqi.board import START_FEN, IllegalMove, Move, Position
from clock_service.xiangqi.notation import chinese, parse_move, wxf

__all__ = ["PlyClock", "Record", "after_move"]


def after_move(position: Position, move: Move, handicap: Handicap | None, made: int) -> Position:
    """The position after ``move`` (raises ``IllegalMove``); in a handicap game the receiver is
    to move again while it is owed moves. ``made``: the mover's moves before this one."""
    after = position.play(move)
    if handicap is not None and handicap.owed(position.to_move, made + 1):
        after = dataclasses.replace(after, to_move=position.to_move)
    return after


@dataclass(frozen=True, slots=True)
class PlyClock:
    """The clock beside one move: the mover's time left after it, and the time it took (ms)."""

    left_ms: int
    used_ms: int | None = None

    def __post_init__(self) -> None:
        if self.left_ms < 0 or (self.used_ms is not None and self.used_ms < 0):
            raise ValueError(f"clock times must not be negative: {self.left_ms}, {self.used_ms}")


@dataclass(frozen=True)
class Record:
    """Start FEN plus moves. Built only from legal moves: the constructor replays them."""

    start_fen: str = START_FEN
    moves: tuple[Move, ...] = ()
    handicap: Handicap | None = None
    _positions: tuple[Position, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        positions = [Position.from_fen(self.start_fen)]
        made = {side: 0 for side in (positions[0].to_move, positions[0].to_move.other)}
        for ply, move in enumerate(self.moves, start=1):
            mover = positions[-1].to_move
            try:
                positions.append(after_move(positions[-1], move, self.handicap, made[mover]))
            except IllegalMove as error:
                raise IllegalMove(f"ply {ply}: {error}") from None
            made[mover] += 1
        object.__setattr__(self, "_positions", tuple(positions))

    def _made(self, side: object) -> int:
        return sum(1 for p in self._positions[:-1] if p.to_move is side)

    def _after(self, move: Move) -> Position:
        mover = self.position.to_move
        return after_move(self.position, move, self.handicap, self._made(mover))

    @classmethod
    def _extended(cls, record: Record, move: Move, after: Position) -> Record:
        """``record`` plus a move already checked legal (no replay of the whole game)."""
        extended = object.__new__(cls)
        object.__setattr__(extended, "start_fen", record.start_fen)
        object.__setattr__(extended, "moves", (*record.moves, move))
        object.__setattr__(extended, "handicap", record.handicap)
        object.__setattr__(extended, "_positions", (*record._positions, after))
        return extended

    @property
    def start(self) -> Position:
        return self._positions[0]

    def positions(self) -> list[Position]:
        """The position before each move, then the one after the last (len(moves) + 1)."""
        return list(self._positions)

    @property
    def position(self) -> Position:
        return self._positions[-1]

    def play(self, text: str) -> Record:
        """This record with one more move, read from any notation (raises NotationError)."""
        move = parse_move(self.position, text)
        return Record._extended(self, move, self._after(move))

    def play_move(self, move: Move) -> Record:
        """This record with ``move`` (raises IllegalMove saying why)."""
        return Record._extended(self, move, self._after(move))

    def play_all(self, texts: list[str]) -> Record:
        record = self
        for text in texts:
            record = record.play(text)
        return record

    def undo(self) -> Record:
        if not self.moves:
            raise ValueError("nothing to undo: the record has no moves")
        return Record(start_fen=self.start_fen, moves=self.moves[:-1], handicap=self.handicap)

    def chinese(self) -> list[str]:
        positions = self.positions()
        return [chinese(p, m) for p, m in zip(positions, self.moves, strict=False)]

    def wxf(self) -> list[str]:
        positions = self.positions()
        return [wxf(p, m) for p, m in zip(positions, self.moves, strict=False)]

    def iccs(self) -> list[str]:
        return [m.iccs for m in self.moves]
