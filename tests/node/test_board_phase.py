"""The board's state machine (issue 14): phases and who holds a stop are enums whose values are
the wire's spellings, and a reset or a new game clears everything of the last one at once."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.node import simulated_board

from board_nodes.board import Board
from board_nodes.board_phase import IN_PROGRESS, BoardPhase, HeldBy
from board_nodes.commands import CommandError, apply_command
from wire_contract import messages as wire


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Board]:
    with simulated_board(tmp_path) as b:
        yield b


def literal(model: type, field: str) -> set[str]:
    return set(typing.get_args(model.model_fields[field].annotation))


def test_the_phases_are_the_state_snapshots_spellings() -> None:
    assert {p.value for p in BoardPhase} == literal(wire.StateSnapshot, "phase")
    assert BoardPhase.PAUSED == "paused" and f"{BoardPhase.RUNNING}" == "running"
    assert {BoardPhase.RUNNING, BoardPhase.PAUSED} == IN_PROGRESS


def test_a_shutdown_cause_is_who_holds_the_stop() -> None:
    assert literal(wire.ShutdownData, "cause") < {h.value for h in HeldBy}
    assert {h.value for h in HeldBy} - literal(wire.ShutdownData, "cause") == {"arbiter"}


async def test_a_game_goes_through_its_phases(board: Board) -> None:
    assert board.phase is BoardPhase.IDLE
    apply_command(board, "set_game", wire.SetGameArgs(game="g1", tc="30m+0s"))
    assert board.phase is BoardPhase.READY
    assert board.clock is not None
    board.emit_clock_events(board.clock.start())
    assert board.phase is BoardPhase.RUNNING
    apply_command(board, "pause", wire.EmptyData())
    assert board.phase is BoardPhase.PAUSED and board.held_by is HeldBy.ARBITER
    assert board.snapshot().phase == "paused"
    with pytest.raises(CommandError, match=r"a game is in progress \(paused\)"):
        apply_command(board, "set_game", wire.SetGameArgs(game="g2", tc="30m+0s"))
    apply_command(board, "resume", wire.EmptyData())
    assert board.phase is BoardPhase.RUNNING and board.held_by is None


async def test_reset_clears_every_part_of_the_last_game(board: Board) -> None:
    apply_command(board, "set_game", wire.SetGameArgs(game="g1", tc="30m+0s"))
    assert board.clock is not None
    board.emit_clock_events(board.clock.start())
    apply_command(board, "pause", wire.EmptyData())
    board.round_start_ms = 123
    board.proposal_seq = {1: 2}
    board.result = {"winner": "red"}
    apply_command(board, "reset", wire.EmptyData())
    assert board.phase is BoardPhase.IDLE
    assert (board.game, board.clock, board.referee, board.result) == (None, None, None, None)
    assert (board.round_start_ms, board.proposal_seq, board.held_by) == (None, {}, None)
    assert board.flag.stood is None


async def test_a_held_stop_survives_a_checkpoint(board: Board) -> None:
    apply_command(board, "set_game", wire.SetGameArgs(game="g1", tc="30m+0s"))
    assert board.clock is not None
    board.emit_clock_events(board.clock.start())
    apply_command(board, "pause", wire.EmptyData())
    saved = board.checkpoint_data()
    assert saved["held_by"] == "arbiter"
    board.held_by = None
    board.restore(saved)
    assert board.held_by is HeldBy.ARBITER
