"""How far a node's published clock is from the truth of the presses (issue 28's "residual").

The test presses a clock (the serial emulator) and notes each press's wall instant itself.
``residuals`` runs a ``clock_service.GameClock`` from the node's own anchor event (``started``
or ``resumed``: the times then and the side on move) through those instants, and compares its
times after each press with the ``move`` events the node published: a clock that stopped (a
node gone and restored paused), a press lost or charged twice shows as seconds, not ms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clock_service import GameClock, Side, TimeControl

__all__ = ["Press", "Residual", "residuals"]


@dataclass(frozen=True)
class Press:
    side: Side
    wall_ns: int  # time.time_ns() taken as the key went down


@dataclass(frozen=True)
class Residual:
    seq: int
    ts: int  # the move event's ts (wall ms)
    node: tuple[int, int]  # red_ms, black_ms the node published
    model: tuple[int, int]  # what the GameClock fed the press instants says

    @property
    def ms(self) -> int:
        return max(abs(n - m) for n, m in zip(self.node, self.model, strict=True))


def residuals(
    tc: str, anchor: dict[str, Any], presses: list[Press], moves: list[dict[str, Any]]
) -> list[Residual]:
    """One :class:`Residual` per press, in order (the moves sorted by seq). Raises
    AssertionError when the node published another number of moves or another side."""
    clock_at = anchor["clock"]
    on_move = Side.parse(clock_at["running"])
    now = [anchor["ts"] * 1_000_000]
    clock = GameClock.carry_over(
        TimeControl.parse(tc), now=lambda: now[0],
        red_ms=clock_at["red_ms"], black_ms=clock_at["black_ms"],
        moves_red=0, moves_black=0, side_on_move=on_move,
    )  # fmt: skip
    clock.start()
    moves = sorted(moves, key=lambda ev: ev["seq"])
    sides = [m["data"]["side"] for m in moves]
    assert sides == [str(p.side) for p in presses], f"moves {sides} for presses {presses}"
    out = []
    for press, move in zip(presses, moves, strict=True):
        now[0] = press.wall_ns
        clock.press(press.side)
        model = (clock.remaining_ms(Side.RED), clock.remaining_ms(Side.BLACK))
        node = (move["clock"]["red_ms"], move["clock"]["black_ms"])
        out.append(Residual(move["seq"], move["ts"], node, model))
    return out
