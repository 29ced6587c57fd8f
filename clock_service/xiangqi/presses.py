"""Moves meet the clock: move N of a record pairs with press N of the game's clock.

Each paired move gets its clock (time left after it, time it took) for ``[%clk]``/``[%emt]``.
A record with more or fewer moves than presses, or whose move N was made by the other side
than press N, is reported as it is, never merged silently: the pairing stops at the first
disagreement and the view shows both counts. A 让二先 game's record carries its handicap
(``Record.handicap``): its receiver's given moves in a row pair with the clock's presses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from clock_service.side import Side
from clock_service.xiangqi.record import PlyClock, Record

__all__ = ["Pairing", "Press", "pair_with_presses"]


@dataclass(frozen=True, slots=True)
class Press:
    """One press of the clock: ``side`` ended its move, leaving ``remaining_ms``."""

    side: Side
    used_ms: int
    remaining_ms: int

    def __post_init__(self) -> None:
        if self.used_ms < 0 or self.remaining_ms < 0:
            raise ValueError(
                f"press times must not be negative: {self.used_ms}, {self.remaining_ms}"
            )


@dataclass(frozen=True, slots=True)
class Pairing:
    clocks: tuple[PlyClock | None, ...]  # one per recorded move; None where no press pairs
    moves: int
    presses: int
    disagreement: int | None  # the first ply (1-based) whose mover is not the press's side

    @property
    def matched(self) -> bool:
        """Every move has its press and every press its move."""
        return self.moves == self.presses and self.disagreement is None

    @property
    def verdict(self) -> Literal["matched", "more", "fewer", "differs"]:
        """In a word: ``more`` / ``fewer`` moves than presses, or as many but a mover who
        differs from the press's side (``disagreement`` says from which ply)."""
        if self.matched:
            return "matched"
        if self.moves != self.presses:
            return "more" if self.moves > self.presses else "fewer"
        return "differs"


def pair_with_presses(record: Record, presses: Sequence[Press]) -> Pairing:
    positions = record.positions()
    clocks: list[PlyClock | None] = []
    disagreement: int | None = None
    for ply, _move in enumerate(record.moves):
        mover = positions[ply].to_move
        if disagreement is None and ply < len(presses) and presses[ply].side is not mover:
            disagreement = ply + 1
        if disagreement is None and ply < len(presses):
            press = presses[ply]
            clocks.append(PlyClock(left_ms=press.remaining_ms, used_ms=press.used_ms))
        else:
            clocks.append(None)
    return Pairing(
        clocks=tuple(clocks),
        moves=len(record.moves),
        presses=len(presses),
        disagreement=disagreement,
    )
