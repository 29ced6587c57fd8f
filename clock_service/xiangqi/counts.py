"""The natural move limit and the early-draw check counted on a game record (录谱, issue 29).

The clock counts presses and cannot see checks. Where a game has a record that matches the
clock's presses (``presses.pair_with_presses``), the moves are known, and so are the checks
(``Position.in_check`` after each move): the natural move count (自然限着) leaves out the
claimant's checks the profile does not count (``move_limit.claimant_checks_counted``: Meishan
none of them, "提出方的'将军'着数不计"; Wulong at most 10, "最多只计算10着"; ``None``: all of them
count), and the early-draw check (Wulong 三、1 "严禁20回合内无故协议和棋") takes the record's
full moves.

A check left out takes its 回合 with it: the claimant's checking move and the other side's
reply to it are not counted (a 回合 is a move of each side). The arbiter rules on what the
station reports either way.

A record that lags the clock by a press or two (a recorder entering live, a move behind) is
counted with the presses beyond it as the clock counts them; once that count reaches the limit
the station waits for the record (the last press may be a check). A record ahead of the presses
(a move entered before its press, presses still on their way to the station) is counted up to
the presses: the moves not pressed yet are not counted yet. A record further behind, or one
whose mover differs from a press's side is not counted: the clock's presses are (the node's
count, the fallback).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from clock_service.side import Side
from clock_service.xiangqi.presses import Pairing
from clock_service.xiangqi.record import Record

__all__ = ["MAX_LAG", "MoveCount", "claimant_checks", "early_draw_count", "natural_move_count"]

# How many presses a record may lag and still be the count: a recorder at the board is about a
# move behind; further behind, the record is not being kept live and the clock counts.
MAX_LAG = 2

Source = Literal["record", "presses"]


@dataclass(frozen=True, slots=True)
class MoveCount:
    """A natural move count (full moves, 回合) since the count's start."""

    source: Source  # what was counted: the record's moves, or the clock's presses
    plies: int  # half moves since the count's start (the clock's presses)
    full_moves: int  # 回合 counted
    checks: int  # the claimant's checks since the start (a record only)
    uncounted: int  # of them, left out by the profile
    claimant: Side | None
    reached: bool
    waiting: bool  # at the limit only with presses the record does not have yet

    def as_detail(self) -> dict[str, Any]:
        """What the station's move_limit alert says of the count it used."""
        return {
            "count": self.source,
            "counted": self.full_moves,
            "plies": self.plies,
            "checks": self.checks,
            "uncounted_checks": self.uncounted,
            "claimant": None if self.claimant is None else self.claimant.value,
        }


def claimant_checks(record: Record, *, start_ply: int, claimant: Side) -> list[int]:
    """The plies (1-based) after ``start_ply`` where ``claimant`` gave check."""
    positions = record.positions()
    return [
        ply
        for ply in range(start_ply + 1, len(record.moves) + 1)
        if positions[ply - 1].to_move is claimant and positions[ply].in_check()
    ]


def natural_move_count(
    record: Record | None,
    pairing: Pairing | None,
    *,
    presses: int,
    start_ply: int,
    limit: int,
    claimant: Side | None,
    checks_counted: int | None,
    max_lag: int = MAX_LAG,
) -> MoveCount:
    """The count since ``start_ply`` (the presses before the arbiter started it), on the
    record where it agrees with the clock, else on the presses."""
    if limit < 1:
        raise ValueError(f"a move limit is at least 1, not {limit}")
    if presses < 0 or start_ply < 0:
        raise ValueError(f"presses and the start must not be negative: {presses}, {start_ply}")
    plies = max(0, presses - start_ply)
    lag = presses - len(record.moves) if record is not None else None
    usable = (
        record is not None
        and pairing is not None
        and pairing.disagreement is None
        and lag is not None
        and lag <= max_lag  # ahead (lag < 0): counted up to the presses
        and len(record.moves) > 0
    )
    if not usable or record is None:
        full = plies // 2
        return MoveCount("presses", plies, full, 0, 0, claimant, full >= limit, False)
    checks = (
        [] if claimant is None else claimant_checks(record, start_ply=start_ply, claimant=claimant)
    )
    checks = [ply for ply in checks if ply <= presses]  # a record ahead: its pressed moves
    left_out = [] if checks_counted is None else checks[checks_counted:]
    # each check left out, and the reply to it where there is one yet
    dropped = sum(1 + (1 if ply < presses else 0) for ply in left_out)
    full = (plies - dropped) // 2
    at_limit = full >= limit
    waiting = at_limit and lag is not None and lag > 0
    return MoveCount(
        "record",
        plies,
        full,
        len(checks),
        len(left_out),
        claimant,
        at_limit and not waiting,
        waiting,
    )


def early_draw_count(
    record: Record | None, pairing: Pairing | None, *, press_full_moves: int
) -> tuple[Source, int]:
    """The full moves an agreed draw came after: the record's where it matches the presses
    (its plies halved, as the clock counts, a 让二先 receiver's given moves left out as the
    referee leaves them out), else the clock's."""
    if record is not None and record.moves and pairing is not None and pairing.matched:
        plies = len(record.moves)
        if record.handicap is not None:
            movers = [p.to_move for p in record.positions()[:-1]]
            plies -= record.handicap.extra_plies(movers.count(Side.RED), movers.count(Side.BLACK))
        return "record", plies // 2
    return "presses", press_full_moves
