"""A board's phase and who holds its stop: the board's state machine, in one place.

The phase is derived, never stored: from the game set on the board, its clock and its result.
The values are the wire spellings of the state snapshot (``StrEnum``: they are those strings).

    idle ──set_game──▶ ready ──start / black presses──▶ running ⇄ paused
      ▲                  ▲                                 │        │
      └──reset───────────┴──set_game (not mid-game)        └─result / flag─▶ finished

A stop is held (``HeldBy``) by the arbiter's pause, the power switch or a node restart: then
only the arbiter resumes it (a command, or the pause key in arbiter mode); a player's own
pause is held by no one, and the pause key resumes it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from clock_service import GameClock, Phase

__all__ = ["IN_PROGRESS", "BoardPhase", "HeldBy", "phase_of"]


class BoardPhase(StrEnum):
    IDLE = "idle"  # no game set
    READY = "ready"  # a game set, its clock not started
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"  # a result stands, or a flag


class HeldBy(StrEnum):
    ARBITER = "arbiter"
    POWER_SWITCH = "power_switch"
    NODE_RESTART = "node_restart"


IN_PROGRESS = frozenset({BoardPhase.RUNNING, BoardPhase.PAUSED})  # a game under way


def phase_of(game: dict[str, Any] | None, clock: GameClock | None, result: Any) -> BoardPhase:
    """The board's phase from its game, clock and result."""
    if game is None or clock is None:
        return BoardPhase.IDLE
    phase = clock.phase
    if phase is Phase.FINISHED and clock.deadline_ns() is not None:
        return BoardPhase.RUNNING  # past the deadline, the flag not standing yet (flag_guard)
    if result is not None or phase is Phase.FINISHED:
        return BoardPhase.FINISHED
    if phase is Phase.RUNNING:
        return BoardPhase.RUNNING
    if phase is Phase.PAUSED and clock.snapshot()["started"]:
        return BoardPhase.PAUSED
    return BoardPhase.READY
