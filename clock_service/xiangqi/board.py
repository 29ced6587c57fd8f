"""A xiangqi position: FEN in and out, legal moves, perft.

Squares are numbered ``rank * 9 + file``: file 0..8 is ICCS a..i from red's left, rank 0..9
counts from red's back rank. Red pieces are upper case (K A B N R C P), black lower case.

Legality is the piece's own movement, the mover's general not left attacked, and the two
generals not facing each other on an open file (飞将). Perpetual check and chase are the
arbiter's (docs/regulation.md), not the move generator's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from clock_service.errors import ClockServiceError
from clock_service.side import Side

__all__ = [
    "START_FEN",
    "FenError",
    "IllegalMove",
    "Move",
    "Position",
    "perft",
]

START_FEN = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"

FILES = "abcdefghi"
# FEN letters for the same piece as written by other tools: elephant E, horse H.
_FEN_ALIASES = {"E": "B", "H": "N", "e": "b", "h": "n"}
_ORTHOGONAL = ((1, 0), (-1, 0), (0, 1), (0, -1))
_DIAGONAL = ((1, 1), (1, -1), (-1, 1), (-1, -1))
# Horse jumps with the leg square (蹩马腿) that must be empty: (dfile, drank, leg dfile, leg drank).
_HORSE = (
    (1, 2, 0, 1),
    (-1, 2, 0, 1),
    (1, -2, 0, -1),
    (-1, -2, 0, -1),
    (2, 1, 1, 0),
    (2, -1, 1, 0),
    (-2, 1, -1, 0),
    (-2, -1, -1, 0),
)
# A horse standing at (dfile, drank) from the general attacks it unless this leg square is taken.
_HORSE_ATTACK = (
    (1, 2, 1, 1),
    (-1, 2, -1, 1),
    (1, -2, 1, -1),
    (-1, -2, -1, -1),
    (2, 1, 1, 1),
    (2, -1, 1, -1),
    (-2, 1, -1, 1),
    (-2, -1, -1, -1),
)

Board = list[str | None]


class FenError(ClockServiceError, ValueError):
    """A FEN that does not describe a xiangqi position; the message says what and where."""


class IllegalMove(ClockServiceError, ValueError):
    """A move that the rules do not allow in the position; the message says why."""


def _on_board(file: int, rank: int) -> bool:
    return 0 <= file < 9 and 0 <= rank < 10


def _in_palace(file: int, rank: int, red: bool) -> bool:
    return 3 <= file <= 5 and (rank <= 2 if red else rank >= 7)


@dataclass(frozen=True, slots=True)
class Move:
    """One move from square to square (``rank * 9 + file``)."""

    source: int
    target: int

    def __post_init__(self) -> None:
        for name, value in (("source", self.source), ("target", self.target)):
            if not 0 <= value < 90:
                raise ValueError(f"move {name} must be a square 0..89, not {value}")
        if self.source == self.target:
            raise ValueError("a move must change squares")

    @property
    def iccs(self) -> str:
        """The move in ICCS, lower case: ``h2e2``."""
        return square_name(self.source) + square_name(self.target)

    @classmethod
    def from_iccs(cls, text: str) -> Move:
        """Read ``h2e2`` or ``H2-E2``; raises ``ValueError`` naming the text."""
        folded = text.strip().lower().replace("-", "")
        if len(folded) != 4:
            raise ValueError(f"ICCS move must look like h2e2, not {text!r}")
        return cls(source=parse_square(folded[:2], text), target=parse_square(folded[2:], text))

    def __str__(self) -> str:
        return self.iccs


def square_name(square: int) -> str:
    return f"{FILES[square % 9]}{square // 9}"


def parse_square(name: str, context: str) -> int:
    if len(name) != 2 or name[0] not in FILES or not name[1].isdigit() or not name[1].isascii():
        raise ValueError(f"not a square a0..i9: {name!r} in {context!r}")
    return int(name[1]) * 9 + FILES.index(name[0])


def _pseudo_moves(board: Board, red: bool) -> Iterator[tuple[int, int]]:
    """Every move by the pieces' own movement, ignoring the mover's general's safety."""
    for square, piece in enumerate(board):
        if piece is None or piece.isupper() != red:
            continue
        file, rank = square % 9, square // 9
        kind = piece.lower()
        if kind in "rc":
            for dfile, drank in _ORTHOGONAL:
                f, r = file + dfile, rank + drank
                screened = False
                while _on_board(f, r):
                    other = board[r * 9 + f]
                    if not screened:
                        if other is None:
                            yield square, r * 9 + f
                        elif kind == "r":
                            if other.isupper() != red:
                                yield square, r * 9 + f
                            break
                        else:
                            screened = True
                    elif other is not None:
                        if other.isupper() != red:
                            yield square, r * 9 + f
                        break
                    f, r = f + dfile, r + drank
            continue
        targets: list[tuple[int, int]] = []
        if kind == "n":
            for dfile, drank, leg_file, leg_rank in _HORSE:
                leg_f, leg_r = file + leg_file, rank + leg_rank
                if _on_board(leg_f, leg_r) and board[leg_r * 9 + leg_f] is None:
                    targets.append((file + dfile, rank + drank))
        elif kind == "b":
            for dfile, drank in _DIAGONAL:
                f, r = file + 2 * dfile, rank + 2 * drank
                own_half = r <= 4 if red else r >= 5
                if (
                    _on_board(f, r)
                    and own_half
                    and board[(rank + drank) * 9 + file + dfile] is None
                ):
                    targets.append((f, r))
        elif kind == "a":
            targets = [
                (file + df, rank + dr)
                for df, dr in _DIAGONAL
                if _in_palace(file + df, rank + dr, red)
            ]
        elif kind == "k":
            targets = [
                (file + df, rank + dr)
                for df, dr in _ORTHOGONAL
                if _in_palace(file + df, rank + dr, red)
            ]
        else:  # pawn: forward, and sideways once over the river
            targets = [(file, rank + (1 if red else -1))]
            if rank >= 5 if red else rank <= 4:
                targets += [(file + 1, rank), (file - 1, rank)]
        for f, r in targets:
            if _on_board(f, r):
                other = board[r * 9 + f]
                if other is None or other.isupper() != red:
                    yield square, r * 9 + f


def general_attacked(board: Board, red: bool) -> bool:
    """Whether the general of ``red`` is attacked, or faces the other general on an open file."""
    general = board.index("K" if red else "k")
    file, rank = general % 9, general // 9
    for dfile, drank in _ORTHOGONAL:
        f, r = file + dfile, rank + drank
        between = 0
        while _on_board(f, r):
            other = board[r * 9 + f]
            if other is not None:
                if other.isupper() != red:
                    kind = other.lower()
                    if between == 0 and (kind == "r" or (kind == "k" and dfile == 0)):
                        return True
                    if between == 1 and kind == "c":
                        return True
                    # A pawn attacks the square in front of it and, over the river, beside it.
                    adjacent = (f - file, r - rank) == (dfile, drank)
                    toward = drank == (1 if red else -1) or drank == 0
                    if between == 0 and kind == "p" and adjacent and toward:
                        return True
                between += 1
                if between > 1:
                    break
            f, r = f + dfile, r + drank
    enemy_horse = "n" if red else "N"
    for dfile, drank, leg_file, leg_rank in _HORSE_ATTACK:
        f, r = file + dfile, rank + drank
        if (
            _on_board(f, r)
            and board[r * 9 + f] == enemy_horse
            and board[(rank + leg_rank) * 9 + file + leg_file] is None
        ):
            return True
    return False


def _legal(board: Board, red: bool) -> list[tuple[int, int]]:
    legal: list[tuple[int, int]] = []
    for source, target in list(_pseudo_moves(board, red)):
        captured = board[target]
        board[target], board[source] = board[source], None
        if not general_attacked(board, red):
            legal.append((source, target))
        board[source], board[target] = board[target], captured
    return legal


def _perft(board: Board, red: bool, depth: int) -> int:
    moves = _legal(board, red)
    if depth == 1:
        return len(moves)
    nodes = 0
    for source, target in moves:
        captured = board[target]
        board[target], board[source] = board[source], None
        nodes += _perft(board, not red, depth - 1)
        board[source], board[target] = board[target], captured
    return nodes


def perft(position: Position, depth: int) -> int:
    """The number of legal move sequences of ``depth`` plies (the published counts' measure)."""
    if depth < 1:
        raise ValueError(f"perft depth must be at least 1, not {depth}")
    return _perft(list(position.squares), position.to_move is Side.RED, depth)


@dataclass(frozen=True, slots=True)
class Position:
    """A position: 90 squares, the side to move and the FEN counters."""

    squares: tuple[str | None, ...]
    to_move: Side
    halfmove_clock: int = 0
    fullmove: int = 1

    def __post_init__(self) -> None:
        if len(self.squares) != 90:
            raise FenError(f"a position has 90 squares, not {len(self.squares)}")
        for piece in ("K", "k"):
            count = self.squares.count(piece)
            if count != 1:
                side = "red" if piece == "K" else "black"
                raise FenError(f"{side} must have exactly one general, not {count}")
            square = self.squares.index(piece)
            if not _in_palace(square % 9, square // 9, piece == "K"):
                raise FenError(
                    f"the {piece} general stands outside its palace on {square_name(square)}"
                )
        for square, occupant in enumerate(self.squares):
            if occupant is not None and (len(occupant) != 1 or occupant.lower() not in "kabnrcp"):
                raise FenError(f"not a piece {occupant!r} on {square_name(square)}")
        if self.halfmove_clock < 0 or self.fullmove < 1:
            raise FenError("FEN move counters must be halfmove >= 0 and fullmove >= 1")

    @classmethod
    def start(cls) -> Position:
        return cls.from_fen(START_FEN)

    @classmethod
    def from_fen(cls, fen: str) -> Position:
        """Read a xiangqi FEN (``w``/``r`` or ``b`` to move; E/H accepted for B/N)."""
        fields = fen.split()
        if not fields:
            raise FenError("empty FEN")
        rows = fields[0].split("/")
        if len(rows) != 10:
            raise FenError(f"a FEN board has 10 ranks separated by '/', not {len(rows)}: {fen!r}")
        squares: list[str | None] = [None] * 90
        for index, row in enumerate(rows):
            rank, file = 9 - index, 0
            for char in row:
                if char.isdigit() and char.isascii():
                    file += int(char)
                    continue
                piece = _FEN_ALIASES.get(char, char)
                if piece.lower() not in "kabnrcp" or file > 8:
                    raise FenError(f"bad FEN rank {index + 1} ({row!r}) at {char!r}: {fen!r}")
                squares[rank * 9 + file] = piece
                file += 1
            if file != 9:
                raise FenError(f"FEN rank {index + 1} ({row!r}) covers {file} files, not 9")
        side_text = fields[1].lower() if len(fields) > 1 else "w"
        if side_text not in ("w", "r", "b"):
            raise FenError(f"FEN side to move must be w, r or b, not {fields[1]!r}")
        try:
            halfmove = int(fields[4]) if len(fields) > 4 else 0
            fullmove = int(fields[5]) if len(fields) > 5 else 1
        except ValueError:
            raise FenError(f"FEN move counters must be numbers: {fen!r}") from None
        position = cls(
            squares=tuple(squares),
            to_move=Side.BLACK if side_text == "b" else Side.RED,
            halfmove_clock=halfmove,
            fullmove=fullmove,
        )
        if general_attacked(list(position.squares), position.to_move is Side.BLACK):
            raise FenError(f"the side not to move is in check, which cannot happen: {fen!r}")
        return position

    @property
    def fen(self) -> str:
        rows: list[str] = []
        for rank in range(9, -1, -1):
            row, empty = "", 0
            for file in range(9):
                piece = self.squares[rank * 9 + file]
                if piece is None:
                    empty += 1
                    continue
                if empty:
                    row, empty = row + str(empty), 0
                row += piece
            rows.append(row + (str(empty) if empty else ""))
        side = "w" if self.to_move is Side.RED else "b"
        return f"{'/'.join(rows)} {side} - - {self.halfmove_clock} {self.fullmove}"

    def legal_moves(self) -> list[Move]:
        """Every legal move of the side to move, in square order."""
        red = self.to_move is Side.RED
        return [Move(source=s, target=t) for s, t in _legal(list(self.squares), red)]

    def in_check(self) -> bool:
        return general_attacked(list(self.squares), self.to_move is Side.RED)

    def is_legal(self, move: Move) -> bool:
        return move in self.legal_moves()

    def explain_illegal(self, move: Move) -> str:
        """Why ``move`` is not legal here, in plain English."""
        piece = self.squares[move.source]
        where = square_name(move.source)
        if piece is None:
            return f"no piece on {where}"
        if (piece.isupper()) != (self.to_move is Side.RED):
            return f"it is {self.to_move.value}'s move, the piece on {where} is the other side's"
        red = self.to_move is Side.RED
        if (move.source, move.target) not in set(_pseudo_moves(list(self.squares), red)):
            return f"the piece on {where} cannot move to {square_name(move.target)}"
        return "the move leaves the mover's general in check or facing the other general"

    def play(self, move: Move) -> Position:
        """The position after ``move``; raises ``IllegalMove`` saying why when it is not legal."""
        if not self.is_legal(move):
            raise IllegalMove(f"{move.iccs} is not legal: {self.explain_illegal(move)}")
        squares = list(self.squares)
        captured = squares[move.target]
        squares[move.target], squares[move.source] = squares[move.source], None
        # The FEN halfmove counter of the xiangqi tools counts plies since the last capture.
        halfmove = 0 if captured is not None else self.halfmove_clock + 1
        return Position(
            squares=tuple(squares),
            to_move=self.to_move.other,
            halfmove_clock=halfmove,
            fullmove=self.fullmove + (1 if self.to_move is Side.BLACK else 0),
        )

    def is_over(self) -> bool:
        """No legal move: checkmate or stalemate (困毙), both a loss for the side to move."""
        return not self.legal_moves()
