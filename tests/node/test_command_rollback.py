"""A command that fails after it changed the board — an event the wire refuses, which is a bug
of ours, not the arbiter's — leaves the board as its journal holds it: the referee, the result
and the clock never say what the station was not told (stop 37 found a warning's ruling that
changed the referee and journaled nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import model_validator
from support.node import black_loses_by_two_fouls, simulated_board

from board_nodes.board import Board
from board_nodes.board_checkpoint import checkpoint_of
from board_nodes.board_phase import BoardPhase
from board_nodes.commands import CommandError, apply_command
from clock_service import Side
from wire_contract import messages as wire

pytestmark = pytest.mark.allow_error_log  # the rollback is logged as the error it is


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Board]:
    with simulated_board(tmp_path) as b:
        yield b


def command(board: Board, name: str, **args: Any) -> None:
    apply_command(board, name, wire.COMMAND_ARGS[name].model_validate(args))


def refuse(monkeypatch: pytest.MonkeyPatch, type_: str, status: str | None = None) -> None:
    """From now the wire refuses the board's events of ``type_`` (with ``status``)."""

    class Refusing(wire.EventEnvelope):
        @model_validator(mode="after")
        def _refuse(self) -> Refusing:
            if self.type == type_ and (status is None or self.data.get("status") == status):
                raise ValueError(f"the test's wire refuses {type_} {status or ''}")
            return self

    monkeypatch.setattr(wire, "EventEnvelope", Refusing)


def without_times(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint but the clock's running times (they move on between two readings)."""
    clock = checkpoint["clock"]
    if clock is None:
        return checkpoint
    sides = {side: {"moves": clock[side]["moves"]} for side in ("red", "black")}
    return {**checkpoint, "clock": {**clock, **sides}}


def journaled(board: Board) -> dict[str, Any]:
    board.journal.flush()
    checkpoint = board.journal.board(board.id).checkpoint
    assert checkpoint is not None
    return checkpoint


async def test_a_foul_the_wire_refuses_changes_nothing(
    board: Board, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[dict[str, Any]] = []
    board.on_event = events.append
    command(board, "set_game", game="g1", tc="30m+5s")
    assert board.clock is not None
    board.emit_clock_events(board.clock.start())
    board.press(Side.RED)
    before = without_times(checkpoint_of(board))
    seen = len(events)

    refuse(monkeypatch, "foul")
    with pytest.raises(CommandError, match="refuses foul"):
        command(board, "foul", side="black", reason="disturbing")
    assert len(events) == seen and board.snapshot().fouls.black == 0
    assert without_times(checkpoint_of(board)) == before
    # the game runs on, black's time still going
    assert board.phase is BoardPhase.RUNNING and board.clock.running is Side.BLACK
    left = board.clock.remaining_ms(Side.BLACK)
    assert 29 * 60_000 < left < 30 * 60_000

    monkeypatch.undo()
    command(board, "foul", side="black", reason="disturbing")
    assert board.snapshot().fouls.black == 1 and events[-1]["type"] == "foul"


async def test_a_withdrawal_the_wire_refuses_can_be_made_again(
    board: Board, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The withdrawal's first event is refused: the foul, the loss by fouls and the result
    stand as the journal holds them, and the arbiter's next withdrawal takes them all back."""
    events: list[dict[str, Any]] = []
    board.on_event = events.append
    first = black_loses_by_two_fouls(board)
    assert board.result == {"winner": "red", "reason": "fouls"}
    seen = len(events)

    refuse(monkeypatch, "foul", "dismissed")
    with pytest.raises(CommandError, match="refuses foul"):
        command(board, "withdraw", seq=first)
    assert len(events) == seen
    assert without_times(checkpoint_of(board)) == without_times(journaled(board))
    assert board.result == {"winner": "red", "reason": "fouls"}
    assert board.snapshot().fouls.black == 2 and board.phase is BoardPhase.FINISHED

    monkeypatch.undo()
    command(board, "withdraw", seq=first)
    taken_back = [(e["type"], e["data"]["status"]) for e in events[seen:]]
    assert taken_back == [("foul", "dismissed"), ("forfeit", "dismissed"), ("result", "dismissed")]
    assert board.result is None and board.snapshot().fouls.black == 1
