"""The store's tournament reads: what the standings, the TRF, the knockout and the hall screens
ask of the stored games, players and events, each in one query.

``Store.reads`` (``database.py`` holds the writes and the per-event reads), so every read of the
database goes through the store and no view builds SQL of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from clock_service.outcome import FACT_TYPES
from venue_station.store import tables as t

__all__ = ["TournamentReads"]


# A venue start is logged a moment before the boards' ``started`` events it causes.
ANNOUNCED_SLACK_MS = 5_000


class TournamentReads:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def decisive_events(self, games: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """game -> the events that decide its outcome (``clock_service.outcome.FACT_TYPES``),
        in seq order, for every game asked (none: an empty list). One query for all of them,
        not one per game: 360 games at 9 rounds."""
        wanted = list(games)
        out: dict[str, list[dict[str, Any]]] = {g: [] for g in wanted}
        if not wanted:
            return out
        e = t.events
        q = sa.select(e.c.game, e.c.seq, e.c.type, e.c.data).where(
            e.c.type.in_(FACT_TYPES), e.c.game.in_(wanted)
        )
        async with self.engine.connect() as conn:
            for row in await conn.execute(q.order_by(e.c.game, e.c.seq)):
                out[row.game].append(dict(row._mapping))
        return out

    async def event_stamps(
        self, keys: Iterable[tuple[str, int, int]]
    ) -> dict[tuple[str, int, int], tuple[int, str]]:
        """(board, session, seq) -> the stored event's (ts, type), for the keys that are stored:
        one query a board and session (the writer's check of a batch's duplicates)."""
        groups: dict[tuple[str, int], list[int]] = {}
        for board, session, seq in keys:
            groups.setdefault((board, session), []).append(seq)
        e, out = t.events, {}
        async with self.engine.connect() as conn:
            for (board, session), seqs in groups.items():
                q = sa.select(e.c.seq, e.c.ts, e.c.type).where(
                    e.c.board == board, e.c.session == session, e.c.seq.in_(seqs)
                )
                for row in await conn.execute(q):
                    out[board, session, int(row.seq)] = (int(row.ts), str(row.type))
        return out

    async def player_tags(self) -> dict[str, frozenset[str]]:
        """name -> tags of every imported player."""
        p = t.players
        async with self.engine.connect() as conn:
            rows = await conn.execute(sa.select(p.c.name, p.c.tags))
            return {r.name: frozenset((r.tags or "").split()) for r in rows}

    async def player_ratings(self) -> dict[str, int | None]:
        """name -> rating (None: unrated) of every imported player."""
        p = t.players
        async with self.engine.connect() as conn:
            rows = await conn.execute(sa.select(p.c.name, p.c.rating))
            return {r.name: r.rating for r in rows}

    async def current_round(self) -> tuple[int, int] | None:
        """(round, started ms) of the highest round with a ``started`` event stored (its first
        ``started`` event's ``ts``), or None while no round has started."""
        ev = t.events
        query = (
            sa.select(ev.c.round, sa.func.min(ev.c.ts))
            .where(ev.c.type == "started", ev.c.round.is_not(None))
            .group_by(ev.c.round)
            .order_by(ev.c.round.desc())
            .limit(1)
        )
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        return (int(row[0]), int(row[1])) if row is not None else None

    async def round_starts(self) -> dict[int, int]:
        """round -> when its clocks started: its first ``started`` event's ``ts``."""
        ev = t.events
        query = (
            sa.select(ev.c.round, sa.func.min(ev.c.ts))
            .where(ev.c.type == "started", ev.c.round.is_not(None))
            .group_by(ev.c.round)
        )
        async with self.engine.connect() as conn:
            return {int(r[0]): int(r[1]) for r in await conn.execute(query)}

    async def announced_start(self, started_ms: int) -> int | None:
        """The announced start of the round whose clocks started at ``started_ms``: the ``at``
        of the venue's ``start`` behind it, when that time had already passed (the clocks
        started at once, late; the 15 minutes of 迟到 count from it, as on every board), else
        None. The start behind it: the latest venue ``start`` sent at most ten seconds before
        (a start whose time has passed starts the boards at once)."""
        c = t.commands
        q = (
            sa.select(c.c.args, c.c.sent_ms)
            .where(
                c.c.cmd == "start",
                c.c.board.is_(None),
                c.c.sent_ms <= started_ms + ANNOUNCED_SLACK_MS,
                c.c.sent_ms >= started_ms - 10_000,
            )
            .order_by(c.c.id.desc())
            .limit(1)
        )
        async with self.engine.connect() as conn:
            row = (await conn.execute(q)).first()
        if row is None or not isinstance(row.args, dict):
            return None
        at = row.args.get("at")
        if not isinstance(at, int) or isinstance(at, bool) or at >= started_ms:
            return None
        return at

    async def asking_commands(self) -> list[dict[str, Any]]:
        """The commands that ask a decision or bind a game (``intake/asks.py``), as sent."""
        c = t.commands
        q = sa.select(c.c.txn, c.c.board, c.c.cmd, c.c.args, c.c.user).where(
            c.c.cmd.in_(("result", "resolve", "foul", "withdraw", "set_game"))
        )
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q.order_by(c.c.id))]

    async def ruling_events(self) -> list[dict[str, Any]]:
        """Every stored result, foul and forfeit in the order stored (``intake/asks.py``)."""
        e = t.events
        q = sa.select(e.c.board, e.c.session, e.c.seq, e.c.game, e.c.type, e.c.data).where(
            e.c.type.in_(("result", "foul", "forfeit"))
        )
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q.order_by(e.c.id))]
