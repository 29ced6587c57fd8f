"""A venue's reports as the hub stores them, for the hub's standings and page tests: ``Venue``
numbers each board's events as a node does and stamps later reports later."""

from __future__ import annotations

from typing import Any

from federation_hub.records import DecisionRecord, EventRecord
from federation_hub.store import HubStore
from support.station import envelope

__all__ = ["Venue"]


class Venue:
    """Events of one venue's boards, numbered per board as a node does."""

    def __init__(self, venue: str = "va") -> None:
        self.venue = venue
        self.seq: dict[str, int] = {}
        self.records: list[EventRecord] = []
        self.decisions: list[DecisionRecord] = []  # the venue station's (wire ``Decision``)

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
        """A result the arbiter entered; when it is not pending, the station decided it and
        published its ``Decision`` (issue 27)."""
        data.setdefault("reason", "resign" if winner else "agreed")
        seq = self.ev(board, game, "result", {"winner": winner, **data}, txn="t-" + game)
        if data.get("status", "confirmed") != "pending":
            self.decide(board, seq, game, "result", winner=winner, reason=data["reason"])
        return seq

    def decide(self, board: str, seq: int, game: str, type_: str, **what: Any) -> None:
        body = {
            "v": 1,
            "board": board,
            "session": 1,
            "seq": seq,
            "game": game,
            "type": type_,
            "status": what.pop("status", "confirmed"),
            "txn": "t-" + game,
            "by": "arb1",
            "ts": 1_700_000_000_000,
            **what,
        }
        self.decisions.append(DecisionRecord(self.venue, board, 1, seq, body))

    async def store_in(self, store: HubStore) -> None:
        await store.add_events(self.records)
        await store.add_decisions(self.decisions)
