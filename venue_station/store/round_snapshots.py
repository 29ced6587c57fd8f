"""A round's pairings and games as they were, and putting them back (undoing an import).

``take`` reads the rows of some rounds; ``put_back`` replaces those rounds' rows with them in
one transaction, all or nothing. The audit (``domain/tournament_desk.py``) keeps what ``take``
read before an import, so the last import can be undone while its games have no events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from venue_station.store import tables as t

__all__ = ["games_with_events", "put_back", "take"]

_TABLES = {"pairings": t.pairings, "games": t.games, "rounds": t.rounds}


async def take(engine: AsyncEngine, rounds: Iterable[int]) -> dict[str, list[dict[str, Any]]]:
    wanted = sorted(set(rounds))
    out: dict[str, list[dict[str, Any]]] = {}
    async with engine.connect() as conn:
        for name, table in _TABLES.items():
            q = sa.select(table).where(table.c.round.in_(wanted))
            out[name] = [dict(r._mapping) for r in await conn.execute(q)]
    return out


async def put_back(
    engine: AsyncEngine, rounds: Iterable[int], rows: Mapping[str, Sequence[Mapping[str, Any]]]
) -> None:
    wanted = sorted(set(rounds))
    async with engine.begin() as conn:
        for name, table in _TABLES.items():
            await conn.execute(sa.delete(table).where(table.c.round.in_(wanted)))
            if rows.get(name):
                await conn.execute(sa.insert(table), [dict(r) for r in rows[name]])


async def games_with_events(engine: AsyncEngine, games: Iterable[str]) -> list[str]:
    """Those of ``games`` that have any stored event (a game begun cannot be un-imported)."""
    wanted = sorted(set(games))
    if not wanted:
        return []
    e = t.events
    q = sa.select(e.c.game).where(e.c.game.in_(wanted)).distinct()
    async with engine.connect() as conn:
        return sorted(str(r[0]) for r in await conn.execute(q))
