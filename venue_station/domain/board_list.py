"""The boards the pages show: every board the station has seen, and the boards of the latest
round paired whose clock it never saw — a dead Pi is a card that says 未连接, not a board
missing from the hall (an outsider: /board/N said 无此台次). A board of an earlier round never
seen, or one an import moved off, is not shown (a reviewer: they stayed until a restart).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from venue_station.domain.alarms import broker_down_since
from venue_station.domain.pairing_import import set_game_args
from venue_station.intake.ingest import BoardView
from venue_station.store.database import board_key

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["RoundBoards", "board_views", "unseen_boards"]


class RoundBoards:
    """The latest round paired, board -> the ``set_game`` of its game (the players for a card
    that never saw its clock, the game to give a spare board), read again after every change
    of the pairings (an import, an undo, a rebuild) and at the station's start."""

    def __init__(self) -> None:
        self.round: int | None = None
        self.games: dict[str, dict[str, Any]] = {}

    @property
    def boards(self) -> frozenset[str]:
        return frozenset(self.games)

    async def refresh(self, station: Station) -> None:
        store = station.require_store()
        rounds = [int(r["round"]) for r in await store.rounds()]
        self.round = max(rounds, default=None)
        rows = await store.games(self.round) if self.round is not None else []
        # the round's pairing says which boards (a game an import moved off keeps its row)
        paired = {str(p["board"]) for p in await store.pairings(self.round)} if rows else set()
        tags = await store.reads.player_tags()
        self.games = {
            str(g["board"]): set_game_args(station.regulation, g, tags)
            for g in rows
            if str(g["board"]) in paired
        }

    def __repr__(self) -> str:
        return f"<RoundBoards round={self.round} boards={len(self.games)}>"


def unseen_boards(station: Station) -> list[str]:
    """The boards of the latest round paired whose clock the station never saw, in order: a
    command to the whole venue does not reach them (全场开钟 said "7 started" of 8: an outsider)."""
    ingest = station.ingest
    assert ingest is not None
    seen = set(ingest.boards) | set(ingest.seqs.boards)
    return sorted((b for b in station.round_boards.boards if b not in seen), key=board_key)


def board_views(station: Station) -> list[dict[str, Any]]:
    """Every board's view; a board of the round never seen has no status and no state, and
    ``paired``: the ``set_game`` of its game (its players on the card, the hall screen's round
    filter, the game a spare board takes). While the broker is down
    none is known to be online: each is ``unknown_since`` the instant the station lost it."""
    ingest, latest = station.ingest, station.round_boards
    assert ingest is not None
    views, seqs = ingest.boards, ingest.seqs.boards
    unseen = set(unseen_boards(station))
    names = sorted(set(views) | set(seqs) | unseen, key=board_key)
    out = [views.get(b, BoardView(b)).as_dict(seqs.get(b)) for b in names]
    blind_since = broker_down_since(station)
    for view in out:
        view["unknown_since"] = blind_since
        if blind_since is not None:
            view["online"] = False
        if view["board"] in unseen:
            view["paired"] = latest.games[view["board"]]
    return out
