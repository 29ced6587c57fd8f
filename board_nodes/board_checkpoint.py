"""A board's checkpoint: what the journal keeps of its game, and the game brought back from it.

Every journaled event carries the checkpoint it leads to (journal.py), and a running clock's
is rewritten every ``checkpoint_s`` (node.py), so a node that restarts finds each game where
it was. The retained MQTT ``state`` is another thing, built in ``board_state.py``: it is what
the station is told, this is what the node needs to carry on. A checkpoint is plain JSON,
versioned: one of another version is refused rather than half-read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from board_nodes.board_phase import HeldBy
from board_nodes.timesource import NodeTime
from clock_service import GameClock, Referee, Regulation

if TYPE_CHECKING:
    from board_nodes.board import Board

__all__ = ["CHECKPOINT_VERSION", "SavedGame", "checkpoint_of", "roll_back", "saved_game"]

CHECKPOINT_VERSION = 1


def checkpoint_of(board: Board) -> dict[str, Any]:
    return {
        "v": CHECKPOINT_VERSION,
        "game": board.game,
        "clock": board.clock.snapshot() if board.clock else None,
        "referee": board.referee.snapshot() if board.referee else None,
        "result": board.result,
        "arbiter_mode": board.arbiter_mode,
        "round_start_ms": board.round_start_ms,
        "proposal_seq": {str(k): v for k, v in board.proposal_seq.items()},
        "power_off": board.power_off_ns is not None,
        "held_by": board.held_by,
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class SavedGame:
    """A board's game as its checkpoint kept it; ``clock`` (paused) and ``referee`` are None
    when the checkpoint had no game under way."""

    game: dict[str, Any] | None
    clock: GameClock | None
    referee: Referee | None
    result: dict[str, Any] | None
    arbiter_mode: bool
    round_start_ms: int | None
    proposal_seq: dict[int, int]
    held_by: HeldBy | None


def saved_game(
    checkpoint: dict[str, Any], *, board_id: str, regulation: Regulation, now: NodeTime
) -> SavedGame:
    """Read a checkpoint back. A running clock comes back paused (``GameClock.restore``): the
    time the node was gone is charged to no one; the node's ``shutdown`` says how long."""
    if checkpoint.get("v") != CHECKPOINT_VERSION:
        raise ValueError(f"board {board_id}: checkpoint version {checkpoint.get('v')!r}")
    game = checkpoint["game"]
    clock = referee = None
    if game is not None and checkpoint["clock"] is not None:
        clock = GameClock.restore(checkpoint["clock"], now=now)
        if clock.running is not None:
            clock.pause()
        referee = Referee.restore(regulation, checkpoint["referee"])
    return SavedGame(
        game=game,
        clock=clock,
        referee=referee,
        result=checkpoint["result"],
        arbiter_mode=bool(checkpoint["arbiter_mode"]),
        round_start_ms=checkpoint["round_start_ms"],
        proposal_seq={int(k): v for k, v in checkpoint["proposal_seq"].items()},
        held_by=HeldBy(checkpoint["held_by"]) if checkpoint.get("held_by") else None,
    )


def roll_back(board: Board, checkpoint: dict[str, Any]) -> None:
    """Put ``board`` back to ``checkpoint`` taken moments ago (a command that failed part-way,
    commands.py): unlike a restart, a clock that was running runs on — the microseconds
    between the checkpoint and now are charged to no one."""
    board.restore(checkpoint)
    if checkpoint["game"] is None or checkpoint["clock"] is None:
        board.clock = board.referee = None
    elif checkpoint["clock"]["phase"] == "running":
        board.clock = GameClock.restore(checkpoint["clock"], now=board.now, resume=True)
