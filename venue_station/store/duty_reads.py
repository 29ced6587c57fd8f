"""The store's reads for the recording duties (录谱, issue 29): when each round started, how many
presses each game's clock counted, and the ``record_missing`` alerts the station raised; and for
the counts on the records (``domain/record_counts.py``): the recorded games, the move-limit and
early-draw facts, and the claimant the arbiter named when starting a count.

``Store.duties`` (like ``reads.py``); the duties themselves are the domain's
(``venue_station/domain/record_duties.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from venue_station.store import tables as t

__all__ = ["RECORD_ALERT", "DutyReads"]

RECORD_ALERT = "record_missing"  # the alert kind that carries the pending not_recording foul


class DutyReads:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def round_starts(self, *, after: int = 0) -> dict[int, int]:
        """round -> its start (the ``ts`` of its first ``started`` event), for every round
        above ``after`` that has started (the index on the round keeps a late round cheap)."""
        ev = t.events
        query = (
            sa.select(ev.c.round, sa.func.min(ev.c.ts))
            .where(ev.c.round > after, ev.c.type == "started")
            .group_by(ev.c.round)
        )
        async with self.engine.connect() as conn:
            return {int(r[0]): int(r[1]) for r in await conn.execute(query)}

    async def press_counts(self, round_no: int, *, also: Iterable[str] = ()) -> dict[str, int]:
        """game -> the clock's presses (stored ``move`` events) of every game of the round, and
        of the games ``also`` names (a knockout game's events carry no round)."""
        ev = t.events
        named = sorted(set(also))
        which = ev.c.round == round_no
        if named:
            which = sa.or_(which, ev.c.game.in_(named))
        query = (
            sa.select(ev.c.game, sa.func.count())
            .where(which, ev.c.type == "move", ev.c.game.is_not(None))
            .group_by(ev.c.game)
        )
        async with self.engine.connect() as conn:
            return {str(r[0]): int(r[1]) for r in await conn.execute(query)}

    async def record_alerts(self, games: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """game -> its ``record_missing`` alert (one per game: its key), of the games named or
        all of them."""
        a = t.alerts
        query = sa.select(a).where(a.c.kind == RECORD_ALERT, a.c.game.is_not(None))
        if games is not None:
            query = query.where(a.c.game.in_(list(games)))
        async with self.engine.connect() as conn:
            return {str(r.game): dict(r._mapping) for r in await conn.execute(query)}

    async def recorded_games(self) -> set[str]:
        """The games whose record holds at least one move."""
        r = t.records
        async with self.engine.connect() as conn:
            return {str(g) for (g,) in await conn.execute(sa.select(r.c.game).where(r.c.ply > 0))}

    async def count_facts(self) -> list[dict[str, Any]]:
        """The stored ``move_count`` and ``warning`` events of games, in order: those a
        record may count are among them (record_counts.py)."""
        ev = t.events
        query = (
            sa.select(ev)
            .where(ev.c.type.in_(("move_count", "warning")), ev.c.game.is_not(None))
            .order_by(ev.c.id)
        )
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(query)]

    async def move_count_claimant(self, board: str, *, before_ms: int) -> str | None:
        """The claimant (提出方) of the last ``move_count`` command to ``board`` sent by
        ``before_ms`` and not refused; None when it named none."""
        c = t.commands
        query = (
            sa.select(c.c.args)
            .where(
                c.c.board == board,
                c.c.cmd == "move_count",
                c.c.sent_ms <= before_ms,
                c.c.outcome != "rejected",
            )
            .order_by(c.c.id.desc())
            .limit(1)
        )
        async with self.engine.connect() as conn:
            args = (await conn.execute(query)).scalar()
        claimant = (args or {}).get("claimant") if isinstance(args, dict) else None
        return claimant if claimant in ("red", "black") else None
