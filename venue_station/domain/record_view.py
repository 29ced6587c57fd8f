"""A game's record as the pages, the relay and the PGN see it (``RecordView``), and the pairing
of its moves with the clock's presses in a word (``pairing_dict``, ``pairing_note``): the read
side of ``records.RecordDesk``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clock_service.xiangqi import Pairing, Record, chinese, wxf
from clock_service.xiangqi.board import square_name

__all__ = ["RecordView", "board_number", "pairing_dict", "pairing_note"]


def board_number(board: str) -> int:
    """The board's number for the top-boards rule (a board id that is no number: 0)."""
    return int(board) if board.isascii() and board.isdigit() else 0


@dataclass(frozen=True)
class RecordView:
    """One game's record as it is stored, with what the pages and the relay need."""

    board: str
    game: str
    round: int
    red: str
    black: str
    required: bool
    responsible: dict[str, str] | None  # {"side", "player"} once the result is confirmed
    result: str | None
    record: Record
    pairing: Pairing
    updated_ms: int | None
    updated_by: str | None
    consent: dict[str, Any] | None  # {"by", "ms"}: the chief allowed a later or no record
    stage: str | None = None  # a knockout game's stage (knockout.stage_tag)

    @property
    def ply(self) -> int:
        return len(self.record.moves)

    def moves(self) -> list[dict[str, Any]]:
        positions = self.record.positions()
        out = []
        for i, move in enumerate(self.record.moves):
            clock = self.pairing.clocks[i]
            out.append(
                {
                    "ply": i + 1,
                    "side": positions[i].to_move.value,
                    "iccs": move.iccs,
                    "chinese": chinese(positions[i], move),
                    "wxf": wxf(positions[i], move),
                    "clock": None
                    if clock is None
                    else {"used_ms": clock.used_ms, "remaining_ms": clock.left_ms},
                }
            )
        return out

    def legal(self) -> list[dict[str, str]]:
        position = self.record.position
        return [
            {
                "iccs": m.iccs,
                "chinese": chinese(position, m),
                "wxf": wxf(position, m),
                "from": square_name(m.source),
                "to": square_name(m.target),
            }
            for m in position.legal_moves()
        ]

    def as_dict(self, *, legal: bool = True) -> dict[str, Any]:
        """The JSON of ``GET /api/records/{board}`` (``legal=False``: without the legal
        moves, as the SSE stream and the relay send it)."""
        position = self.record.position
        out: dict[str, Any] = {
            "board": self.board,
            "game": self.game,
            "round": self.round,
            "red": self.red,
            "black": self.black,
            "required": self.required,
            "responsible": self.responsible,
            "result": self.result,
            "start_fen": self.record.start_fen,
            "fen": position.fen,
            "to_move": position.to_move.value,
            "ply": self.ply,
            "in_check": position.in_check(),
            "over": position.is_over(),
            "moves": self.moves(),
            "pairing": pairing_dict(self.pairing),
            "updated_ms": self.updated_ms,
            "updated_by": self.updated_by,
            "consent": self.consent,
        }
        if legal:
            out["legal"] = self.legal()
        return out


def pairing_dict(pairing: Pairing) -> dict[str, Any]:
    """The pairing as the API and the pages have it: the verdict in a word, the counts."""
    return {
        "matched": pairing.matched,
        "verdict": pairing.verdict,
        "disagreement": pairing.disagreement,
        "moves": pairing.moves,
        "presses": pairing.presses,
    }


def pairing_note(pairing: Pairing) -> str:
    """The mismatch of moves and presses in words (a PGN tag; the view has the numbers)."""
    note = f"{pairing.moves} moves, {pairing.presses} presses"
    if pairing.disagreement is not None:
        note += f", the mover differs from the press's side from ply {pairing.disagreement}"
    return note
