"""The node's journal: seq numbers, the outbox, clock checkpoints and command replies.

One SQLite file in WAL mode with ``synchronous=FULL``: an event is on disk before it is
published, so a power cut loses nothing the node has decided. Each event is written in the
same transaction as the checkpoint of the board that caused it, so after a restart the board's
state and its event history agree.

A journal that cannot be written (a full SD card, an I/O error) never stops a clock: the event
is *held* in memory with its seq and checkpoint, in order, and nothing more is written until
the held events can be (``flush``, tried by the node's checkpoint loop). Held events are not in
the outbox, so the link never publishes them: an event reaches MQTT only once it is on disk,
in every mode. ``failing_since`` says since when the disk refuses (the node alarms on it).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board_nodes.errors import BoardNodeError

__all__ = ["BoardRecord", "Journal", "JournalError", "OutboxRow"]

log = logging.getLogger(__name__)

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


@dataclass(frozen=True, slots=True)
class BoardRecord:
    board: str
    last_seq: int
    checkpoint: dict[str, Any] | None
    checkpoint_wall_ms: int | None


@dataclass(frozen=True, slots=True)
class _Held:
    board: str
    seq: int
    payload: str
    checkpoint: dict[str, Any] | None
    wall_ms: int


# What a disk that cannot take a write looks like through sqlite3 (SQLITE_FULL, SQLITE_IOERR,
# a read-only remount): an OperationalError or another DatabaseError from the write itself.
_WRITE_FAILED = (sqlite3.OperationalError, sqlite3.DatabaseError)


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    board: str
    seq: int
    payload: str


class Journal:
    def __init__(self, path: str | Path, *, txn_keep: int = 1000, durable: bool = True) -> None:
        self.path = Path(path)
        self.txn_keep = txn_keep
        # durable=False (load simulations only) skips the fsync per event: thousands of
        # simulated boards on one disk would otherwise measure the disk, not the system.
        self._sync = "FULL" if durable else "NORMAL"
        self._db: sqlite3.Connection | None = None
        self._held: list[_Held] = []
        self._last_seq: dict[str, int] = {}  # a board's seq as given out, held ones included
        self.failing_since: int | None = None  # wall ms of the first write the disk refused
        self.failure: str | None = None
        self.write_failures = 0
        self._sent_unmarked: set[int] = set()  # sent, but the disk refused the mark
        self._pending_session: int | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def open(self) -> Journal:
        if self._db is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={self._sync}")
            db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"{self.path}: cannot open the journal: {exc}") from None
        version = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if version is None:
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
        elif version[0] != _SCHEMA_VERSION:
            db.close()
            raise JournalError(f"{self.path}: journal schema {version[0]} is not {_SCHEMA_VERSION}")
        self._db = db
        return self

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Journal:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise JournalError("the journal is not open")
        return self._db

    # -- sessions ----------------------------------------------------------------------------------
    def next_session(self) -> int:
        """Count one more start of the node; returned as the session of every message.

        On a disk that refuses, the node starts all the same: the count is written with the
        first flush that succeeds."""
        row = self.db.execute("SELECT value FROM meta WHERE key='session'").fetchone()
        session = int(row[0]) + 1 if row else 1
        try:
            with self._tx() as db:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('session', ?)", (str(session),))
        except _WRITE_FAILED as exc:
            self._pending_session = session
            self._failed(exc, 1)
        return session

    # -- boards ------------------------------------------------------------------------------------
    def board(self, board: str) -> BoardRecord:
        row = self.db.execute(
            "SELECT last_seq, checkpoint, checkpoint_wall_ms FROM board WHERE board=?", (board,)
        ).fetchone()
        if row is None:
            return BoardRecord(board, 0, None, None)
        checkpoint = json.loads(row[1]) if row[1] else None
        return BoardRecord(board, row[0], checkpoint, row[2])

    def checkpoint(self, board: str, checkpoint: dict[str, Any], wall_ms: int) -> None:
        self.checkpoints([(board, checkpoint)], wall_ms)

    def checkpoints(self, items: list[tuple[str, dict[str, Any]]], wall_ms: int) -> None:
        """Several boards' checkpoints in one transaction: one fsync for the whole node.

        A checkpoint the disk refuses is skipped (the next one supersedes it): the clocks run
        on in memory, ``failing_since`` says so."""
        if not items:
            return
        if self._held and not self.flush():
            return  # the held events carry their checkpoints; nothing may overtake them
        try:
            with self._tx() as db:
                for board, checkpoint in items:
                    self._write_checkpoint(db, board, checkpoint, wall_ms)
        except _WRITE_FAILED as exc:
            self._failed(exc, wall_ms)

    def record(
        self,
        board: str,
        build: Callable[[int], dict[str, Any]],
        *,
        checkpoint: dict[str, Any] | None = None,
        wall_ms: int | None = None,
    ) -> dict[str, Any]:
        """Give the next seq of ``board`` to ``build`` and store what it builds, atomically.

        When the disk refuses, the event is held (in order, with its checkpoint) and its
        payload returned all the same: the board goes on; the link publishes it only once
        ``flush`` has written it."""
        if board not in self._last_seq:
            self._last_seq[board] = self.board(board).last_seq
        seq = self._last_seq[board] + 1
        payload = build(seq)
        held = _Held(
            board, seq, json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
            checkpoint, wall_ms or 0,
        )  # fmt: skip
        self._last_seq[board] = seq
        self._held.append(held)
        self.flush()
        return payload

    @property
    def held(self) -> int:
        """Events given a seq but not yet on disk (0 unless the disk refuses)."""
        return len(self._held)

    def holds(self, board: str) -> bool:
        return any(h.board == board for h in self._held)

    def flush(self) -> bool:
        """Write the held events, oldest first, in one transaction; True when none is left."""
        if not self._held and self._pending_session is None:
            return True
        try:
            with self._tx() as db:
                if self._pending_session is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('session', ?)",
                        (str(self._pending_session),),
                    )
                for h in self._held:
                    db.execute(
                        "INSERT INTO outbox (board, seq, payload) VALUES (?, ?, ?)",
                        (h.board, h.seq, h.payload),
                    )
                    db.execute(
                        "INSERT INTO board (board, last_seq) VALUES (?, ?) "
                        "ON CONFLICT (board) DO UPDATE SET last_seq=excluded.last_seq",
                        (h.board, h.seq),
                    )
                    if h.checkpoint is not None:
                        self._write_checkpoint(db, h.board, h.checkpoint, h.wall_ms)
        except _WRITE_FAILED as exc:
            self._failed(exc, self._held[0].wall_ms if self._held else 1)
            return False
        if self.failing_since is not None:
            log.warning(
                "journal %s writes again: %d held events written", self.path, len(self._held)
            )
        self._held.clear()
        self._pending_session = None
        self.failing_since = self.failure = None
        return True

    def _failed(self, exc: Exception, wall_ms: int) -> None:
        self.write_failures += 1
        if self.failing_since is None:
            self.failing_since = wall_ms or 1
            log.error(
                "journal %s refuses writes (%s): the clocks go on in memory, events are held "
                "and not published until it writes again", self.path, exc,
            )  # fmt: skip
        self.failure = str(exc)[:200]

    # -- outbox ------------------------------------------------------------------------------------
    def unsent(self, board: str | None = None, *, limit: int = 100) -> list[OutboxRow]:
        """Events not yet acknowledged by the broker, oldest first."""
        where, params = ("AND board=?", (board,)) if board is not None else ("", ())
        skip = len(self._sent_unmarked)
        rows = self.db.execute(
            f"SELECT id, board, seq, payload FROM outbox WHERE sent=0 {where} ORDER BY id LIMIT ?",
            (*params, limit + skip),
        ).fetchall()
        return [OutboxRow(*row) for row in rows if row[0] not in self._sent_unmarked][:limit]

    def unsent_count(self, board: str | None = None) -> int:
        where, params = ("AND board=?", (board,)) if board is not None else ("", ())
        row = self.db.execute(f"SELECT count(*) FROM outbox WHERE sent=0 {where}", params)
        return int(row.fetchone()[0])

    def mark_sent(self, ids: list[int]) -> None:
        """Note the broker has these. Not synced to disk on its own: losing the mark in a
        power cut only means sending the events again, which the station dedupes."""
        if not ids:
            return
        marks = [*self._sent_unmarked, *ids]
        try:
            with self._tx(durable=False) as db:
                db.executemany("UPDATE outbox SET sent=1 WHERE id=?", [(i,) for i in marks])
        except _WRITE_FAILED as exc:
            # Kept in memory (not sent again while the node runs); after a restart they are
            # sent again, which the station dedupes.
            self._sent_unmarked.update(ids)
            self._failed(exc, 0)
        else:
            self._sent_unmarked.clear()

    def events_from(self, board: str, from_seq: int) -> list[OutboxRow]:
        rows = self.db.execute(
            "SELECT id, board, seq, payload FROM outbox WHERE board=? AND seq>=? ORDER BY seq",
            (board, from_seq),
        ).fetchall()
        return [OutboxRow(*row) for row in rows]

    def all_events(self) -> list[OutboxRow]:
        rows = self.db.execute("SELECT id, board, seq, payload FROM outbox ORDER BY id").fetchall()
        return [OutboxRow(*row) for row in rows]

    def prune(self, *, keep: int, capacity: int) -> int:
        """Forget sent events beyond the newest ``keep``; returns unsent events dropped.

        Unsent events are dropped only past ``capacity`` (days of outage): that is loss, and
        it is logged as such. A disk that refuses prunes nothing (and drops nothing).
        """
        try:
            return self._prune(keep=keep, capacity=capacity)
        except _WRITE_FAILED as exc:
            self._failed(exc, 0)
            return 0

    def _prune(self, *, keep: int, capacity: int) -> int:
        with self._tx(durable=False) as db:
            sent = db.execute("SELECT count(*) FROM outbox WHERE sent=1").fetchone()[0]
            if sent > keep:
                db.execute(
                    "DELETE FROM outbox WHERE id IN "
                    "(SELECT id FROM outbox WHERE sent=1 ORDER BY id LIMIT ?)",
                    (sent - keep,),
                )
            unsent = db.execute("SELECT count(*) FROM outbox WHERE sent=0").fetchone()[0]
            dropped = max(0, unsent - capacity)
            if dropped:
                db.execute(
                    "DELETE FROM outbox WHERE id IN "
                    "(SELECT id FROM outbox WHERE sent=0 ORDER BY id LIMIT ?)",
                    (dropped,),
                )
        if dropped:
            log.critical("outbox over capacity %d: dropped %d unsent events", capacity, dropped)
        return int(dropped)

    # -- commands ----------------------------------------------------------------------------------
    def reply_for(self, board: str, txn: str) -> str | None:
        row = self.db.execute(
            "SELECT reply FROM txn WHERE board=? AND txn=?", (board, txn)
        ).fetchone()
        return row[0] if row else None

    def remember_reply(self, board: str, txn: str, reply: str) -> None:
        try:
            self._remember_reply(board, txn, reply)
        except _WRITE_FAILED as exc:  # a txn sent again is then applied again: logged
            self._failed(exc, 0)

    def _remember_reply(self, board: str, txn: str, reply: str) -> None:
        with self._tx(durable=False) as db:
            row = db.execute("SELECT coalesce(max(id), 0) FROM txn").fetchone()
            db.execute(
                "INSERT OR REPLACE INTO txn (board, txn, reply, id) VALUES (?, ?, ?, ?)",
                (board, txn, reply, row[0] + 1),
            )
            db.execute("DELETE FROM txn WHERE id <= ?", (row[0] + 1 - self.txn_keep,))

    # -- internals ---------------------------------------------------------------------------------
    def _write_checkpoint(
        self, db: sqlite3.Connection, board: str, checkpoint: dict[str, Any], wall_ms: int
    ) -> None:
        db.execute(
            "INSERT INTO board (board, checkpoint, checkpoint_wall_ms) VALUES (?, ?, ?) "
            "ON CONFLICT (board) DO UPDATE SET checkpoint=excluded.checkpoint, "
            "checkpoint_wall_ms=excluded.checkpoint_wall_ms",
            (board, json.dumps(checkpoint, separators=(",", ":")), wall_ms),
        )

    def _tx(self, *, durable: bool = True) -> _Transaction:
        return _Transaction(self.db, durable, self._sync)


class _Transaction:
    def __init__(self, db: sqlite3.Connection, durable: bool, sync: str) -> None:
        self.db = db
        self.durable = durable
        self.sync = sync

    def __enter__(self) -> sqlite3.Connection:
        if not self.durable:
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
        if not self.durable:
            self.db.execute(f"PRAGMA synchronous={self.sync}")
