"""The writer's batch: its events, alerts and board rows in one transaction.

The ingest writer commits a batch (a few events to a thousand) at a time, and a logged-in
arbiter sees each event once it is committed (issue 30). ``write_batch`` is that transaction's
one body, for both databases: on SQLite it runs on a synchronous connection
(``sqlite_writes.SqliteWrites``: in the store's writing thread, or a small batch on the loop
when SQLite can take it at once), with plain SQL on the driver's cursor; on PostgreSQL
(asyncpg is asynchronous by itself) through ``run_sync`` on the async engine, with
SQLAlchemy's statements. Either way: insert ignoring a conflict on the unique key, and say
which went in.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Connection

from venue_station.store import tables as t
from wire_contract.wallclock import wall_ms

__all__ = ["insert_for", "upsert_boards", "write_batch"]

Key = tuple[str, int, int]


def insert_for(dialect: str, table: sa.Table) -> Any:
    """The dialect's INSERT (both have ``on_conflict_do_nothing`` / ``_do_update``)."""
    return (pg_dialect if dialect == "postgresql" else sqlite_dialect).insert(table)


def write_batch(
    conn: Connection,
    rows: Sequence[Mapping[str, Any]],
    alerts: Sequence[Mapping[str, Any]],
    boards: Sequence[Mapping[str, Any]],
) -> set[Key]:
    """Insert ``rows`` (events) ignoring those already stored, ``alerts`` likewise, upsert
    ``boards``; the (board, session, seq) of the events actually inserted. In ``conn``'s
    transaction: a failure stores none of them, so a retry of the batch loses nothing."""
    dialect = conn.dialect.name
    inserted: set[Key] = set()
    if rows and _plain_sqlite(conn):
        inserted = _insert_events_sqlite(conn, rows)
    elif rows:
        stmt = (
            insert_for(dialect, t.events)
            .on_conflict_do_nothing(index_elements=["board", "session", "seq"])
            .returning(t.events.c.board, t.events.c.session, t.events.c.seq)
        )
        inserted = {(r.board, r.session, r.seq) for r in conn.execute(stmt, list(rows))}
    if alerts:
        conn.execute(
            insert_for(dialect, t.alerts).on_conflict_do_nothing(index_elements=["key"]),
            list(alerts),
        )
        if dialect == "postgresql":
            # The ids come from the station: keep the column's sequence past them.
            conn.execute(
                sa.text(
                    "SELECT setval(pg_get_serial_sequence('alerts', 'id'), "
                    "(SELECT max(id) FROM alerts))"
                )
            )
    if boards:
        upsert_boards(conn, boards)
    return inserted


_EVENT_COLUMNS = tuple(c.name for c in t.events.columns if c.name != "id")
_ROWS_A_STATEMENT = 500  # 14 columns: 7,000 parameters, under SQLite's 32,766


def _insert_events_sqlite(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> set[Key]:
    """The events on SQLite as plain SQL, in ``conn``'s transaction: one multi-row INSERT a
    chunk, ignoring a conflict; which rows went in is known from the count the database gives
    (all of them, nearly always: the ingest drops the duplicates it knows of) or else from the
    ids past the largest before (this writer is the events' only one).

    Why not SQLAlchemy's executemany with RETURNING, or a statement a row: each SQLite step
    releases the GIL and must take it back from the event loop's thread, which is busy
    handling the next messages; a row at a time, the writer waited on the loop ~50 µs a row
    (the loop's whole budget per event), and SQLAlchemy's parameter processing cost as much
    again. A chunk a statement waits once. The JSON column is written as SQLAlchemy's ``JSON``
    type reads it back (tests/station/test_store.py reads it); errors come as SQLAlchemy's."""
    keys = {(row["board"], row["session"], row["seq"]) for row in rows}
    one_row = f"({', '.join('?' for _ in _EVENT_COLUMNS)})"
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        before = _run(cursor, "SELECT coalesce(max(id), 0) FROM events", ()).fetchone()[0]
        went_in = 0
        for at in range(0, len(rows), _ROWS_A_STATEMENT):
            chunk = rows[at : at + _ROWS_A_STATEMENT]
            went_in += _run(
                cursor,
                f"INSERT INTO events ({', '.join(_EVENT_COLUMNS)}) VALUES "
                f"{', '.join([one_row] * len(chunk))} "
                "ON CONFLICT (board, session, seq) DO NOTHING",
                [_sqlite_value(row, c) for row in chunk for c in _EVENT_COLUMNS],
            ).rowcount
        if went_in == len(keys):
            return keys
        new = _run(cursor, "SELECT board, session, seq FROM events WHERE id > ?", (before,))
        return keys & {(str(b), int(s), int(q)) for b, s, q in new.fetchall()}
    finally:
        cursor.close()


def _plain_sqlite(conn: Connection) -> bool:
    """SQLite through the standard library's driver: the store's writing thread. (The async
    engine's aiosqlite connection, under ``run_sync``, takes SQLAlchemy's statements.)"""
    return conn.dialect.name == "sqlite" and conn.dialect.driver == "pysqlite"


def _run(cursor: Any, sql: str, params: Sequence[Any]) -> Any:
    """``cursor.execute``, the driver's errors raised as SQLAlchemy raises them (an
    ``IntegrityError``, an ``OperationalError``: the writer's containment reads those)."""
    try:
        return cursor.execute(sql, params)
    except sqlite3.Error as exc:
        raise sa.exc.DBAPIError.instance(sql, params, exc, sqlite3.Error) from exc


def _sqlite_value(row: Mapping[str, Any], column: str) -> Any:
    value = row.get(column)
    return json.dumps(value, ensure_ascii=False) if column == "data" else value


def upsert_boards(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Write each board's row; only the columns given change."""
    stamp = wall_ms()
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        values = {"updated_ms": stamp, **row}
        groups.setdefault(tuple(sorted(values)), []).append(values)
    # One statement per shape of row: a batch touches hundreds of boards at once.
    for cols, group in groups.items():
        if _plain_sqlite(conn):
            _upsert_boards_sqlite(conn, cols, group)
            continue
        stmt = insert_for(conn.dialect.name, t.boards)
        update = {c: stmt.excluded[c] for c in cols if c != "board"}
        conn.execute(stmt.on_conflict_do_update(index_elements=["board"], set_=update), group)


_JSON_BOARD_COLUMNS = frozenset(c.name for c in t.boards.columns if isinstance(c.type, sa.JSON))


def _upsert_boards_sqlite(
    conn: Connection, cols: tuple[str, ...], group: Sequence[Mapping[str, Any]]
) -> None:
    """As the SQLAlchemy statement, as plain SQL (its parameter processing cost ~0.2 ms a
    batch: most of a one-event batch's write, issue 30). JSON columns as its JSON type."""
    unknown = set(cols) - {c.name for c in t.boards.columns}
    if unknown:  # what SQLAlchemy would refuse: never let a name into the SQL text
        raise sa.exc.ArgumentError(f"boards has no column {sorted(unknown)}")
    one_row = f"({', '.join('?' for _ in cols)})"
    updates = ", ".join(f"{c}=excluded.{c}" for c in cols if c != "board")
    per_statement = max(1, 7000 // len(cols))
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        for at in range(0, len(group), per_statement):
            chunk = group[at : at + per_statement]
            _run(
                cursor,
                f"INSERT INTO boards ({', '.join(cols)}) VALUES "
                f"{', '.join([one_row] * len(chunk))} ON CONFLICT (board) DO UPDATE SET {updates}",
                [
                    json.dumps(row[c], ensure_ascii=False) if c in _JSON_BOARD_COLUMNS else row[c]
                    for row in chunk
                    for c in cols
                ],
            )
    finally:
        cursor.close()
