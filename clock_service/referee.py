"""The referee of one game on one board: clock facts and arbiter rulings in, proposals out.

The system detects and proposes; the arbiter decides (DESIGN.md §3.5). A pause from the board or
a switched-off clock becomes a *pending* foul or forfeit, as the regulation says; the arbiter
confirms or dismisses it with :meth:`Referee.resolve`. What follows from a ruling by the letter
of the regulation (the foul that reaches the limit loses the game) is proposed at once.

Every call returns the proposals it created or changed, in order, so the node journals and
publishes exactly what the referee decided. A changed proposal keeps its id: the id names the
matter, the status says how far it got.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from clock_service.regulation import Offence, Regulation
from clock_service.side import Side

__all__ = ["Proposal", "ProposalKind", "ProposalStatus", "Referee"]


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


class Referee:
    """Applies one regulation to one game on one board. Pure: no clock, no I/O.

    ``tiebreak_game`` marks the knockout's rapid tie-break game (a draw counts as a win for the
    profile's ``knockout.tiebreak.draw_winner``).
    """

    def __init__(self, regulation: Regulation, *, tiebreak_game: bool = False) -> None:
        knockout = regulation.knockout
        if tiebreak_game and (knockout is None or knockout.tiebreak is None):
            raise ValueError(f"{regulation.name} has no tie-break game")
        self.regulation = regulation
        self.tiebreak_game = tiebreak_game
        self._proposals: dict[int, Proposal] = {}
        self._next_id = 1
        self._fouls = {Side.RED: 0, Side.BLACK: 0}
        self._late: set[Side] = set()
        self._count_start: int | None = None  # plies (half moves) when the count started
        self._count_limit = 0
        self._count_reached = False
        self._counted_plies = 0

    def __repr__(self) -> str:
        state = "finished" if self.finished else "playing"
        fouls = f"fouls red={self._fouls[Side.RED]} black={self._fouls[Side.BLACK]}"
        return f"<Referee {self.regulation.name} {state} {fouls} pending={len(self.pending())}>"

    # -- queries -----------------------------------------------------------------------------
    def fouls(self, side: Side) -> int:
        """The side's confirmed fouls in this game."""
        return self._fouls[side]

    def pending(self) -> list[Proposal]:
        return [p for p in self._proposals.values() if p.status is _PENDING]

    def proposals(self) -> list[Proposal]:
        """Every proposal of the game in its latest state, by id."""
        return list(self._proposals.values())

    def get(self, proposal_id: int) -> Proposal:
        try:
            return self._proposals[proposal_id]
        except KeyError:
            raise ValueError(f"no proposal {proposal_id} in this game") from None

    @property
    def result(self) -> Proposal | None:
        """The standing result: the latest one not dismissed."""
        results = [
            p
            for p in self._proposals.values()
            if p.kind is ProposalKind.RESULT and p.status is not _DISMISSED
        ]
        return results[-1] if results else None

    @property
    def finished(self) -> bool:
        """A result stands; clock facts are ignored from now on."""
        return self.result is not None

    def move_count(self) -> tuple[int, int] | None:
        """``(full moves counted, limit)`` of the running natural move count, if any."""
        if self._count_start is None:
            return None
        return (self._counted_plies // 2, self._count_limit)

    def late_deadline_ms(self, round_start_ms: int) -> int:
        """When a side still absent after the round's start is late (same time base in/out)."""
        return round_start_ms + self.regulation.late.ms

    def late_side(
        self, *, now_ms: int, round_start_ms: int, red_moves: int, black_moves: int
    ) -> Side | None:
        """The side that is late at ``now_ms``: red if it has not pressed its first move,
        else black if it has not; None before the deadline or when both have moved."""
        if now_ms < self.late_deadline_ms(round_start_ms):
            return None
        if red_moves == 0:
            return Side.RED
        if black_moves == 0:
            return Side.BLACK
        return None

    # -- clock facts ---------------------------------------------------------------------------
    def board_paused(self, side_on_move: Side | None, by: Side | None = None) -> list[Proposal]:
        """The clock was paused from the board, by ``by`` if the clock knows, else the side on
        move is presumed; ``side_on_move`` None means the game had not started (no offence)."""
        side = by if by is not None else side_on_move
        if side is None or side_on_move is None or self.finished:
            return []
        return self._offence(self.regulation.clock.board_pause, side, "board_pause")

    def clock_switched_off(self, side_on_move: Side | None, *, authorised: bool) -> list[Proposal]:
        """The clock face was switched off during the game (not a node restart)."""
        if authorised or side_on_move is None or self.finished:
            return []
        return self._offence(self.regulation.clock.switch_off, side_on_move, "power_switch")

    def flag_fell(self, side: Side) -> list[Proposal]:
        """First flag: the flagged side loses, proposed for the arbiter to confirm."""
        if self.finished:
            return []
        return [self._new(ProposalKind.RESULT, "flag", _PENDING, winner=side.other)]

    def late(self, side: Side) -> list[Proposal]:
        """The side was absent at the late deadline: a pending forfeit, once per side."""
        if self.finished or side in self._late:
            return []
        self._late.add(side)
        return [self._new(ProposalKind.FORFEIT, "late", _PENDING, side=side)]

    def start_move_count(
        self, *, red_moves: int, black_moves: int, limit: int | None = None
    ) -> list[Proposal]:
        """The arbiter starts (or restarts) the natural move count at the current move.

        The count is in full moves (回合) from here; the limit is the profile's unless given.
        Checks cannot be seen by the clock: the arbiter accounts for the claimant's checks
        (``regulation.move_limit.claimant_checks_counted``) by choosing when to start or the
        limit."""
        limit = self.regulation.move_limit.moves if limit is None else limit
        if limit < 1:
            raise ValueError(f"move count limit must be at least 1, not {limit}")
        _check_moves(red_moves, black_moves)
        if self.finished:
            return []
        self._count_start = red_moves + black_moves
        self._count_limit = limit
        self._count_reached = False
        self._counted_plies = 0
        kind = ProposalKind.MOVE_COUNT
        return [self._new(kind, "started", _CONFIRMED, limit=limit, moves=black_moves)]

    def moves_made(self, red_moves: int, black_moves: int) -> list[Proposal]:
        """The completed moves of each side now; reports a move count reaching its limit."""
        _check_moves(red_moves, black_moves)
        if self._count_start is None or self._count_reached or self.finished:
            return []
        self._counted_plies = max(0, red_moves + black_moves - self._count_start)
        if self._counted_plies // 2 < self._count_limit:
            return []
        self._count_reached = True
        kind = ProposalKind.MOVE_COUNT
        return [self._new(kind, "reached", _CONFIRMED, limit=self._count_limit, moves=black_moves)]

    # -- arbiter rulings -------------------------------------------------------------------------
    def arbiter_foul(self, side: Side, reason: str) -> list[Proposal]:
        """A foul the arbiter saw (e.g. pressing without moving): confirmed at once."""
        if reason not in self.regulation.fouls.reasons:
            listed = ", ".join(self.regulation.fouls.reasons)
            raise ValueError(f"{reason!r} is not a foul under {self.regulation.name} ({listed})")
        return self._confirm_foul(self._new(ProposalKind.FOUL, reason, _PENDING, side=side))

    def resolve(
        self, proposal_id: int, status: ProposalStatus | str, *, side: Side | None = None
    ) -> list[Proposal]:
        """Confirm or dismiss a pending proposal; ``side`` re-attributes a foul or forfeit.

        Resolving again with the same status yields nothing; changing a ruling already made
        raises ``ValueError`` (the arbiter enters a result to override one)."""
        status = ProposalStatus.parse(status) if isinstance(status, str) else status
        if status is _PENDING:
            raise ValueError("a proposal can only be resolved as confirmed or dismissed")
        p = self.get(proposal_id)
        if p.status is status:
            return []
        if p.status is not _PENDING:
            raise ValueError(f"proposal {proposal_id} is already {p.status}, not {status}")
        if side is not None:
            if p.kind not in (ProposalKind.FOUL, ProposalKind.FORFEIT):
                raise ValueError(f"a {p.kind} proposal has no side to attribute")
            p = dataclasses.replace(p, side=side)
        if p.kind is ProposalKind.FOUL and status is _CONFIRMED:
            return self._confirm_foul(p)
        if p.kind is ProposalKind.FOUL:
            assert p.side is not None
            return [self._store(dataclasses.replace(p, status=status, count=self.fouls(p.side)))]
        out = [self._store(dataclasses.replace(p, status=status))]
        if p.kind is ProposalKind.FORFEIT and status is _CONFIRMED:
            assert p.side is not None
            out.append(self._new(ProposalKind.RESULT, p.reason, _CONFIRMED, winner=p.side.other))
        return out

    def result_entered(self, winner: Side | None, reason: str, *, moves: int) -> list[Proposal]:
        """The arbiter enters (or overrides) the result; ``moves`` are the full moves played.

        In a tie-break game a draw is a win for the profile's draw winner; otherwise a draw
        before the profile's minimum moves also raises a pending ``draw_too_early`` warning."""
        if not reason:
            raise ValueError("a result needs a reason")
        if moves < 0:
            raise ValueError(f"moves must not be negative, not {moves}")
        out: list[Proposal] = []
        minimum = self.regulation.draw.min_moves
        if winner is None and self.tiebreak_game:
            knockout = self.regulation.knockout
            assert knockout is not None and knockout.tiebreak is not None
            winner = knockout.tiebreak.draw_winner
            if winner is not None:
                reason = f"draw_{winner.value}_wins"
        elif winner is None and moves < minimum:
            kind = ProposalKind.WARNING
            out.append(self._new(kind, "draw_too_early", _PENDING, limit=minimum, moves=moves))
        out.append(self._new(ProposalKind.RESULT, reason, _CONFIRMED, winner=winner))
        return out

    # -- journal -----------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Everything the referee knows, JSON-able; :meth:`restore` rebuilds it."""
        return {
            "regulation": self.regulation.name,
            "tiebreak_game": self.tiebreak_game,
            "proposals": [p.to_dict() for p in self._proposals.values()],
            "next_id": self._next_id,
            "fouls": {side.value: n for side, n in self._fouls.items()},
            "late": sorted(side.value for side in self._late),
            "count": None
            if self._count_start is None
            else [self._count_start, self._count_limit, self._count_reached, self._counted_plies],
        }

    @classmethod
    def restore(cls, regulation: Regulation, snapshot: dict[str, Any]) -> Referee:
        if snapshot["regulation"] != regulation.name:
            raise ValueError(f"snapshot is for {snapshot['regulation']!r}, not {regulation.name!r}")
        ref = cls(regulation, tiebreak_game=bool(snapshot["tiebreak_game"]))
        for data in snapshot["proposals"]:
            ref._store(Proposal.from_dict(data))
        ref._next_id = int(snapshot["next_id"])
        ref._fouls = {Side.parse(k): int(v) for k, v in snapshot["fouls"].items()}
        ref._late = {Side.parse(s) for s in snapshot["late"]}
        if snapshot["count"] is not None:
            start, limit, reached, counted = snapshot["count"]
            ref._count_start, ref._count_limit = int(start), int(limit)
            ref._count_reached, ref._counted_plies = bool(reached), int(counted)
        return ref

    # -- inside ------------------------------------------------------------------------------------
    def _new(
        self, kind: ProposalKind, reason: str, status: ProposalStatus, **fields: Any
    ) -> Proposal:
        proposal = Proposal(self._next_id, kind, reason, status, **fields)
        self._next_id += 1
        return self._store(proposal)

    def _store(self, proposal: Proposal) -> Proposal:
        self._proposals[proposal.id] = proposal
        return proposal

    def _offence(self, offence: Offence, side: Side, reason: str) -> list[Proposal]:
        if offence is Offence.FOUL:
            kind = ProposalKind.FOUL
            return [self._new(kind, reason, _PENDING, side=side, count=self.fouls(side))]
        if offence is Offence.FORFEIT:
            return [self._new(ProposalKind.FORFEIT, reason, _PENDING, side=side)]
        return []

    def _confirm_foul(self, foul: Proposal) -> list[Proposal]:
        side = foul.side
        assert side is not None
        # Decided before the count moves: after a result a limit-reaching foul is only a
        # pending forfeit, for the arbiter to weigh against the result that stands.
        finished = self.finished
        self._fouls[side] += 1
        out = [self._store(dataclasses.replace(foul, status=_CONFIRMED, count=self._fouls[side]))]
        if self._fouls[side] != self.regulation.fouls.forfeit_at:
            return out
        if finished:
            out.append(self._new(ProposalKind.FORFEIT, "fouls", _PENDING, side=side))
        else:
            out.append(self._new(ProposalKind.FORFEIT, "fouls", _CONFIRMED, side=side))
            out.append(self._new(ProposalKind.RESULT, "fouls", _CONFIRMED, winner=side.other))
        return out


def _check_moves(red_moves: int, black_moves: int) -> None:
    # Red moves first, so black has made as many moves as red or one fewer.
    if not 0 <= red_moves - black_moves <= 1 or black_moves < 0:
        raise ValueError(f"impossible move counts: red {red_moves}, black {black_moves}")
