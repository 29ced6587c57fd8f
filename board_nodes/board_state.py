"""One board's state as others see it, each built in one place: the retained ``state``
(DESIGN.md §4) the station is told, the ``clock`` part of each event, and the view the players
see on the clock face. (What the node itself keeps, to carry on after a restart, is the
checkpoint: ``board_checkpoint.py``.)

The state's ``ts`` is now while the clock runs (the readings are as of now). Right after an event
dated before its publication (a flag that waited for its proof, docs/wire.md "Which instant
a ts carries") and while the clock is stopped, it is that event's ``ts``, until the next
event: the state that shows a flag is as of the deadline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from board_nodes.board_phase import BoardPhase
from board_nodes.flag_guard import FlagGuard
from clock_service import GameClock, Proposal, Side
from firmware_bridge.face import FaceView
from wire_contract import messages as wire
from wire_contract.wallclock import wall_ms

if TYPE_CHECKING:
    from board_nodes.board import Board

__all__ = ["clock_part_of", "face_view_of", "snapshot_of"]


def clock_part_of(clock: GameClock | None) -> wire.ClockPart:
    if clock is None:
        return wire.ClockPart(red_ms=0, black_ms=0, running=None)
    running = clock.running
    return wire.ClockPart(
        red_ms=clock.remaining_ms(Side.RED),
        black_ms=clock.remaining_ms(Side.BLACK),
        running=running.value if running else None,
    )


def face_view_of(board: Board) -> FaceView:
    """The digits and the word the face shows: why the clock is stopped, or that the
    journal's disk refuses (the first that applies)."""
    now = board.now()
    clock = board.clock
    if clock is None:
        return FaceView(0, 0, text=f"b{board.id}"[:8], mono_ns=now)
    text = ""
    if board.power_off_ns is not None:
        text = "OFF"
    elif board.arbiter_mode:
        text = "ARB"
    elif board.phase is BoardPhase.PAUSED:
        text = "PAUSE"
    elif board.journal.failing_since is not None:
        text = "DISK"
    return FaceView(
        clock.remaining_ms(Side.RED),
        clock.remaining_ms(Side.BLACK),
        running=clock.running,
        flag=FlagGuard.standing(clock),  # only a flag that stands is shown
        text=text,
        mono_ns=now,
    )


def snapshot_of(board: Board) -> wire.StateSnapshot:
    clock = board.clock
    part = clock_part_of(clock)
    referee = board.referee
    flag = FlagGuard.standing(clock)
    game = board.game or {}
    return wire.StateSnapshot(
        board=board.id,
        node=board.node,
        session=board.session,
        seq=board.last_seq,
        ts=_snapshot_ts(board, clock),
        game=game.get("game"),
        tc=game.get("tc"),
        phase=board.phase.value,
        running=part.running,
        red_ms=part.red_ms,
        black_ms=part.black_ms,
        moves=wire.SidePair(
            red=clock.moves(Side.RED) if clock else 0,
            black=clock.moves(Side.BLACK) if clock else 0,
        ),
        flag=flag.value if flag else None,
        fouls=wire.SidePair(
            red=referee.fouls(Side.RED) if referee else 0,
            black=referee.fouls(Side.BLACK) if referee else 0,
        ),
        result=board.result,
        red=game.get("red"),
        black=game.get("black"),
        arbiter_mode=board.arbiter_mode,
        pending=[_pending_item(board, p) for p in referee.pending()] if referee else [],
        handicap=game.get("handicap") or None,
        clock_fault=board.clock_fault,
    )


def _snapshot_ts(board: Board, clock: GameClock | None) -> int:
    dated = board.dated
    stopped = clock is None or clock.running is None
    if dated is not None and dated[0] == board.last_seq and stopped:
        return dated[1]
    return wall_ms()


def _pending_item(board: Board, p: Proposal) -> dict[str, Any]:
    return {
        "seq": board.proposal_seq.get(p.id),
        "kind": p.kind.value,
        "reason": p.reason,
        "side": p.side.value if p.side else None,
    }
