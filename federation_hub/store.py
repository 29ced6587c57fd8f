"""The hub's archive: every venue's events once, and each board's newest state (PostgreSQL).

An event's key is ``(venue, board, session, seq)``: the insert ignores a conflict on it, so a
redelivery from JetStream, a message the venue's bridge re-sent, or two hubs racing on the same
message all store it once. A state replaces the stored one only if it is newer
(``(session, seq)`` greater or equal). SQLite works too (tests of the pure parts); the federation
runs on PostgreSQL. The schema is created at open (``create_all``; no migrations yet).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.dialects import sqlite as lite
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from federation_hub.errors import HubConfigError
from federation_hub.records import DecisionRecord, EventRecord, StateRecord
from wire_contract.wallclock import wall_ms

__all__ = ["HubStore", "normalise_url"]

SCHEMA_LOCK = 0x717A_6875_6200  # "qzhub": the advisory lock of the schema's creation
meta = sa.MetaData()
events = sa.Table(
    "fed_events",
    meta,
    sa.Column("venue", sa.String(32), primary_key=True),
    sa.Column("board", sa.String(32), primary_key=True),
    sa.Column("session", sa.BigInteger, primary_key=True),
    sa.Column("seq", sa.BigInteger, primary_key=True),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("game", sa.String(128)),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Column("stored_ms", sa.BigInteger, nullable=False),
    sa.Column("body", sa.JSON, nullable=False),
)
# The venue stations' decisions (issue 27), keyed by the board event they decide.
decisions = sa.Table(
    "fed_decisions",
    meta,
    sa.Column("venue", sa.String(32), primary_key=True),
    sa.Column("board", sa.String(32), primary_key=True),
    sa.Column("session", sa.BigInteger, primary_key=True),
    sa.Column("seq", sa.BigInteger, primary_key=True),
    sa.Column("stored_ms", sa.BigInteger, nullable=False),
    sa.Column("body", sa.JSON, nullable=False),
)
boards = sa.Table(
    "fed_boards",
    meta,
    sa.Column("venue", sa.String(32), primary_key=True),
    sa.Column("board", sa.String(32), primary_key=True),
    sa.Column("session", sa.BigInteger, nullable=False),
    sa.Column("seq", sa.BigInteger, nullable=False),
    sa.Column("ts", sa.BigInteger, nullable=False),
    sa.Column("body", sa.JSON, nullable=False),
)


# What asyncpg raises for a failed statement or a lost connection (its own classes: no
# SQLAlchemy wrapper on this path). A connection the server closed shows as an internal
# client error ("another operation is in progress") on its next use.
DRIVER_ERRORS = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)
INSERT_EVENTS = """
INSERT INTO fed_events (venue, board, session, seq, type, game, ts, stored_ms, body)
SELECT v, b, s, q, t, g, ts, $9, j::json
FROM unnest($1::varchar[], $2::varchar[], $3::int8[], $4::int8[], $5::varchar[],
            $6::varchar[], $7::int8[], $8::text[]) AS u(v, b, s, q, t, g, ts, j)
ON CONFLICT (venue, board, session, seq) DO NOTHING
"""


def normalise_url(url: str) -> str:
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+asyncpg://" + url.split("://", 1)[1]
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url[len("sqlite:///") :]
    if url.startswith(("postgresql+asyncpg://", "sqlite+aiosqlite:///")):
        return url
    raise HubConfigError(f"database URL {url!r}: use postgresql://… (or sqlite:/// for tests)")


class HubStore:
    def __init__(self, *, engine: AsyncEngine) -> None:
        self.engine = engine
        self._dialect = lite if engine.dialect.name == "sqlite" else pg
        self._closed = False

    @classmethod
    async def open(cls, url: str) -> HubStore:
        engine = (
            create_async_engine(normalise_url(url), pool_size=4, max_overflow=0)
            if not url.startswith("sqlite")
            else create_async_engine(normalise_url(url))
        )
        try:
            async with engine.begin() as conn:
                if engine.dialect.name == "postgresql":
                    # Hubs started together would race in CREATE TABLE (a duplicate pg_type
                    # row): one creates, the others wait for its commit and find the tables.
                    await conn.execute(
                        sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK}
                    )
                await conn.run_sync(meta.create_all)
        except BaseException:
            await engine.dispose()
            raise
        return cls(engine=engine)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self.engine.dispose()

    async def add_events(self, records: Sequence[EventRecord]) -> int:
        """Store a batch in one transaction; returns how many were new (the rest were known)."""
        if not records:
            return 0
        if self._dialect is pg:
            return await self._add_events_pg(records)
        stamp = wall_ms()
        rows = [
            {
                "venue": r.venue,
                "board": r.board,
                "session": r.session,
                "seq": r.seq,
                "type": r.type,
                "game": r.game,
                "ts": r.ts,
                "stored_ms": stamp,
                "body": json.loads(r.body) if isinstance(r.body, str) else r.body,
            }
            for r in records
        ]
        # RETURNING names the rows actually inserted (rowcount is unreliable for a batch).
        stmt = (
            self._dialect.insert(events)
            .on_conflict_do_nothing(index_elements=["venue", "board", "session", "seq"])
            .returning(events.c.seq)
        )
        async with self.engine.begin() as conn:
            result = await conn.execute(stmt, rows)
            return len(result.all())

    async def add_resent(self, records: Sequence[EventRecord]) -> tuple[int, int]:
        """Store a venue station's copies of events the hub asked again, only where the board
        itself has numbered that far (its newest state's seq, from the board's own account):
        the station may fill a hole, never add a board's future. Returns (new, refused)."""
        if not records:
            return 0, 0
        pairs = {(r.venue, r.board) for r in records}
        q = sa.select(boards.c.venue, boards.c.board, boards.c.seq).where(
            sa.tuple_(boards.c.venue, boards.c.board).in_(sorted(pairs))
        )
        async with self.engine.connect() as conn:
            numbered = {(r.venue, r.board): r.seq for r in await conn.execute(q)}
        kept = [r for r in records if r.seq <= numbered.get((r.venue, r.board), 0)]
        return await self.add_events(kept), len(records) - len(kept)

    async def _add_events_pg(self, records: Sequence[EventRecord]) -> int:
        # The hub's hot path: one prepared statement, one round trip, the batch as nine arrays
        # and the bodies as the venue's own JSON text (SQLAlchemy's per-row parameter handling
        # and a json.dumps per event were ~2/3 of the hub's time per batch). One statement is
        # atomic without a transaction block; PostgreSQL's row count of an INSERT is exact.
        columns: list[list[Any]] = [[], [], [], [], [], [], [], []]
        venue, board, session, seq, type_, game, ts, body = columns
        for r in records:
            venue.append(r.venue)
            board.append(r.board)
            session.append(r.session)
            seq.append(r.seq)
            type_.append(r.type)
            game.append(r.game)
            ts.append(r.ts)
            body.append(r.body if isinstance(r.body, str) else json.dumps(r.body))
        async with self.engine.connect() as conn:
            driver = (await conn.get_raw_connection()).driver_connection
            if driver is None:  # a pooled connection always has one; typed as optional
                raise OSError("the database connection has no asyncpg connection")
            try:
                status = await driver.execute(INSERT_EVENTS, *columns, wall_ms())
            except DRIVER_ERRORS as exc:
                # SQLAlchemy never saw this failure: the connection must not go back to its
                # pool (it may be dead), and the hub retries on SQLAlchemy's errors only.
                await conn.invalidate()
                raise sa.exc.DBAPIError(INSERT_EVENTS, None, exc) from exc
        return int(status.rsplit(" ", 1)[1])

    async def add_decisions(self, records: Sequence[DecisionRecord]) -> int:
        """Store the stations' decisions (a known one again is a no-op); how many were new."""
        if not records:
            return 0
        stamp = wall_ms()
        rows = [
            {
                "venue": r.venue,
                "board": r.board,
                "session": r.session,
                "seq": r.seq,
                "stored_ms": stamp,
                "body": r.body,
            }
            for r in records
        ]
        stmt = (
            self._dialect.insert(decisions)
            .on_conflict_do_nothing(index_elements=["venue", "board", "session", "seq"])
            .returning(decisions.c.seq)
        )
        async with self.engine.begin() as conn:
            return len((await conn.execute(stmt, rows)).all())

    async def put_states(self, records: Sequence[StateRecord]) -> None:
        if not records:
            return
        async with self.engine.begin() as conn:
            for r in records:
                ins = self._dialect.insert(boards).values(
                    venue=r.venue,
                    board=r.board,
                    session=r.session,
                    seq=r.seq,
                    ts=r.ts,
                    body=r.body,
                )
                newer = sa.or_(
                    boards.c.session < ins.excluded.session,
                    sa.and_(
                        boards.c.session == ins.excluded.session, boards.c.seq <= ins.excluded.seq
                    ),
                )
                await conn.execute(
                    ins.on_conflict_do_update(
                        index_elements=["venue", "board"],
                        set_={k: ins.excluded[k] for k in ("session", "seq", "ts", "body")},
                        where=newer,
                    )
                )

    # -- reading (the API) ----------------------------------------------------------------
    async def venues(self) -> list[dict[str, Any]]:
        q = (
            sa.select(
                events.c.venue,
                sa.func.count().label("events"),
                sa.func.count(sa.distinct(events.c.board)).label("boards"),
            )
            .group_by(events.c.venue)
            .order_by(events.c.venue)
        )
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q)]

    async def boards_of(self, venue: str) -> list[dict[str, Any]]:
        q = sa.select(boards).where(boards.c.venue == venue).order_by(boards.c.board)
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q)]

    async def live_states(self, limit: int, *, since_ms: int) -> list[dict[str, Any]]:
        """The boards' latest states stamped since ``since_ms`` (today's, not last month's),
        the newest first, at most ``limit``: for a live page opened between two states of a
        board (a long think, a pause, a finished game)."""
        q = (
            sa.select(boards)
            .where(boards.c.ts >= since_ms)
            .order_by(boards.c.ts.desc())
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q)]

    async def event_keys(self) -> list[tuple[str, str, int, int]]:
        q = sa.select(events.c.venue, events.c.board, events.c.session, events.c.seq)
        async with self.engine.connect() as conn:
            return [(r[0], r[1], int(r[2]), int(r[3])) for r in await conn.execute(q)]

    async def results(self, venue: str) -> list[dict[str, Any]]:
        """Each game's latest ``result`` event (by board seq), as the venue's station keeps it."""
        q = (
            sa.select(events.c.board, events.c.game, events.c.seq, events.c.body)
            .where(events.c.venue == venue, events.c.type == "result")
            .order_by(events.c.board, events.c.seq)
        )
        latest: dict[tuple[str, str | None], dict[str, Any]] = {}
        async with self.engine.connect() as conn:
            for r in await conn.execute(q):
                latest[(r.board, r.game)] = {
                    "board": r.board,
                    "game": r.game,
                    "seq": r.seq,
                    **r.body["data"],
                }
        return list(latest.values())

    async def gaps(self) -> list[dict[str, Any]]:
        """Missing seqs per board: a board's seq rises by one per event across its life."""
        nxt = sa.func.lead(events.c.seq).over(
            partition_by=(events.c.venue, events.c.board), order_by=events.c.seq
        )
        inner = sa.select(events.c.venue, events.c.board, events.c.seq, nxt.label("nxt")).subquery()
        q = sa.select(inner).where(inner.c.nxt > inner.c.seq + 1)
        async with self.engine.connect() as conn:
            return [
                {"venue": r.venue, "board": r.board, "after": r.seq, "before": r.nxt}
                for r in await conn.execute(q)
            ]

    async def board_heads(self) -> list[tuple[str, str, int, int]]:
        """``(venue, board, session, seq)`` of every board's newest state: how far each board
        says it has numbered (what the mender holds the stored events against)."""
        q = sa.select(boards.c.venue, boards.c.board, boards.c.session, boards.c.seq)
        async with self.engine.connect() as conn:
            return [(r[0], r[1], int(r[2]), int(r[3])) for r in await conn.execute(q)]

    async def first_seq(self, venue: str, board: str, session: int) -> int | None:
        q = sa.select(sa.func.min(events.c.seq)).where(
            events.c.venue == venue, events.c.board == board, events.c.session == session
        )
        async with self.engine.connect() as conn:
            found = (await conn.execute(q)).scalar()
        return None if found is None else int(found)

    async def seqs_after(
        self, venue: str, board: str, session: int, after: int, limit: int
    ) -> list[int]:
        """A board's stored seqs of one session past ``after``, ascending: one range of the
        primary key's index (venue, board, session, seq), whatever the archive's size."""
        q = (
            sa.select(events.c.seq)
            .where(
                events.c.venue == venue,
                events.c.board == board,
                events.c.session == session,
                events.c.seq > after,
            )
            .order_by(events.c.seq)
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            return [int(r[0]) for r in await conn.execute(q)]

    async def game_facts(self, venue: str) -> list[dict[str, Any]]:
        """A venue's ``ready`` and deciding events (flag, forfeit, result, foul) with a game, in
        report order: what the standings read (federation_hub/standings.py)."""
        kinds = ("ready", "flag", "forfeit", "result", "foul")
        d = decisions
        on = sa.and_(
            d.c.venue == events.c.venue,
            d.c.board == events.c.board,
            d.c.session == events.c.session,
            d.c.seq == events.c.seq,
        )
        q = (
            sa.select(
                events.c.board,
                events.c.game,
                events.c.seq,
                events.c.type,
                events.c.body,
                d.c.body.label("decision"),  # the station's, when it decided this event
            )
            .select_from(events.outerjoin(d, on))
            .where(events.c.venue == venue, events.c.type.in_(kinds), events.c.game.is_not(None))
            .order_by(events.c.ts, events.c.board, events.c.session, events.c.seq)
        )
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q)]
