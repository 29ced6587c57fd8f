"""The node's ``withdraw`` command: a confirmed foul taken back, the loss it completed with it,
and the game on from where its clock stopped (paused, held by the arbiter); refusals in words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.node import black_loses_by_two_fouls, simulated_board

from board_nodes.board import Board
from board_nodes.board_phase import BoardPhase, HeldBy
from board_nodes.commands import CommandError, apply_command
from clock_service import Side
from wire_contract import messages as wire


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Board]:
    with simulated_board(tmp_path) as b:
        yield b


def command(board: Board, name: str, **args: Any) -> None:
    apply_command(board, name, wire.COMMAND_ARGS[name].model_validate(args))


async def test_withdrawing_the_foul_that_lost_the_game_reopens_it(board: Board) -> None:
    events: list[dict[str, Any]] = []
    board.on_event = events.append
    command(board, "set_game", game="g1", tc="30m+5s")
    assert board.clock is not None
    board.emit_clock_events(board.clock.start())
    board.press(Side.RED)
    move_seq = events[-1]["seq"]
    command(board, "foul", side="black", reason="disturbing")
    first = events[-1]["seq"]
    command(board, "foul", side="black", reason="phone")
    assert board.phase is BoardPhase.FINISHED and board.result == {
        "winner": "red",
        "reason": "fouls",
    }

    with pytest.raises(CommandError) as refused:
        command(board, "withdraw", seq=move_seq)
    assert (refused.value.code, refused.value.args_) == ("not_a_foul", {"seq": move_seq})

    before = len(events)
    command(board, "withdraw", seq=first)
    taken_back = [(e["type"], e["data"]["status"], e["data"]["ref"]) for e in events[before:]]
    assert [t[:2] for t in taken_back] == [
        ("foul", "dismissed"), ("forfeit", "dismissed"), ("result", "dismissed"),
    ]  # fmt: skip
    assert taken_back[0][2] == first
    assert board.result is None and board.phase is BoardPhase.PAUSED
    assert board.held_by is HeldBy.ARBITER and board.snapshot().fouls.black == 1
    command(board, "resume")
    assert board.phase is BoardPhase.RUNNING and board.clock.running is Side.BLACK

    # a pause from the board is a pending foul: dismissed by its ruling, not withdrawn
    board.pause_key()
    pending = events[-1]
    assert (pending["type"], pending["data"]["status"]) == ("foul", "pending")
    with pytest.raises(CommandError) as refused:
        command(board, "withdraw", seq=pending["seq"])
    assert refused.value.code == "foul_pending"
    # again: nothing more happens
    before = len(events)
    command(board, "withdraw", seq=first)
    assert len(events) == before


async def test_a_result_that_stood_before_stands_again(board: Board) -> None:
    """Black resigned; two fouls after it made red's loss by fouls, confirmed on its alert;
    the foul taken back brings black's resignation back — on the board and in its state."""
    events: list[dict[str, Any]] = []
    board.on_event = events.append
    command(board, "set_game", game="g1", tc="30m+5s")
    assert board.clock is not None
    board.emit_clock_events(board.clock.start())
    command(board, "result", winner="red", reason="resignation")
    command(board, "foul", side="red", reason="disturbing")
    first = events[-1]["seq"]
    command(board, "foul", side="red", reason="phone")
    proposed = events[-1]
    assert (proposed["type"], proposed["data"]["status"]) == ("forfeit", "pending")
    command(board, "resolve", seq=proposed["seq"], status="confirmed")
    assert board.result == {"winner": "black", "reason": "fouls"}
    command(board, "withdraw", seq=first)
    assert board.result == {"winner": "red", "reason": "resignation"}
    assert board.snapshot().result == {"winner": "red", "reason": "resignation"}


async def test_a_withdrawal_survives_a_power_cut(board: Board) -> None:
    """The withdrawal took the loss back in memory after its last event was journaled: a node
    restarted from its journal came back with the loss by fouls (a reviewer). The journal's
    checkpoint is the board as the command left it."""
    events: list[dict[str, Any]] = []
    board.on_event = events.append
    first = black_loses_by_two_fouls(board)
    command(board, "withdraw", seq=first)
    assert board.result is None and board.held_by is HeldBy.ARBITER

    board.journal.flush()
    saved = board.journal.board(board.id).checkpoint
    assert saved is not None
    restarted = Board(
        "7", venue="t", node="n", session=2, regulation=board.regulation,
        face=board.face, journal=board.journal,
    )  # fmt: skip
    restarted.restore(saved)
    try:
        assert restarted.result is None and restarted.phase is BoardPhase.PAUSED
        assert restarted.held_by is HeldBy.ARBITER
    finally:
        restarted.cancel_timers()
