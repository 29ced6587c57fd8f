"""Debian's Fairy-Stockfish (apt ``fairy-stockfish``, GPL-3) as an independent xiangqi referee.

Run as a separate process over UCI, so qizhong does not link it. Its xiangqi squares count ranks
1..10 where ICCS counts 0..9 (ICCS ``h2e2`` is its ``h3e3``); this module converts.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["FAIRY_STOCKFISH", "Referee"]

FAIRY_STOCKFISH = Path("/usr/games/fairy-stockfish")
_SQUARE = re.compile(r"([a-i])(\d+)")


def to_fsf(iccs: str) -> str:
    return _SQUARE.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + 1}", iccs)


def from_fsf(move: str) -> str:
    return _SQUARE.sub(lambda m: f"{m.group(1)}{int(m.group(2)) - 1}", move)


class Referee:
    """One engine process: legal moves and the FEN after a sequence of ICCS moves."""

    def __init__(self) -> None:
        self._engine = subprocess.Popen(
            [str(FAIRY_STOCKFISH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._send("uci")
        self._until("uciok")
        self._send("setoption name UCI_Variant value xiangqi")
        self._send("isready")
        self._until("readyok")

    def _send(self, line: str) -> None:
        assert self._engine.stdin is not None
        self._engine.stdin.write(line + "\n")
        self._engine.stdin.flush()

    def _until(self, prefix: str) -> list[str]:
        assert self._engine.stdout is not None
        lines: list[str] = []
        while True:
            line = self._engine.stdout.readline()
            if not line:
                raise RuntimeError(f"fairy-stockfish ended before {prefix!r}")
            lines.append(line.rstrip("\n"))
            if line.startswith(prefix):
                return lines

    def _position(self, fen: str, moves: list[str]) -> None:
        tail = f" moves {' '.join(to_fsf(m) for m in moves)}" if moves else ""
        self._send(f"position fen {fen}{tail}")

    def legal_moves(self, fen: str, moves: list[str]) -> set[str]:
        """The legal moves (ICCS) after ``moves`` from ``fen``, by the engine's perft 1."""
        self._position(fen, moves)
        self._send("go perft 1")
        lines = self._until("Nodes searched")
        return {
            from_fsf(line.split(":")[0]) for line in lines if re.match(r"^[a-i]\d+[a-i]\d+:", line)
        }

    def fen(self, fen: str, moves: list[str]) -> str:
        self._position(fen, moves)
        self._send("d")
        return next(line for line in self._until("Fen:") if line.startswith("Fen:"))[5:].strip()

    def perft(self, fen: str, depth: int) -> int:
        self._position(fen, [])
        self._send(f"go perft {depth}")
        last = self._until("Nodes searched")[-1]
        return int(last.split(":")[1])

    def close(self) -> None:
        self._send("quit")
        self._engine.wait(timeout=10)
