"""The journal's file: its schema, the writer's connection, and the snapshot the loop reads
when a disk that refuses writes will not even let it be opened (journal.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from board_nodes.errors import BoardNodeError

__all__ = ["JournalError", "disk_refuses", "open_for_writing", "snapshot"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS board (
    board TEXT PRIMARY KEY,
    last_seq INTEGER NOT NULL DEFAULT 0,
    checkpoint TEXT,
    checkpoint_wall_ms INTEGER
);
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    board TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload TEXT NOT NULL,
    sent INTEGER NOT NULL DEFAULT 0,
    UNIQUE (board, seq)
);
CREATE INDEX IF NOT EXISTS outbox_unsent ON outbox (sent, board, id);
CREATE TABLE IF NOT EXISTS txn (
    board TEXT NOT NULL,
    txn TEXT NOT NULL,
    reply TEXT NOT NULL,
    id INTEGER NOT NULL,
    PRIMARY KEY (board, txn)
);
"""
_SCHEMA_VERSION = "1"


class JournalError(BoardNodeError):
    """The journal cannot be opened or is from an incompatible version."""


def disk_refuses(exc: sqlite3.DatabaseError) -> bool:
    """A disk that will not take a write (full, an I/O error, a read-only remount), as
    opposed to a file that is not a journal (corrupt, another program's)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return "disk is full" in str(exc) or "disk I/O error" in str(exc)
    return code & 0xFF in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY)


def open_for_writing(path: Path, *, sync: str) -> sqlite3.Connection:
    """The writer's connection, the schema made or checked (JournalError: another's)."""
    wdb = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        wdb.execute("PRAGMA journal_mode=WAL")
        wdb.execute(f"PRAGMA synchronous={sync}")
        wdb.executescript(_SCHEMA)
        version = wdb.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if version is None:
            wdb.execute("INSERT INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
        elif version[0] != _SCHEMA_VERSION:
            raise JournalError(f"{path}: journal schema {version[0]} is not {_SCHEMA_VERSION}")
    except BaseException:
        wdb.close()
        raise
    return wdb


def snapshot(path: Path) -> sqlite3.Connection:
    """What the journal file holds, copied into memory without writing a byte (read as
    immutable when its WAL is empty; through the WAL's index when a killed node left one),
    for the loop to read until the writer can open the file."""
    mem = sqlite3.connect(":memory:", isolation_level=None)
    if path.exists() and path.stat().st_size > 0:
        wal = Path(f"{path}-wal")
        live = wal.exists() and wal.stat().st_size > 0
        uri = path.resolve().as_uri() + ("?mode=ro" if live else "?immutable=1")
        try:
            src = sqlite3.connect(uri, uri=True)
            try:
                src.backup(mem)
            finally:
                src.close()
        except sqlite3.DatabaseError as exc:
            mem.close()
            raise JournalError(
                f"{path}: cannot open the journal, nor read it on a disk that refuses writes: {exc}"
            ) from None
    mem.executescript(_SCHEMA)  # a file never written holds no schema yet
    version = mem.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if version is not None and version[0] != _SCHEMA_VERSION:
        mem.close()
        raise JournalError(f"{path}: journal schema {version[0]} is not {_SCHEMA_VERSION}")
    mem.execute("PRAGMA query_only=ON")
    return mem
