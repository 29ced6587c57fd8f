"""What the referee proposes: a foul, forfeit, result, move count or warning, and how far it got.

A proposal keeps its ``id`` when its status changes (the id names the matter); ``to_wire()``
gives the event ``(type, data)`` of DESIGN.md §4.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from clock_service.side import Side

__all__ = ["Proposal", "ProposalKind", "ProposalStatus"]


class ProposalKind(enum.Enum):
    """What a proposal is about; the value is its wire event type."""

    FOUL = "foul"
    FORFEIT = "forfeit"
    RESULT = "result"
    MOVE_COUNT = "move_count"
    WARNING = "warning"

    def __str__(self) -> str:
        return self.value


class ProposalStatus(enum.Enum):
    PENDING = "pending"
    CONFIRMED = "confirmed"
    DISMISSED = "dismissed"

    @classmethod
    def parse(cls, text: str) -> ProposalStatus:
        try:
            return cls(text)
        except ValueError:
            raise ValueError(
                f"status must be 'pending', 'confirmed' or 'dismissed', not {text!r}"
            ) from None

    def __str__(self) -> str:
        return self.value


_PENDING = ProposalStatus.PENDING
_CONFIRMED = ProposalStatus.CONFIRMED
_DISMISSED = ProposalStatus.DISMISSED


@dataclasses.dataclass(frozen=True)
class Proposal:
    """One foul, forfeit, result, move count or warning, as far as it has got.

    ``count`` is the side's confirmed fouls after this (fouls only); ``winner`` the winner of a
    result (None: a draw); ``limit`` the move count's limit or a warning's minimum; ``moves`` the
    full moves at which a move count started or at which an early draw was entered.
    """

    id: int
    kind: ProposalKind
    reason: str
    status: ProposalStatus = _CONFIRMED
    side: Side | None = None
    count: int | None = None
    winner: Side | None = None
    limit: int | None = None
    moves: int | None = None

    def __repr__(self) -> str:
        parts = [f"#{self.id}", self.kind.value]
        if self.side is not None:
            parts.append(self.side.value)
        if self.kind is ProposalKind.RESULT:
            parts.append(f"winner={self.winner.value if self.winner else 'draw'}")
        parts += [self.reason, self.status.value]
        for name in ("count", "limit", "moves"):
            if getattr(self, name) is not None:
                parts.append(f"{name}={getattr(self, name)}")
        return f"<Proposal {' '.join(parts)}>"

    def to_wire(self) -> tuple[str, dict[str, Any]]:
        """The event ``(type, data)`` of DESIGN.md §4 (the node adds ``ref`` to rulings)."""
        side = self.side.value if self.side is not None else None
        kind = self.kind
        if kind is ProposalKind.FOUL:
            data = {"side": side, "reason": self.reason, "status": self.status.value}
            return "foul", data | {"count": self.count}
        if kind is ProposalKind.FORFEIT:
            return "forfeit", {"side": side, "reason": self.reason, "status": self.status.value}
        if kind is ProposalKind.RESULT:
            winner = self.winner.value if self.winner is not None else None
            return "result", {"winner": winner, "reason": self.reason}
        if kind is ProposalKind.MOVE_COUNT:
            return "move_count", {"status": self.reason, "limit": self.limit, "at_move": self.moves}
        detail = f"moves={self.moves} min_moves={self.limit}"
        return "warning", {"reason": self.reason, "side": side, "detail": detail}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able form for the journal; :meth:`from_dict` reads it back."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind.value, "reason": self.reason}
        out["status"] = self.status.value
        for name in ("side", "winner"):
            value = getattr(self, name)
            out[name] = value.value if value is not None else None
        for name in ("count", "limit", "moves"):
            out[name] = getattr(self, name)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proposal:
        def side(key: str) -> Side | None:
            return Side.parse(data[key]) if data[key] is not None else None

        return cls(
            id=int(data["id"]),
            kind=ProposalKind(data["kind"]),
            reason=str(data["reason"]),
            status=ProposalStatus.parse(data["status"]),
            side=side("side"),
            count=data["count"],
            winner=side("winner"),
            limit=data["limit"],
            moves=data["moves"],
        )
