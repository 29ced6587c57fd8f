"""The players table's changes a players file makes beside its upsert (``Database.add_players``):
a name put right and a row the file no longer has, both only for a player who never played —
no game and no pairing names him (``Store.player_rows``; the rules are
``domain/import_guard.py``'s ``check_entrants``, the caller ``domain/trf_io.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from venue_station.store import tables as t

__all__ = ["PlayerRows"]


async def _named_in_play(
    conn: AsyncConnection, names: Collection[str], but_round: int | None = None
) -> set[str]:
    """Those of ``names`` that a game or a pairing names (``but_round``: but that round's,
    which the import replaces)."""
    found: set[str] = set()
    for table in (t.games, t.pairings):
        for side in (table.c.red, table.c.black):
            q = sa.select(side).where(side.in_(list(names)))
            if but_round is not None:
                q = q.where(table.c.round != but_round)
            rows = await conn.execute(q)
            found |= {str(r[0]) for r in rows}
    return found


class PlayerRows:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def begun(self, games: Collection[str]) -> set[str]:
        """Those of ``games`` whose clock did anything but take the game (``ready``): a game
        only paired and sent may still be paired again, names put right."""
        if not games:
            return set()
        e = t.events
        q = sa.select(e.c.game).where(e.c.game.in_(list(games)), e.c.type != "ready").distinct()
        async with self.engine.connect() as conn:
            return {str(r[0]) for r in await conn.execute(q)}

    async def rename_and_remove(
        self,
        renames: Mapping[str, str],
        removes: Collection[str],
        *,
        but_round: int | None = None,
    ) -> tuple[dict[str, str], list[dict[str, Any]]]:
        """In one transaction: each ``old -> new`` name of ``renames`` (the row keeps its club,
        rating and groups), then the rows of ``removes``; a name a game or a pairing names is
        left as it is — but in round ``but_round``, which the import pairs again. Returns what
        was renamed, and the rows removed (for ``put_back``)."""
        names = set(renames) | set(removes)
        if not names:
            return {}, []
        p = t.players
        async with self.engine.begin() as conn:
            kept = await _named_in_play(conn, names, but_round)
            renamed = {old: new for old, new in renames.items() if old not in kept}
            # (a file's name that is a row already, from a players CSV: the old row goes)
            taken = await _rows(conn, renamed.values())
            gone = [n for n in removes if n not in kept and n not in renames]
            gone += [old for old, new in renamed.items() if new in taken]
            rows = await _rows(conn, gone)
            if gone:
                await conn.execute(sa.delete(p).where(p.c.name.in_(gone)))
            for old, new in renamed.items():
                if new not in taken:
                    await conn.execute(sa.update(p).where(p.c.name == old).values(name=new))
        return renamed, [rows[n] for n in sorted(rows)]

    async def put_back(
        self,
        renamed: Mapping[str, str],
        removed: list[dict[str, Any]],
        added: Collection[str] = (),
    ) -> None:
        """Undo ``rename_and_remove`` and the rows the import ``added`` (the change log's 撤销 of
        the import that made them: a late entrant it added leaves with it, unless he played)."""
        p = t.players
        gone = {str(r["name"]) for r in removed}
        async with self.engine.begin() as conn:
            if added:
                fresh = [n for n in added if n not in await _named_in_play(conn, added)]
                await conn.execute(sa.delete(p).where(p.c.name.in_(fresh)))
            present = await _rows(conn, [*renamed, *renamed.values(), *gone])
            for old, new in renamed.items():
                # (an old row removed because the new name had one: inserted back below)
                if old not in gone and new in present and old not in present:
                    await conn.execute(sa.update(p).where(p.c.name == new).values(name=old))
            rows = [r for r in removed if r["name"] not in present]
            if rows:
                await conn.execute(sa.insert(p), rows)


async def _rows(conn: AsyncConnection, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """name -> row of those of ``names`` that are in the players table."""
    wanted = list(names)
    if not wanted:
        return {}
    p = t.players
    found = await conn.execute(sa.select(p).where(p.c.name.in_(wanted)))
    return {str(r.name): dict(r._mapping) for r in found}
