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
from typing import Any

from clock_service.handicap import Handicap, full_moves
from clock_service.proposal import Proposal, ProposalKind, ProposalStatus
from clock_service.regulation import Offence, Regulation
from clock_service.side import Side

__all__ = ["DOUBLE_FORFEIT", "Proposal", "ProposalKind", "ProposalStatus", "Referee"]

DOUBLE_FORFEIT = "double_forfeit"  # a result with no winner in which both sides lose (0:0)

_PENDING = ProposalStatus.PENDING
_CONFIRMED = ProposalStatus.CONFIRMED
_DISMISSED = ProposalStatus.DISMISSED


class Referee:
    """Applies one regulation to one game on one board. Pure: no clock, no I/O.

    ``tiebreak_game`` marks the knockout's rapid tie-break game (a draw counts as a win for the
    profile's ``knockout.tiebreak.draw_winner``); ``handicap`` a handicap game (让二先), whose
    given moves are not full moves.
    """

    def __init__(
        self,
        regulation: Regulation,
        *,
        tiebreak_game: bool = False,
        handicap: Handicap | None = None,
    ) -> None:
        knockout = regulation.knockout
        if tiebreak_game and (knockout is None or knockout.tiebreak is None):
            raise ValueError(f"{regulation.name} has no tie-break game")
        self.regulation = regulation
        self.tiebreak_game = tiebreak_game
        self.handicap = handicap
        self._proposals: dict[int, Proposal] = {}
        self._next_id = 1
        self._fouls = {Side.RED: 0, Side.BLACK: 0}
        self._reason_fouls: dict[tuple[Side, str], int] = {}  # confirmed fouls per reason
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
    def stands_on_fouls(self) -> bool:
        """A result or forfeit not dismissed is a loss by fouls (taken back by the foul's)."""
        return any(
            p.kind in (ProposalKind.RESULT, ProposalKind.FORFEIT)
            and p.status is not _DISMISSED
            and self.regulation.loss_still_reached(p.reason, total=0, per_reason={}) is not None
            for p in self._proposals.values()
        )

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

    def late_sides(
        self, *, now_ms: int, round_start_ms: int, red_moves: int, black_moves: int
    ) -> tuple[Side, ...]:
        """The sides late at ``now_ms`` (“开赛15分钟未到场者判负” applies to each player).

        Red is late without a first move. Black is late without a first move of its own once
        red has moved; when neither has moved the clock cannot tell whether black is seated,
        so both are proposed and the arbiter dismisses the one who is there. Empty before the
        deadline or when both have moved."""
        if now_ms < self.late_deadline_ms(round_start_ms):
            return ()
        if red_moves == 0:
            return (Side.RED, Side.BLACK) if black_moves == 0 else (Side.RED,)
        return (Side.BLACK,) if black_moves == 0 else ()

    def late_side(
        self, *, now_ms: int, round_start_ms: int, red_moves: int, black_moves: int
    ) -> Side | None:
        """The first of :meth:`late_sides` (red before black), or None."""
        sides = self.late_sides(
            now_ms=now_ms, round_start_ms=round_start_ms, red_moves=red_moves,
            black_moves=black_moves,
        )  # fmt: skip
        return sides[0] if sides else None

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
        if self._forfeit_of(side_on_move, "power_switch") is not None:
            # switched off again while its forfeit waits (across a node restart too: the
            # referee's proposals are in the checkpoint): one offence for the arbiter to rule,
            # not a second alert whose ruling writes the loss twice (an outsider)
            return []
        return self._offence(self.regulation.clock.switch_off, side_on_move, "power_switch")

    def flag_fell(self, side: Side) -> list[Proposal]:
        """First flag: the flagged side loses, proposed for the arbiter to confirm."""
        if self.finished:
            return []
        return [self._new(ProposalKind.RESULT, "flag", _PENDING, winner=side.other)]

    def late(self, side: Side) -> list[Proposal]:
        """The side was absent at the late deadline: a pending forfeit, once per side. When
        the other side is late too, a pending double forfeit (0:0) is proposed with it."""
        if self.finished or side in self._late:
            return []
        self._late.add(side)
        out = [self._new(ProposalKind.FORFEIT, "late", _PENDING, side=side)]
        if self._forfeit_of(side.other, "late") is not None:
            out.append(self._new(ProposalKind.RESULT, DOUBLE_FORFEIT, _PENDING, winner=None))
        return out

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
        self._check_moves(red_moves, black_moves)
        if self.finished:
            return []
        self._count_start = self._plies(red_moves, black_moves)
        self._count_limit = limit
        self._count_reached = False
        self._counted_plies = 0
        kind = ProposalKind.MOVE_COUNT
        return [self._new(kind, "started", _CONFIRMED, limit=limit, moves=black_moves)]

    def moves_made(self, red_moves: int, black_moves: int) -> list[Proposal]:
        """The completed moves of each side now; reports a move count reaching its limit."""
        self._check_moves(red_moves, black_moves)
        if self._count_start is None or self._count_reached or self.finished:
            return []
        self._counted_plies = max(0, self._plies(red_moves, black_moves) - self._count_start)
        if self._counted_plies // 2 < self._count_limit:
            return []
        self._count_reached = True
        kind = ProposalKind.MOVE_COUNT
        return [self._new(kind, "reached", _CONFIRMED, limit=self._count_limit, moves=black_moves)]

    # -- arbiter rulings -------------------------------------------------------------------------
    def arbiter_foul(self, side: Side, reason: str) -> list[Proposal]:
        """A foul the arbiter saw (e.g. pressing without moving): confirmed at once."""
        self.regulation.reason(reason, kind="foul")  # ValueError listing the codes
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
        if p.kind is ProposalKind.FORFEIT:
            assert p.side is not None
            out += self._forfeit_ruled(p.side, p.reason, status)
        return out

    def withdraw(self, proposal_id: int) -> list[Proposal]:
        """The arbiter takes back a confirmed foul (recorded by mistake, or confirmed wrongly):
        it is dismissed and counts no more. A loss by fouls it completed that the fouls left no
        longer reach goes with it: that forfeit and the result it made are dismissed too (a
        result entered since stands); a 0:0 it made with the other side's confirmed forfeit
        becomes that side's loss alone. Withdrawn again: nothing. Anything but a foul, or a
        foul still pending (dismiss it instead): ``ValueError``. A confirmed result:
        :meth:`_take_back_result`."""
        p = self.get(proposal_id)
        if p.kind is ProposalKind.RESULT:
            return self._take_back_result(p)
        if p.kind is not ProposalKind.FOUL or p.side is None:
            raise ValueError(f"proposal {proposal_id} is a {p.kind.value}, not a foul")
        if p.status is _DISMISSED:
            return []
        if p.status is _PENDING:
            raise ValueError(f"foul {proposal_id} is not confirmed: dismiss it instead")
        side = p.side
        self._fouls[side] -= 1
        self._reason_fouls[(side, p.reason)] -= 1
        out = [self._store(dataclasses.replace(p, status=_DISMISSED, count=self._fouls[side]))]
        for forfeit in list(self._proposals.values()):
            if (
                forfeit.kind is not ProposalKind.FORFEIT
                or forfeit.side is not side
                or forfeit.status is _DISMISSED
                or self.regulation.loss_still_reached(
                    forfeit.reason, total=self._fouls[side], per_reason=self._reasons_of(side)
                )
                is not False  # another cause (None), or the fouls left still reach it
            ):
                continue
            out.append(self._store(dataclasses.replace(forfeit, status=_DISMISSED)))
            result = self.result  # the loss it made, unless a result entered since stands
            if result is None or result.status is not _CONFIRMED:
                continue
            if result.reason == forfeit.reason and result.winner is side.other:
                out.append(self._store(dataclasses.replace(result, status=_DISMISSED)))
            elif result.reason == DOUBLE_FORFEIT:
                out.append(self._store(dataclasses.replace(result, status=_DISMISSED)))
                other = self._forfeit_of(side.other)
                if other is not None and other.status is _CONFIRMED:
                    kind = ProposalKind.RESULT
                    out.append(self._new(kind, other.reason, _CONFIRMED, winner=side))
        return out

    def _take_back_result(self, p: Proposal) -> list[Proposal]:
        """A result confirmed by mistake (entered on the wrong board, a flag confirmed while its
        clock was at fault) taken back: it, every other confirmed result of the game and every
        confirmed forfeit are dismissed, and the game has none — it goes on (a proposal still
        pending stays for the arbiter). A loss by fouls is taken back by withdrawing the foul
        (``ValueError``, as for a result not confirmed)."""
        if p.status is _DISMISSED:
            return []
        if p.status is _PENDING:
            raise ValueError(f"result {p.id} is not confirmed: dismiss it instead")
        if self.stands_on_fouls:
            raise ValueError(f"result {p.id} is a loss by fouls: withdraw the foul instead")
        standing = [q for q in self._proposals.values() if q.status is not _DISMISSED]
        made = [p] + [q for q in standing if q.status is _CONFIRMED and q is not p]
        # a double forfeit still proposed waited on a forfeit now dismissed: it goes too
        made += [q for q in standing if q.status is _PENDING and q.reason == DOUBLE_FORFEIT]
        made = [q for q in made if q.kind in (ProposalKind.RESULT, ProposalKind.FORFEIT)]
        made.sort(key=lambda q: q.kind is ProposalKind.FORFEIT)  # its own first, results, forfeits
        return [self._store(dataclasses.replace(q, status=_DISMISSED)) for q in made]

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
        if reason == DOUBLE_FORFEIT:
            if winner is not None:
                raise ValueError("a double forfeit has no winner")
        elif winner is None and self.tiebreak_game:
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
            "reason_fouls": [
                [s.value, r, n]
                for (s, r), n in sorted(
                    self._reason_fouls.items(), key=lambda item: (item[0][0].value, item[0][1])
                )
            ],
            "handicap": None if self.handicap is None else self.handicap.as_dict(),
            "count": None
            if self._count_start is None
            else [self._count_start, self._count_limit, self._count_reached, self._counted_plies],
        }

    @classmethod
    def restore(cls, regulation: Regulation, snapshot: dict[str, Any]) -> Referee:
        if snapshot["regulation"] != regulation.name:
            raise ValueError(f"snapshot is for {snapshot['regulation']!r}, not {regulation.name!r}")
        given = snapshot.get("handicap")
        handicap = None if given is None else Handicap.parse(given)
        ref = cls(regulation, tiebreak_game=bool(snapshot["tiebreak_game"]), handicap=handicap)
        for data in snapshot["proposals"]:
            ref._store(Proposal.from_dict(data))
        ref._next_id = int(snapshot["next_id"])
        ref._fouls = {Side.parse(k): int(v) for k, v in snapshot["fouls"].items()}
        ref._late = {Side.parse(s) for s in snapshot["late"]}
        for side, reason, n in snapshot.get("reason_fouls", ()):  # absent in older journals
            ref._reason_fouls[(Side.parse(side), str(reason))] = int(n)
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
        key = (side, foul.reason)
        self._reason_fouls[key] = self._reason_fouls.get(key, 0) + 1
        out = [self._store(dataclasses.replace(foul, status=_CONFIRMED, count=self._fouls[side]))]
        reason = self._loss_reached(side, foul.reason)
        if reason is None:
            return out
        if finished:
            out.append(self._new(ProposalKind.FORFEIT, reason, _PENDING, side=side))
        else:
            out.append(self._new(ProposalKind.FORFEIT, reason, _CONFIRMED, side=side))
            out.append(self._new(ProposalKind.RESULT, reason, _CONFIRMED, winner=side.other))
        return out

    def _loss_reached(self, side: Side, foul_reason: str) -> str | None:
        """The forfeit reason this confirmed foul just reached (``Regulation.loss_reached``)."""
        return self.regulation.loss_reached(
            foul_reason, total=self._fouls[side], of_reason=self._reason_fouls[(side, foul_reason)]
        )

    def _reasons_of(self, side: Side) -> dict[str, int]:
        """The side's confirmed fouls by reason."""
        return {reason: n for (s, reason), n in self._reason_fouls.items() if s is side}

    def _forfeit_of(self, side: Side, reason: str | None = None) -> Proposal | None:
        """The side's latest forfeit not dismissed (of this reason, if given)."""
        found = [
            p
            for p in self._proposals.values()
            if p.kind is ProposalKind.FORFEIT
            and p.side is side
            and p.status is not _DISMISSED
            and (reason is None or p.reason == reason)
        ]
        return found[-1] if found else None

    def _double_proposal(self) -> Proposal | None:
        for p in self._proposals.values():
            if (
                p.kind is ProposalKind.RESULT
                and p.reason == DOUBLE_FORFEIT
                and p.status is _PENDING
            ):
                return p
        return None

    def _forfeit_ruled(self, side: Side, reason: str, status: ProposalStatus) -> list[Proposal]:
        """What follows a forfeit ruling: the other side wins, or both lose (0:0) when the
        other side is forfeited too; while a proposed double forfeit waits on the other
        side's ruling, nothing is decided yet."""
        other = self._forfeit_of(side.other)
        double = self._double_proposal()
        if status is _DISMISSED:
            if double is None:
                return []
            out = [self._store(dataclasses.replace(double, status=_DISMISSED))]
            if other is not None and other.status is _CONFIRMED:
                out.append(self._new(ProposalKind.RESULT, other.reason, _CONFIRMED, winner=side))
            return out
        if other is not None and other.status is _CONFIRMED:
            if double is not None:
                return [self._store(dataclasses.replace(double, status=_CONFIRMED))]
            return [self._new(ProposalKind.RESULT, DOUBLE_FORFEIT, _CONFIRMED, winner=None)]
        if double is not None:
            return []  # the other side's lateness is still to be ruled
        return [self._new(ProposalKind.RESULT, reason, _CONFIRMED, winner=side.other)]

    def full_moves(self, red_moves: int, black_moves: int) -> int:
        """Full moves (回合) played, the handicap's given moves not counted."""
        return full_moves(red_moves, black_moves, self.handicap)

    def _plies(self, red_moves: int, black_moves: int) -> int:
        extra = self.handicap.extra_plies(red_moves, black_moves) if self.handicap else 0
        return red_moves + black_moves - extra

    def _check_moves(self, red_moves: int, black_moves: int) -> None:
        extra = self.handicap.extra_plies(red_moves, black_moves) if self.handicap else 0
        if self.handicap is not None and self.handicap.receiver is Side.RED:
            _check_moves(red_moves - extra, black_moves)
        else:
            _check_moves(red_moves, black_moves - extra)


def _check_moves(red_moves: int, black_moves: int) -> None:
    # Red moves first, so black has made as many moves as red or one fewer.
    if not 0 <= red_moves - black_moves <= 1 or black_moves < 0:
        raise ValueError(f"impossible move counts: red {red_moves}, black {black_moves}")
