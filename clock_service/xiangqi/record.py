"""A game record: the start position and the moves, each one legal where it was played."""

from __future__ import annotations

from dataclasses import dataclass, field

from clock_service.xiangqi.board import START_FEN, IllegalMove, Move, Position
from clock_service.xiangqi.notation import chinese, parse_move, wxf

__all__ = ["PlyClock", "Record"]


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
    _positions: tuple[Position, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        positions = [Position.from_fen(self.start_fen)]
        for ply, move in enumerate(self.moves, start=1):
            try:
                positions.append(positions[-1].play(move))
            except IllegalMove as error:
                raise IllegalMove(f"ply {ply}: {error}") from None
        object.__setattr__(self, "_positions", tuple(positions))

    @classmethod
    def _extended(cls, record: Record, move: Move, after: Position) -> Record:
        """``record`` plus a move already checked legal (no replay of the whole game)."""
        extended = object.__new__(cls)
        object.__setattr__(extended, "start_fen", record.start_fen)
        object.__setattr__(extended, "moves", (*record.moves, move))
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
        return Record._extended(self, move, self.position.play(move))

    def play_move(self, move: Move) -> Record:
        """This record with ``move`` (raises IllegalMove saying why)."""
        return Record._extended(self, move, self.position.play(move))

    def play_all(self, texts: list[str]) -> Record:
        record = self
        for text in texts:
            record = record.play(text)
        return record

    def undo(self) -> Record:
        if not self.moves:
            raise ValueError("nothing to undo: the record has no moves")
        return Record(start_fen=self.start_fen, moves=self.moves[:-1])

    def chinese(self) -> list[str]:
        positions = self.positions()
        return [chinese(p, m) for p, m in zip(positions, self.moves, strict=False)]

    def wxf(self) -> list[str]:
        positions = self.positions()
        return [wxf(p, m) for p, m in zip(positions, self.moves, strict=False)]

    def iccs(self) -> list[str]:
        return [m.iccs for m in self.moves]
