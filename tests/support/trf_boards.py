"""Simulated boards for the TRF event tests: each board's events with its own running seq,
through the station's ingest, as a real board sends them (results, flags, confirmed forfeits and
double forfeits)."""

from __future__ import annotations

import json
import random
from typing import Any

from support.station import decision_txn, envelope
from venue_station.domain.station import Station

__all__ = ["Boards"]


class Boards:
    """Simulated boards: each board's events with its own running seq, through the ingest. A
    result or a confirmed forfeit reaches the station as a real one does: the board applies the
    arbiter's command and its event carries that command's txn (issue 12); a flag stays a
    proposal."""

    def __init__(self, station: Station) -> None:
        self.station = station
        self.seq: dict[str, int] = {}

    def send(self, board: str, game: str, type: str, data: dict[str, Any]) -> None:
        seq = self.seq[board] = self.seq.get(board, 0) + 1
        decides = type == "result" or data.get("status") == "confirmed"
        txn = decision_txn(self.station, board, type, data) if decides else None
        ev = envelope(board, seq, game=game, type=type, data=data, txn=txn)
        assert self.station.ingest is not None
        self.station.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())

    def play(self, board: str, game: str, rng: random.Random) -> None:
        roll = rng.random()
        for limit, kind in ((0.35, "red"), (0.65, "black"), (0.9, "draw"), (0.95, "flag")):
            if roll < limit:
                self.decide(board, game, kind)
                return
        self.decide(board, game, "forfeit" if roll < 0.97 else "double_forfeit")

    def decide(self, board: str, game: str, kind: str) -> None:
        """``red`` / ``black`` win, ``draw``, ``flag`` (red's flag confirmed), ``forfeit``
        (black absent, confirmed), ``double_forfeit`` (both absent: a loss for both)."""
        if kind in ("red", "black"):
            self.send(board, game, "result", {"winner": kind, "reason": "checkmate"})
        elif kind == "draw":
            self.send(board, game, "result", {"winner": None, "reason": "agreed"})
        elif kind == "flag":
            self.send(board, game, "flag", {"side": "red"})  # a proposal until confirmed
            data = {"winner": "black", "reason": "flag", "status": "confirmed"}
            self.send(board, game, "result", data)
        else:
            for side in ("red", "black") if kind == "double_forfeit" else ("black",):
                self.forfeit(board, game, side)

    def forfeit(self, board: str, game: str, side: str) -> None:
        """The node proposes the forfeit, the arbiter confirms it (its ``resolve``)."""
        self.send(board, game, "forfeit", {"side": side, "reason": "absent", "status": "pending"})
        ref = self.seq[board]
        data = {"side": side, "reason": "absent", "status": "confirmed", "ref": ref}
        self.send(board, game, "forfeit", data)

    async def flush(self) -> None:
        assert self.station.ingest is not None
        await self.station.ingest.flush()
