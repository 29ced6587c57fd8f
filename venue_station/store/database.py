"""The station's store: SQLAlchemy 2 async over SQLite (default, a WAL file) or PostgreSQL.

Every write that must happen once (an event, an alert) is an insert that ignores a conflict on
the table's unique key, on both dialects, so a replay or a duplicate can never store twice.
Migrations run at open; a database whose schema is newer than this code is refused.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from venue_station.store import batch_writes
from venue_station.store import migrate as migrations
from venue_station.store import tables as t
from venue_station.store.duty_reads import DutyReads
from venue_station.store.player_rows import PlayerRows
from venue_station.store.reads import TournamentReads
from venue_station.store.records import RecordRows
from venue_station.store.round_import import game_id, replace_rounds
from venue_station.store.sqlite_writes import SqliteWrites
from wire_contract.wallclock import wall_ms

__all__ = ["Store", "game_id", "normalise_url"]

log = logging.getLogger(__name__)
IMPORT_CHUNK = 500  # rows per transaction of an import: a few ms of write lock each


def normalise_url(url: str) -> str:
    """Accept plain ``sqlite:///`` and ``postgresql://`` URLs; pick the async drivers."""
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url[len("sqlite:///") :]
    if url.startswith(("postgresql://", "postgres://")):
        return "postgresql+asyncpg://" + url.split("://", 1)[1]
    return url


class Store:
    """Async access to the station database. Create with ``await Store.open(url)``.

    Composed of one part per purpose beside its own (events, alerts, boards, players, rounds,
    the command log): ``reads`` (standings, TRF, knockout, round: reads.py), ``duties`` (the
    recording duties: duty_reads.py), ``record_rows`` (the game records: records.py),
    ``player_rows`` (a name put right, a row dropped: player_rows.py)."""

    def __init__(self, engine: AsyncEngine, *, writes: SqliteWrites | None = None) -> None:
        self.engine = engine
        # SQLite: the writer's batches in a thread of their own, or on the loop when small
        # (sqlite_writes.py).
        self.writes = writes
        self.dialect = engine.dialect.name
        self.reads = TournamentReads(engine)
        self.duties = DutyReads(engine)
        self.record_rows = RecordRows(engine)
        self.player_rows = PlayerRows(engine)
        self._closed = False
        # Rows staged so far by the pairings import under way (0: none): how far it has got.
        self.import_staged_rows = 0

    @classmethod
    async def open(cls, url: str, *, migrate: bool = True, **engine_kw: Any) -> Store:
        url = normalise_url(url)
        engine = create_async_engine(url, **engine_kw)
        writes = None
        if engine.dialect.name == "sqlite":
            _sqlite_pragmas(engine.sync_engine)
            sync_url = engine.url.set(drivername="sqlite")
            thread, inline = sa.create_engine(sync_url), sa.create_engine(sync_url)
            _sqlite_pragmas(thread)
            _sqlite_pragmas(inline, busy_timeout_ms=0, autocheckpoint=False)
            writes = SqliteWrites(thread, inline=inline)
        store = cls(engine, writes=writes)
        try:
            if migrate:
                async with engine.begin() as conn:
                    version = await conn.run_sync(migrations.migrate)
                await store.set_meta("schema_version", version)
        except BaseException:
            await store.close()
            raise
        return store

    @classmethod
    def unopened(cls, url: str) -> Store:
        """A store not opened (nothing read or written): what a station waiting for its
        database hands the parts that only need one to exist."""
        return cls(create_async_engine(normalise_url(url)))

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self.writes is not None:
                await asyncio.to_thread(self.writes.close)  # a batch under way finishes first
            await self.engine.dispose()

    def insert(self, table: sa.Table) -> Any:
        return batch_writes.insert_for(self.dialect, table)

    # -- meta -----------------------------------------------------------------------------
    async def get_meta(self, key: str) -> str | None:
        async with self.engine.connect() as conn:
            row = await conn.execute(sa.select(t.meta.c.value).where(t.meta.c.key == key))
            return row.scalar_one_or_none()

    async def set_meta(self, key: str, value: str) -> None:
        stmt = self.insert(t.meta).values(key=key, value=value)
        stmt = stmt.on_conflict_do_update(index_elements=["key"], set_={"value": value})
        async with self.engine.begin() as conn:
            await conn.execute(stmt)

    async def next_station_session(self) -> int:
        """The station's session counter, persisted: one more than the last start's."""
        session = int(await self.get_meta("station_session") or 0) + 1
        await self.set_meta("station_session", str(session))
        return session

    # -- events ---------------------------------------------------------------------------
    async def insert_events(
        self,
        rows: Sequence[Mapping[str, Any]],
        *,
        alerts: Sequence[Mapping[str, Any]] = (),
        boards: Callable[[set[tuple[str, int, int]]], Sequence[Mapping[str, Any]]] | None = None,
    ) -> set[tuple[str, int, int]]:
        """Insert, ignoring any already stored; returns the keys actually inserted.

        ``alerts`` (rows with their ids, decided by the station) go in the same transaction:
        a failure stores neither, so a retry of the batch loses no alert. ``boards``, given
        the keys inserted, returns board rows to upsert in that transaction too (as
        ``upsert_boards``): one commit a batch, not two (issue 30). On SQLite the whole
        transaction runs in the store's writing thread (``sqlite_writes``), or on the loop
        when small: ``boards`` may be called in the thread, so it must read nothing the event
        loop changes meanwhile.
        """
        if not rows and not alerts and boards is None:
            return set()
        if self.writes is not None:
            return await self.writes.run(
                _write_with_boards, rows, alerts, boards, rows=len(rows) + len(alerts)
            )
        async with self.engine.begin() as conn:
            return await conn.run_sync(_write_with_boards, rows, alerts, boards)

    async def alert_index(self) -> tuple[set[str], int]:
        """Every alert key stored, and the largest id (0 when none)."""
        a = t.alerts
        async with self.engine.connect() as conn:
            keys = {r[0] for r in await conn.execute(sa.select(a.c.key))}
            top = (await conn.execute(sa.select(sa.func.max(a.c.id)))).scalar_one_or_none()
        return keys, int(top or 0)

    async def count_events(self) -> int:
        async with self.engine.connect() as conn:
            return int(
                (await conn.execute(sa.select(sa.func.count()).select_from(t.events))).scalar_one()
            )

    async def events(
        self,
        *,
        board: str | None = None,
        round: int | None = None,
        game: str | None = None,
        types: Iterable[str] | None = None,
        after: int | None = None,
        before: int | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[dict[str, Any]]:
        e = t.events
        q = sa.select(e)
        if board is not None:
            q = q.where(e.c.board == board)
        if round is not None:
            q = q.where(e.c.round == round)
        if game is not None:
            q = q.where(e.c.game == game)
        if types is not None:
            q = q.where(e.c.type.in_(list(types)))
        if after is not None:
            q = q.where(e.c.id > after)
        if before is not None:
            q = q.where(e.c.id < before)
        q = q.order_by(e.c.id.desc() if newest_first else e.c.id).limit(limit)
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q)]

    async def game_events(
        self, game: str, types: Iterable[str] | None = None
    ) -> list[dict[str, Any]]:
        """A game's events in the board's order (seq)."""
        e = t.events
        q = sa.select(e).where(e.c.game == game)
        if types is not None:
            q = q.where(e.c.type.in_(list(types)))
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q.order_by(e.c.seq))]

    async def board_events(self, board: str, from_seq: int, to_seq: int) -> list[dict[str, Any]]:
        """A board's stored events with seq in ``from_seq`` … ``to_seq`` (every session), in
        seq order: what the hub asks sent again (domain/resend.py)."""
        e = t.events
        q = sa.select(e).where(e.c.board == board, e.c.seq.between(from_seq, to_seq))
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q.order_by(e.c.seq, e.c.session))]

    async def seqs_by_board(self) -> dict[str, list[int]]:
        """Every stored seq per board, ascending (to rebuild the gap detector at start)."""
        e = t.events
        out: dict[str, list[int]] = {}
        async with self.engine.connect() as conn:
            for board, seq in await conn.execute(
                sa.select(e.c.board, e.c.seq).order_by(e.c.board, e.c.seq)
            ):
                out.setdefault(board, []).append(int(seq))
        return out

    async def seqs_by_session(self) -> dict[tuple[str, int], list[int]]:
        """Every stored seq per (board, session), ascending (which keys are stored)."""
        e = t.events
        out: dict[tuple[str, int], list[int]] = {}
        async with self.engine.connect() as conn:
            for board, session, seq in await conn.execute(
                sa.select(e.c.board, e.c.session, e.c.seq).order_by(e.c.board, e.c.seq)
            ):
                out.setdefault((board, int(session)), []).append(int(seq))
        return out

    # -- boards ---------------------------------------------------------------------------
    async def upsert_boards(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Write each board's row; only the columns given are changed."""
        if not rows:
            return
        async with self.engine.begin() as conn:
            await conn.run_sync(batch_writes.upsert_boards, rows)

    async def boards(self) -> list[dict[str, Any]]:
        async with self.engine.connect() as conn:
            return [
                dict(r._mapping)
                for r in await conn.execute(sa.select(t.boards).order_by(t.boards.c.board))
            ]

    # -- players, rounds, pairings, games -------------------------------------------------
    async def add_players(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Upsert players in chunks of ``IMPORT_CHUNK``, one short transaction each (a long
        import never holds SQLite's write lock for long; the event loop runs between)."""
        by_keys: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
        for row in rows:  # one statement per column set: executemany needs the same columns
            by_keys.setdefault(tuple(sorted(row)), []).append(row)
        for keys, group in by_keys.items():
            stmt = self.insert(t.players)
            update = {k: stmt.excluded[k] for k in keys if k != "name"}
            if update:
                stmt = stmt.on_conflict_do_update(index_elements=["name"], set_=update)
            else:
                stmt = stmt.on_conflict_do_nothing(index_elements=["name"])
            for start in range(0, len(group), IMPORT_CHUNK):
                async with self.engine.begin() as conn:
                    await conn.execute(stmt, [dict(r) for r in group[start : start + IMPORT_CHUNK]])
                await asyncio.sleep(0)

    async def player_names(self) -> set[str]:
        async with self.engine.connect() as conn:
            return {r[0] for r in await conn.execute(sa.select(t.players.c.name))}

    async def replace_round(
        self, round_no: int, tc: str, rows: Sequence[Mapping[str, Any]]
    ) -> None:
        """Store a round's pairings and games, replacing an earlier import of that round; all
        or nothing (``round_import``). A game that already has a result keeps it: a re-import
        fixes names, not facts."""
        await self.replace_rounds(tc, {round_no: rows})

    async def replace_rounds(
        self,
        tc: str,
        rounds: Mapping[int, Sequence[Mapping[str, Any]]],
        *,
        void: Sequence[str] = (),
        by: str | None = None,
    ) -> None:
        """Several rounds of one file the same way, in one swap: all of them or none.
        ``void``: games of those rounds whose results the chief chose to void (kept, marked
        voided: ``voided_games``)."""

        def staged(count: int) -> None:
            self.import_staged_rows = count

        try:
            await replace_rounds(self.engine, tc, rounds, on_staged=staged, void=void, by=by)
        finally:
            self.import_staged_rows = 0

    async def pairings(self, round_no: int | None = None) -> list[dict[str, Any]]:
        q = sa.select(t.pairings).order_by(t.pairings.c.round, t.pairings.c.board)
        if round_no is not None:
            q = q.where(t.pairings.c.round == round_no)
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q)]

    async def rounds(self) -> list[dict[str, Any]]:
        async with self.engine.connect() as conn:
            return [
                dict(r._mapping)
                for r in await conn.execute(sa.select(t.rounds).order_by(t.rounds.c.round))
            ]

    async def games(self, round_no: int | None = None) -> list[dict[str, Any]]:
        q = sa.select(t.games).order_by(t.games.c.round, t.games.c.board)
        if round_no is not None:
            q = q.where(t.games.c.round == round_no)
        async with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in await conn.execute(q)]
        return sorted(rows, key=lambda g: (g["round"], _board_key(g["board"])))

    async def game(self, game: str) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(t.games).where(t.games.c.game == game))).first()
            return dict(row._mapping) if row else None

    async def set_game_result(
        self, game: str, winner: str | None, result: str | None, reason: str | None
    ) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(
                sa.update(t.games)
                .where(t.games.c.game == game)
                .values(winner=winner, result=result, reason=reason, updated_ms=wall_ms())
            )

    # -- alerts ---------------------------------------------------------------------------
    async def insert_alert(self, row: Mapping[str, Any]) -> int | None:
        """Insert unless an alert with the same key exists; returns the new id or None."""
        stmt = self.insert(t.alerts).values(**row).on_conflict_do_nothing(index_elements=["key"])
        async with self.engine.begin() as conn:
            result = await conn.execute(stmt.returning(t.alerts.c.id))
            new = result.scalar_one_or_none()
            return int(new) if new is not None else None

    async def update_alert(
        self, alert_id: int, *, status: str, by: str | None, only_open: bool = False
    ) -> dict[str, Any] | None:
        """The alert's new status; ``only_open``: only if no one has ruled it yet (in the same
        statement: a board's ruling arriving as an arbiter's is stored never takes it over),
        None when it had been."""
        q = sa.update(t.alerts).where(t.alerts.c.id == alert_id)
        if only_open:
            q = q.where(t.alerts.c.status.in_(["open", "acked"]))
        async with self.engine.begin() as conn:
            done = await conn.execute(q.values(status=status, by=by, updated_ms=wall_ms()))
            if only_open and done.rowcount == 0:
                return None
            row = (await conn.execute(sa.select(t.alerts).where(t.alerts.c.id == alert_id))).first()
            return dict(row._mapping) if row else None

    async def alert(self, alert_id: int) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(t.alerts).where(t.alerts.c.id == alert_id))).first()
            return dict(row._mapping) if row else None

    async def find_alert(self, board: str, kinds: Iterable[str], seq: int) -> dict[str, Any] | None:
        a = t.alerts
        q = sa.select(a).where(a.c.board == board, a.c.kind.in_(list(kinds)), a.c.seq == seq)
        async with self.engine.connect() as conn:
            row = (await conn.execute(q.order_by(a.c.id))).first()
            return dict(row._mapping) if row else None

    async def alerts(self, *, status: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        a = t.alerts
        q = sa.select(a).order_by(a.c.id.desc()).limit(limit)
        if status == "active":
            q = q.where(a.c.status.in_(["open", "acked"]))
        elif status is not None:
            q = q.where(a.c.status == status)
        async with self.engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(q)]

    async def open_alert_ids(self, kind: str) -> set[int]:
        """The ids of the alerts of ``kind`` that are open (no one has acknowledged or ruled
        them): beside the ledger's unstored ones, an alert committed meanwhile counts once."""
        a = t.alerts
        q = sa.select(a.c.id).where(a.c.kind == kind, a.c.status == "open")
        async with self.engine.connect() as conn:
            return {int(row[0]) for row in await conn.execute(q)}

    # -- rows set aside -------------------------------------------------------------------
    async def set_aside(self, *, kind: str, board: str | None, reason: str, item: str) -> int:
        """Keep what the writer could not store, with the reason; returns its id."""
        row = {
            "kind": kind[:16],
            "board": board if board is None else board[:32],
            "reason": reason,
            "item": item,
            "set_aside_ms": wall_ms(),
        }
        async with self.engine.begin() as conn:
            result = await conn.execute(
                sa.insert(t.set_aside).values(**row).returning(t.set_aside.c.id)
            )
            return int(result.scalar_one())

    async def set_aside_rows(self, limit: int = 200) -> list[dict[str, Any]]:
        s = t.set_aside
        async with self.engine.connect() as conn:
            return [
                dict(r._mapping)
                for r in await conn.execute(sa.select(s).order_by(s.c.id.desc()).limit(limit))
            ]

    # -- command log ----------------------------------------------------------------------
    async def log_command(self, row: Mapping[str, Any]) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(sa.insert(t.commands).values(**row))

    async def finish_command(self, txn: str, *, outcome: str, replies: Any) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(
                sa.update(t.commands)
                .where(t.commands.c.txn == txn)
                .values(outcome=outcome, replies=replies)
            )

    async def games_boards(self) -> dict[str, str]:
        """Every paired game -> its board."""
        g = t.games
        async with self.engine.connect() as conn:
            return {r.game: r.board for r in await conn.execute(sa.select(g.c.game, g.c.board))}

    async def commands(self, limit: int = 100) -> list[dict[str, Any]]:
        c = t.commands
        async with self.engine.connect() as conn:
            return [
                dict(r._mapping)
                for r in await conn.execute(sa.select(c).order_by(c.c.id.desc()).limit(limit))
            ]


def _board_key(board: str) -> tuple[int, int | str]:
    # Boards sort as numbers when they are numbers ("2" before "10").
    return (0, int(board)) if board.isdigit() else (1, board)


def board_key(board: str) -> tuple[int, int | str]:
    return _board_key(board)


SQLITE_BUSY_TIMEOUT_MS = 2000


def _write_with_boards(
    conn: Connection,
    rows: Sequence[Mapping[str, Any]],
    alerts: Sequence[Mapping[str, Any]],
    boards: Callable[[set[tuple[str, int, int]]], Sequence[Mapping[str, Any]]] | None,
) -> set[tuple[str, int, int]]:
    inserted = batch_writes.write_batch(conn, rows, alerts, ())
    board_rows = boards(inserted) if boards is not None else ()
    if board_rows:
        batch_writes.upsert_boards(conn, board_rows)
    return inserted


def _sqlite_pragmas(
    engine: Engine, *, busy_timeout_ms: int | None = None, autocheckpoint: bool = True
) -> None:
    busy = SQLITE_BUSY_TIMEOUT_MS if busy_timeout_ms is None else busy_timeout_ms

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        # WAL: readers (the API) never block the collector's writes; NORMAL is durable
        # across an application crash, which is the failure that matters here.
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        # A lock held by another process (a tool, a stuck backup) is waited on at most 2 s per
        # statement: the writer retries anyway (containment), and a station told to stop must
        # not sit out a long wait inside a statement it can no longer cancel (the 5 s stop).
        cur.execute(f"PRAGMA busy_timeout={busy}")
        if not autocheckpoint:  # the writes on the loop (sqlite_writes.py): never a checkpoint
            cur.execute("PRAGMA wal_autocheckpoint=0")
        cur.close()
