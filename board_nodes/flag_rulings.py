"""What follows the arbiter's ruling on a flag whose loss was dismissed: the game goes on.

Two ways on (DESIGN.md §3.5: the system proposes, the arbiter decides):

- the flagged side's own press from before the flag, which reached the clock only after the
  flag stood (``FlagGuard.late_press``, published as the ``press_before_flag`` warning):
  dismissing the flag's loss takes the press at its own instant (``take_late_press``) — the
  side keeps the time it had then, with the move's bonus, and the other side is charged from
  the press to the flag;
- otherwise the arbiter gives the flagged side time with ``adjust`` (``reopen_after_flag``).

Either way the clock then waits, paused and held by the arbiter, for ``resume``.
"""

from __future__ import annotations

import logging

from board_nodes.board import Board
from board_nodes.board_phase import HeldBy
from board_nodes.flag_guard import FlagGuard
from clock_service import ClockError, Side

__all__ = ["flag_loss_pending", "flag_without_result", "reopen_after_flag", "take_late_press"]

log = logging.getLogger(__name__)


def flag_without_result(board: Board) -> Side | None:
    """The side whose flag stopped this game while no result stands (pending or dismissed)."""
    if board.clock is None or board.result is not None:
        return None
    return FlagGuard.standing(board.clock)


def flag_loss_pending(board: Board) -> bool:
    """The flag's proposed loss waits for the arbiter's ruling."""
    referee = board.referee
    return referee is not None and any(p.reason == "flag" for p in referee.pending())


def reopen_after_flag(board: Board, delta_ms: int) -> None:
    """The flagged side gets ``delta_ms``; the clock waits, held by the arbiter."""
    assert board.clock is not None
    board.held_by = HeldBy.ARBITER
    board.flag.forget()  # a press from before it is no news now
    board.emit_clock_events(board.clock.reopen(delta_ms), by="arbiter")


def take_late_press(board: Board) -> bool:
    """After the flag's loss was dismissed: take the flagged side's press from before the flag,
    if one came in late, at its own instant. False when there is none to take (or its time
    control cannot give it back: the arbiter then gives time with ``adjust``)."""
    late, flagged = board.flag.late_press, flag_without_result(board)
    if late is None or flagged is None or late[0] is not flagged or flag_loss_pending(board):
        return False
    if board.flag.other_pressed:  # both pressed in the dark: the order is not the clock's
        log.warning("board %s: both sides pressed before the flag: the arbiter adjusts", board.id)
        return False
    assert board.clock is not None
    try:
        events = board.clock.take_late_press(late[1])
    except ClockError as exc:
        log.warning("board %s: the late press stays the arbiter's to weigh: %s", board.id, exc)
        return False
    board.held_by = HeldBy.ARBITER
    board.flag.forget()
    board.emit_clock_events(events, by="arbiter", moved_at=late[1])
    return True
