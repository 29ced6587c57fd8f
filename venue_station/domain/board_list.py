"""The boards the pages show: every board the station has seen, and the boards of the latest
round paired whose clock it never saw — a dead Pi is a card that says 未连接, not a board
missing from the hall (an outsider: /board/N said 无此台次). A board of an earlier round never
seen, or one an import moved off, is not shown (a reviewer: they stayed until a restart).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from venue_station.domain.alarms import broker_down_since
from venue_station.intake.ingest import BoardView
from venue_station.store.database import Store, board_key, game_id

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["RoundBoards", "board_views"]


class RoundBoards:
    """The latest round paired and its boards, read again after every change of the pairings
    (an import, an undo, a rebuild) and at the station's start."""

    def __init__(self) -> None:
        self.round: int | None = None
        self.boards: frozenset[str] = frozenset()

    async def refresh(self, store: Store) -> None:
        rows = await store.pairings()
        self.round = max((int(p["round"]) for p in rows), default=None)
        self.boards = frozenset(str(p["board"]) for p in rows if int(p["round"]) == self.round)

    def __repr__(self) -> str:
        return f"<RoundBoards round={self.round} boards={len(self.boards)}>"


def board_views(station: Station) -> list[dict[str, Any]]:
    """Every board's view; a board of the round never seen has no status and no state, and
    ``paired_game`` (its game, for the hall screen's round filter). While the broker is down
    none is known to be online: each is ``unknown_since`` the instant the station lost it."""
    ingest, latest = station.ingest, station.round_boards
    assert ingest is not None
    views, seqs = ingest.boards, ingest.seqs.boards
    unseen = {b for b in latest.boards if b not in views and b not in seqs}
    names = sorted(set(views) | set(seqs) | unseen, key=board_key)
    out = [views.get(b, BoardView(b)).as_dict(seqs.get(b)) for b in names]
    blind_since = broker_down_since(station)
    for view in out:
        view["unknown_since"] = blind_since
        if blind_since is not None:
            view["online"] = False
        if view["board"] in unseen and latest.round is not None:
            view["paired_game"] = game_id(latest.round, view["board"])
    return out
