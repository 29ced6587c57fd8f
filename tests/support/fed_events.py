"""A venue's reports as the hub stores them, for the hub's standings and page tests: ``Venue``
numbers each board's events as a node does and stamps later reports later."""

from __future__ import annotations

from typing import Any

from federation_hub.records import EventRecord
from support.station import envelope

__all__ = ["Venue"]


class Venue:
    """Events of one venue's boards, numbered per board as a node does."""

    def __init__(self, venue: str = "va") -> None:
        self.venue = venue
        self.seq: dict[str, int] = {}
        self.records: list[EventRecord] = []

    def ev(self, board: str, game: str, type_: str, data: dict[str, Any], **kw: Any) -> int:
        seq = self.seq[board] = self.seq.get(board, 0) + 1
        ts = 1_700_000_000_000 + 1000 * len(self.records)  # later reports, later stamps
        body = envelope(board, seq, type=type_, data=data, ts=ts, **kw)
        body["game"] = game
        self.records.append(EventRecord(self.venue, board, 1, seq, type_, game, body["ts"], body))
        return seq

    def game(self, rnd: int, board: str, red: str, black: str) -> str:
        game = f"r{rnd}-b{board}"
        self.ev(board, game, "ready", {"game": game, "tc": "30m+5s", "red": red, "black": black})
        return game

    def result(self, board: str, game: str, winner: str | None, **data: Any) -> int:
        data.setdefault("reason", "resign" if winner else "agreed")
        return self.ev(board, game, "result", {"winner": winner, **data}, txn="t-" + game)
