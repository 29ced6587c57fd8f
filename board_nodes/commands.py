"""Apply a validated command (DESIGN.md §4) to a board.

Each handler checks that the command can be applied now and raises ``CommandError`` with the
reason before changing anything (the link turns that into ``ok: false``); else it asks the
board, through the board's method of the same name, to do it and journal what it did. A
command that fails after all (an event the wire refuses: a bug, not the arbiter's) leaves the
board as its journal holds it, never as the failure found it (``roll_back``).
"""

from __future__ import annotations

import logging
from typing import Any

from board_nodes.board import Board
from board_nodes.board_checkpoint import roll_back
from board_nodes.board_phase import IN_PROGRESS, BoardPhase
from board_nodes.errors import BoardNodeError
from board_nodes.flag_rulings import (
    flag_loss_pending,
    flag_without_result,
    reopen_after_flag,
    take_late_press,
)
from clock_service import (
    ClockError,
    GameClock,
    ProposalKind,
    ProposalStatus,
    Referee,
    Side,
    TimeControl,
)
from clock_service.handicap import Handicap
from wire_contract import messages as wire
from wire_contract.wallclock import wall_ms

__all__ = ["CommandError", "apply_command"]

log = logging.getLogger(__name__)


class CommandError(BoardNodeError, ValueError):
    """A command that cannot be applied now; nothing was changed. ``code`` names the reason
    for the station's pages (docs/wire.md "Reply codes"), ``args`` its arguments."""

    def __init__(self, message: str, code: str = "invalid", **args: str | int) -> None:
        super().__init__(message)
        self.code = code
        self.args_ = args


def apply_command(board: Board, name: str, args: Any, *, venue_wide: bool = False) -> None:
    handler = _HANDLERS.get(name)
    if handler is None:
        raise CommandError(f"unknown cmd {name!r}", "unknown_cmd")
    if venue_wide and name == "resume" and board.phase is BoardPhase.PAUSED:
        _no_pending_forfeit(board)  # (a running board answers already_running: not needed)
    before, offered, seq = board.checkpoint_data(), board.events.offered, board.last_seq
    try:
        handler(board, args)
    except (ClockError, ValueError) as exc:
        if isinstance(exc, CommandError):
            raise
        if board.events.offered != offered:
            # It failed after the board changed (an event the wire refused): the board goes
            # back to what its journal holds — as before the command, or as the last event
            # it journaled left it — never a state the station was not told.
            log.error("board %s: %s failed part-way, rolled back: %s", board.id, name, exc)
            journaled = board.events.last_checkpoint if board.last_seq != seq else before
            roll_back(board, journaled or before)
            board.changed()
        raise CommandError(str(exc)) from None
    if name != "reset":  # (a reset writes its own)
        # What a command set beside its events (a withdrawal's result taken back and the hold,
        # the arbiter mode, a round's start) is journaled too: a node that restarts from its
        # last event's checkpoint came back with the loss by fouls it had taken back.
        board.journal.checkpoint(board.id, board.checkpoint_data(), wall_ms())
    board.changed()


def _in_game(board: Board) -> None:
    if board.clock is None or board.game is None:
        raise CommandError("no game is set on this board", "no_game")


def _set_game(board: Board, args: wire.SetGameArgs) -> None:
    if board.phase in IN_PROGRESS:
        raise CommandError(
            f"a game is in progress ({board.phase}); reset the board first",
            "game_in_progress",
            phase=str(board.phase),
        )
    tc = TimeControl.parse(args.tc)
    black_tc = TimeControl.parse(args.black_tc) if args.black_tc else None
    handicap = Handicap.parse(args.handicap.model_dump()) if args.handicap else None
    carried = args.red_ms is not None or args.black_ms is not None or args.moves is not None
    if carried:
        if args.red_ms is None or args.black_ms is None:
            raise CommandError(
                "carrying a game over needs both red_ms and black_ms", "carry_needs_times"
            )
        moves = args.moves or wire.SidePair(red=0, black=0)
        on_move = (
            Side.parse(args.on_move)
            if args.on_move
            else (Side.RED if moves.red == moves.black else Side.BLACK)
        )
        clock = GameClock.carry_over(
            tc, now=board.now, black=black_tc, red_ms=args.red_ms, black_ms=args.black_ms,
            moves_red=moves.red, moves_black=moves.black, side_on_move=on_move,
            handicap=handicap,
        )  # fmt: skip
    else:
        clock = GameClock(tc, now=board.now, black=black_tc, handicap=handicap)
    game = {
        "game": args.game,
        "tc": str(tc),
        "black_tc": str(black_tc) if black_tc else None,
        "red": args.red,
        "black": args.black,
        "tiebreak": args.tiebreak,
        "handicap": handicap.as_dict() if handicap else None,
    }
    referee = Referee(board.regulation, tiebreak_game=args.tiebreak, handicap=handicap)
    board.set_game(game, clock, referee)


def _start(board: Board, args: wire.StartArgs) -> None:
    _in_game(board)
    if board.phase is not BoardPhase.READY:
        code = {
            BoardPhase.FINISHED: "finished",
            BoardPhase.RUNNING: "already_started",
            BoardPhase.PAUSED: "already_started",
        }.get(board.phase, "cannot_start")
        raise CommandError(
            f"the clock cannot start: it is {board.phase}", code, phase=str(board.phase)
        )
    board.start(args.at)


def _pause(board: Board, args: object) -> None:
    _in_game(board)
    if board.phase is not BoardPhase.RUNNING:
        code = {BoardPhase.FINISHED: "finished", BoardPhase.PAUSED: "already_paused"}.get(
            board.phase, "not_running"
        )
        raise CommandError(
            f"the clock is not running ({board.phase})", code, phase=str(board.phase)
        )
    board.pause()


def _no_pending_forfeit(board: Board) -> None:
    """全部继续 does not run a clock whose game may already be lost: a forfeit waiting for the
    arbiter (a clock switched off, a late player) is ruled first, then that board resumed on
    its own (an outsider chief: 全部继续 resumed such a board without a word)."""
    referee = board.referee
    pending = [p for p in referee.pending() if p.kind is ProposalKind.FORFEIT] if referee else []
    if pending:
        p = pending[0]
        side = p.side.value if p.side is not None else ""
        raise CommandError(
            f"a forfeit ({p.reason}) of {side or 'both sides'} waits for the arbiter's ruling",
            "forfeit_pending",
            side=side,
            reason=p.reason,
        )


def _resume(board: Board, args: object) -> None:
    _in_game(board)
    flagged = flag_without_result(board) if board.phase is BoardPhase.FINISHED else None
    if flagged is not None and board.result is None and not flag_loss_pending(board):
        # a flag whose loss was dismissed or taken back: the game is not over, its side has no
        # time (an outsider deputy read "the game is over" under a hint saying it was not)
        raise CommandError(
            f"{flagged}'s flag stands with no result: give {flagged} time first, then resume",
            "flag_needs_time",
            side=flagged.value,
        )
    if board.phase is not BoardPhase.PAUSED:
        code = {BoardPhase.FINISHED: "finished", BoardPhase.RUNNING: "already_running"}.get(
            board.phase, "not_paused"
        )
        raise CommandError(f"the clock is not paused ({board.phase})", code, phase=str(board.phase))
    if board.power_off_ns is not None:
        raise CommandError("the clock face is switched off", "clock_switched_off")
    board.resume()


def _adjust(board: Board, args: wire.AdjustArgs) -> None:
    _in_game(board)
    side = Side.parse(args.side)
    if board.phase is BoardPhase.FINISHED:
        if board.result is not None or flag_without_result(board) is None:
            raise CommandError("the game is finished", "finished")
        _reopen_after_flag(board, side, args.delta_ms)
        return
    assert board.clock is not None  # _in_game
    left_ms = board.clock.remaining_ms(side)
    if args.delta_ms < 0 and left_ms + args.delta_ms <= 0:
        # Said with what is left, so the arbiter knows how much can be taken (the clock's own
        # refusal below says the same in English only).
        raise CommandError(
            f"taking {-args.delta_ms} ms from {side} would leave it no time ({left_ms} ms left)",
            "no_time_left",
            side=side.value,
            left_s=left_ms // 1000,
        )
    board.adjust(side, args.delta_ms)


def _reopen_after_flag(board: Board, side: Side, delta_ms: int) -> None:
    """A flag fell and no result stands: once the arbiter dismissed its loss, time given to
    the flagged side reopens the game (paused, held by the arbiter until ``resume``)."""
    flagged = flag_without_result(board)
    assert flagged is not None  # checked by the caller
    if flag_loss_pending(board):
        raise CommandError(
            f"{flagged}'s flag is not ruled yet: dismiss it before giving time",
            "flag_not_ruled",
            side=flagged.value,
        )
    if side is not flagged or delta_ms <= 0:
        raise CommandError(
            f"{flagged}'s flag was dismissed: give {flagged} time first to go on",
            "flagged_side_first",
            side=flagged.value,
        )
    reopen_after_flag(board, delta_ms)


def _arbiter_mode(board: Board, args: wire.ArbiterModeArgs) -> None:
    board.set_arbiter_mode(args.on)


def _proposal_at(board: Board, seq: int) -> int | None:
    """The referee's proposal whose first event is ``seq``, in this game."""
    return next((pid for pid, first in board.proposal_seq.items() if first == seq), None)


def _resolve(board: Board, args: wire.ResolveArgs) -> None:
    _in_game(board)
    proposal_id = _proposal_at(board, args.seq)
    if proposal_id is None:
        raise CommandError(
            f"event {args.seq} is not a proposal of this game", "not_a_proposal", seq=args.seq
        )
    status = ProposalStatus.parse(args.status)
    board.resolve(proposal_id, status)
    if status is ProposalStatus.DISMISSED:
        take_late_press(board)  # a flag's loss dismissed: its late press, if any, counts


def _withdraw(board: Board, args: wire.WithdrawArgs) -> None:
    """A confirmed foul taken back; or the result that stands, confirmed by mistake (entered
    on the wrong board, a flag confirmed while its clock was at fault): the game goes on,
    paused and held by the arbiter (a flag's side is given time first, as after a dismissal)."""
    _in_game(board)
    referee = board.referee
    assert referee is not None  # _in_game
    proposal_id = _proposal_at(board, args.seq)
    kind = referee.get(proposal_id).kind if proposal_id is not None else None
    if proposal_id is None or kind not in (ProposalKind.FOUL, ProposalKind.RESULT):
        raise CommandError(
            f"event {args.seq} is not a foul or a result of this game", "not_a_foul", seq=args.seq
        )
    proposal = referee.get(proposal_id)
    if proposal.status is ProposalStatus.PENDING:
        raise CommandError(
            f"{kind} {args.seq} is not confirmed: dismiss it instead", "foul_pending", seq=args.seq
        )
    if kind is ProposalKind.RESULT:
        standing = referee.result
        if standing is None or standing.id != proposal_id:
            raise CommandError(
                f"result {args.seq} does not stand: take back the one that does",
                "result_not_standing",
                seq=args.seq,
            )
        if referee.stands_on_fouls:  # (a replacement over a loss by fouls too)
            raise CommandError(
                f"result {args.seq} stands on a loss by fouls: withdraw the foul instead",
                "loss_by_fouls",
                seq=args.seq,
            )
    board.withdraw(proposal_id)
    if kind is ProposalKind.RESULT and proposal.reason == "flag":
        take_late_press(board)  # the press from before the flag counts, as after a dismissal


def _result(board: Board, args: wire.ResultArgs) -> None:
    _in_game(board)
    board.enter_result(Side.parse(args.winner) if args.winner else None, args.reason)


def _foul(board: Board, args: wire.FoulArgs) -> None:
    _in_game(board)
    board.call_foul(Side.parse(args.side), args.reason)


def _move_count(board: Board, args: wire.MoveCountArgs) -> None:
    _in_game(board)
    board.start_move_count(args.limit)


def _reset(board: Board, args: object) -> None:
    if board.phase is BoardPhase.RUNNING:
        raise CommandError("pause the clock before resetting the board", "running")
    board.reset()


_HANDLERS: dict[str, Any] = {
    "set_game": _set_game,
    "start": _start,
    "pause": _pause,
    "resume": _resume,
    "adjust": _adjust,
    "arbiter_mode": _arbiter_mode,
    "resolve": _resolve,
    "withdraw": _withdraw,
    "result": _result,
    "foul": _foul,
    "move_count": _move_count,
    "reset": _reset,
}
