"""The journal's writer: every write of the journal, in order, in one thread off the event loop.

The loop hands it operations (an event with its checkpoint, the periodic checkpoints, sent
marks, command replies, pruning, the session count) through a queue and never waits. The
writer takes everything queued, writes it in one transaction (group commit: one fsync for
all the events that queued behind the last one) and hands the loop back a :class:`Written`,
in order. The loop publishes an event only once a ``Written`` says its transaction has
committed (``synchronous=FULL``: the WAL is fsync'd before COMMIT returns).

Within one transaction the events (with their checkpoints) are written before the periodic
checkpoints; a periodic checkpoint queued before an event of its board is left out (the
event's own is newer), so the board's checkpoint is always the newest the loop gave.

A transaction the disk refuses keeps its events (and sent marks) in the writer, in order, at
the head of the next try: nothing later is ever written before them. Checkpoints and pruning
that fail are dropped (the next supersedes them), replies too (a repeated txn is then applied
again, as before). The writer tries again when more work comes, when kicked, and every
``RETRY_S`` while something waits.

A journal the disk would not even let it open (a full card at the node's start: SQLite
cannot create the file's schema, its WAL or its shared-memory index) starts the writer
without a connection (``db`` None) and an ``opener``: every try opens it first, and a refusal
to open is a refusal like any other (the work is held, in order). The first ``Written`` that is
``ok`` tells the loop the file is open at last (it then reads the file, no longer its snapshot).

Without a thread (``Journal`` before ``start_writer``: the node's start, tools, tests) the
same code runs inline: ``write`` is called by the loop itself.

One event may skip the thread: the flag, which the arbiter waits for. Handing it over costs
a millisecond or more here (the thread wakes only once the loop's turn lets the GIL go, and
its statements take the GIL back from a loop busy with the flag's fallout), against ~0.3 ms
for the commit itself on a fast disk. ``write_now`` writes it on the loop, through the same
``write``, but only when that cannot stall the loop or reorder anything: the thread is idle
and the loop has applied all its news (the caller's part), nothing refused waits, and the
last ``FAST_COMMITS`` durable commits each took under ``FAST_COMMIT_S`` (an SD card's fsync
of 10–100 ms never qualifies; one slow commit on the loop sends the next flags to the thread
until the disk has shown itself fast again).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Held", "JournalWriter", "Written"]

log = logging.getLogger(__name__)

RETRY_S = 0.5  # while the disk refuses, how often the writer tries again on its own
FAST_COMMIT_S = 0.010  # a durable commit the loop may wait for (an SD card takes 10-100 ms)
FAST_COMMITS = 8  # the last this many durable commits were all that fast: the disk is fast

# What a disk that cannot take a write looks like through sqlite3 (SQLITE_FULL, SQLITE_IOERR,
# a read-only remount): an OperationalError or another DatabaseError from the write itself.
WRITE_FAILED = (sqlite3.OperationalError, sqlite3.DatabaseError)


@dataclass(frozen=True, slots=True)
class Held:
    """An event given its seq on the loop, not yet known to be on disk."""

    board: str
    seq: int
    payload: str
    checkpoint: dict[str, Any] | None
    wall_ms: int


@dataclass(frozen=True, slots=True)
class Written:
    """What one transaction of the writer did, for the loop (applied there, in order)."""

    taken: int  # operations taken from the queue by this write
    ok: bool = True
    events: int = 0  # held events written (the oldest ones), 0 unless ok
    boards: frozenset[str] = frozenset()  # boards whose events are now on disk
    last_id: int = 0  # the outbox id of the last event written
    marks: tuple[int, ...] = ()  # sent marks written
    replies: tuple[tuple[str, str], ...] = ()  # replies written (or given up)
    dropped: int = 0  # unsent events pruned past capacity
    error: str | None = None
    failed_wall_ms: int = 0  # the wall ms to date a refusal with


@dataclass(slots=True)
class _Work:
    events: list[Held] = field(default_factory=list)
    checkpoints: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)
    replies: list[tuple[str, str, str]] = field(default_factory=list)
    prune: tuple[int, int] | None = None


class JournalWriter:
    """Owns the journal's write connection. ``submit`` from the loop; ``write`` inline or in
    the thread ``start`` runs."""

    def __init__(
        self,
        db: sqlite3.Connection | None,
        *,
        sync: str,
        txn_keep: int,
        before_commit: Callable[[], None] | None = None,
        opener: Callable[[], sqlite3.Connection] | None = None,
    ) -> None:
        if db is None and opener is None:
            raise ValueError("a writer needs its connection or an opener")
        self.db = db
        self.opener = opener  # opens the write connection when ``db`` is None
        self.sync = sync
        self.txn_keep = txn_keep
        self.before_commit = before_commit  # inside a durable transaction, before its COMMIT
        self._queue: list[tuple[Any, ...]] = []
        self._cond = threading.Condition()
        self._kicked = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._turn = threading.Lock()  # held by whoever runs ``write``
        self._commits: deque[float] = deque(maxlen=FAST_COMMITS)  # durable ones, seconds
        # the writer's own (only touched by whoever runs ``write``)
        self._events: list[Held] = []  # failed before: written first, in order
        self._marks: list[int] = []
        self._session: int | None = None

    # -- the loop's side ---------------------------------------------------------------------
    def submit(self, *op: Any, wake: bool = True) -> None:
        with self._cond:
            self._queue.append(op)
            if wake:
                self._cond.notify()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def kick(self) -> None:
        """Try again now what the disk refused."""
        with self._cond:
            self._kicked = True
            self._cond.notify()

    @property
    def threaded(self) -> bool:
        return self._thread is not None

    @property
    def fast(self) -> bool:
        """The last ``FAST_COMMITS`` durable commits each took under ``FAST_COMMIT_S``."""
        commits = self._commits
        return len(commits) == FAST_COMMITS and max(commits) < FAST_COMMIT_S

    def write_now(self, *op: Any) -> Written | None:
        """Write ``op`` (and anything queued) on the caller's thread, now; None, with ``op``
        not taken, when the disk is not known fast, something refused waits, or the thread
        is writing. The caller must have applied every ``Written`` the thread posted."""
        if not self._turn.acquire(blocking=False):
            return None
        try:  # the writer's own state, read while the thread cannot be writing
            if not (self.fast and self.db is not None) or self._events or self._marks:
                return None
            with self._cond:
                self._queue.append(op)
            written = self.write()
        finally:
            self._turn.release()
        if self._events or self._marks:
            self.kick()  # refused: the thread tries again (every RETRY_S) from now on
        return written

    def start(self, post: Callable[[Written], None]) -> None:
        """Run ``write`` in a thread from now on; each result is given to ``post`` (which
        must hand it to the loop thread-safely)."""
        self._thread = threading.Thread(
            target=self._run, args=(post,), name="journal-writer", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Write what is queued, then end the thread (blocks until it has)."""
        thread = self._thread
        if thread is None:
            return
        with self._cond:
            self._stopping = True
            self._cond.notify()
        thread.join()
        self._thread = None

    # -- the writer's side ----------------------------------------------------------------------
    def _run(self, post: Callable[[Written], None]) -> None:
        while True:
            with self._cond:
                while not (self._queue or self._kicked or self._stopping):
                    waiting = bool(
                        self._events or self._marks or self._session is not None or self.db is None
                    )
                    if not self._cond.wait(RETRY_S if waiting else None) and waiting:
                        break  # time to try the refused work again
                self._kicked = False
                stopping = self._stopping and not self._queue
            try:
                with self._turn:
                    written = self.write()
            except Exception:  # the writer must outlive anything; the loop hears of it
                log.exception("journal writer: unexpected failure")
                written = Written(taken=0, ok=False, error="unexpected failure", failed_wall_ms=1)
            if written is not None:
                post(written)
            if stopping:
                return

    def write(self) -> Written | None:
        """Take everything queued and write it (with what failed before) in one transaction;
        None when there was nothing to do."""
        with self._cond:
            ops, self._queue = self._queue, []
        work = _Work()
        for op in ops:
            kind = op[0]
            if kind == "event":
                held: Held = op[1]
                self._events.append(held)
                if held.checkpoint is not None:
                    # The events are written before the periodic checkpoints: one queued
                    # before this event is older than the event's own, and must not win.
                    work.checkpoints = [c for c in work.checkpoints if c[0] != held.board]
            elif kind == "checkpoints":
                work.checkpoints.extend((board, cp, op[2]) for board, cp in op[1])
            elif kind == "mark":
                self._marks.extend(op[1])
            elif kind == "reply":
                work.replies.append(op[1:])
            elif kind == "prune":
                work.prune = (op[1], op[2])
            elif kind == "session":
                self._session = op[1]
        idle = not (self._events or self._marks or self._session is not None) and not (
            work.checkpoints or work.replies or work.prune
        )
        opened = False
        if self.db is None:
            opened, refused = self._open()
            if refused is not None:  # held, in order; said only when there was work
                return self._refused(ops, work, refused) if ops or not idle else None
        if idle:  # (just opened: the loop hears it, and reads the file from now on)
            return Written(taken=len(ops)) if ops or opened else None
        durable = bool(self._events or work.checkpoints or self._session is not None)
        began = time.perf_counter()
        try:
            last_id, dropped = self._transaction(work, durable=durable)
        except Exception as exc:  # a refusing disk (WRITE_FAILED), or worse: held all the same
            self._commits.clear()  # not known fast until it has written again
            if not isinstance(exc, WRITE_FAILED):
                log.exception("journal writer: a write failed unexpectedly")
            return self._refused(ops, work, exc)
        if durable:
            self._commits.append(time.perf_counter() - began)
        replies = tuple((board, txn) for board, txn, _ in work.replies)
        written = Written(
            taken=len(ops),
            events=len(self._events),
            boards=frozenset(h.board for h in self._events),
            last_id=last_id,
            marks=tuple(self._marks),
            replies=replies,
            dropped=dropped,
        )
        self._events, self._marks, self._session = [], [], None
        return written

    def _open(self) -> tuple[bool, Exception | None]:
        """(opened, the refusal): the write connection, for a journal not yet open."""
        assert self.opener is not None
        try:
            self.db = self.opener()
        except Exception as exc:  # the disk refuses still (or worse): tried again later
            if not isinstance(exc, WRITE_FAILED):
                log.exception("journal writer: opening the journal failed unexpectedly")
            return False, exc
        log.info("journal writer: the journal is open for writing")
        return True, None

    def _refused(self, ops: list[tuple[Any, ...]], work: _Work, exc: Exception) -> Written:
        """What a refused try tells the loop (the events and marks stay, in order)."""
        wall = self._events[0].wall_ms if self._events else 0
        return Written(
            taken=len(ops), ok=False,
            replies=tuple((board, txn) for board, txn, _ in work.replies),
            error=str(exc)[:200], failed_wall_ms=wall or 1,
        )  # fmt: skip

    def _transaction(self, work: _Work, *, durable: bool) -> tuple[int, int]:
        db = self.db
        assert db is not None
        last_id = dropped = 0
        if not durable:
            db.execute("PRAGMA synchronous=NORMAL")
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if self._session is not None:
                    db.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('session', ?)", (str(self._session),)
                    )
                for h in self._events:
                    last_id = self._write_event(db, h)
                for board, checkpoint, wall_ms in work.checkpoints:
                    write_checkpoint(db, board, checkpoint, wall_ms)
                for board, txn, reply in work.replies:
                    self._write_reply(db, board, txn, reply)
                if self._marks:
                    marks = [(i,) for i in self._marks]
                    db.executemany("UPDATE outbox SET sent=1 WHERE id=?", marks)
                if work.prune is not None:
                    dropped = prune(db, keep=work.prune[0], capacity=work.prune[1])
                if durable and self.before_commit is not None:
                    self.before_commit()
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            if not durable:
                db.execute(f"PRAGMA synchronous={self.sync}")
        if dropped and work.prune is not None:
            log.critical(
                "outbox over capacity %d: dropped %d unsent events", work.prune[1], dropped
            )
        return last_id, dropped

    @staticmethod
    def _write_event(db: sqlite3.Connection, h: Held) -> int:
        cursor = db.execute(
            "INSERT INTO outbox (board, seq, payload) VALUES (?, ?, ?)", (h.board, h.seq, h.payload)
        )
        db.execute(
            "INSERT INTO board (board, last_seq) VALUES (?, ?) "
            "ON CONFLICT (board) DO UPDATE SET last_seq=excluded.last_seq",
            (h.board, h.seq),
        )
        if h.checkpoint is not None:
            write_checkpoint(db, h.board, h.checkpoint, h.wall_ms)
        return int(cursor.lastrowid or 0)

    def _write_reply(self, db: sqlite3.Connection, board: str, txn: str, reply: str) -> None:
        row = db.execute("SELECT coalesce(max(id), 0) FROM txn").fetchone()
        db.execute(
            "INSERT OR REPLACE INTO txn (board, txn, reply, id) VALUES (?, ?, ?, ?)",
            (board, txn, reply, row[0] + 1),
        )
        db.execute("DELETE FROM txn WHERE id <= ?", (row[0] + 1 - self.txn_keep,))


def write_checkpoint(
    db: sqlite3.Connection, board: str, checkpoint: dict[str, Any], wall_ms: int
) -> None:
    db.execute(
        "INSERT INTO board (board, checkpoint, checkpoint_wall_ms) VALUES (?, ?, ?) "
        "ON CONFLICT (board) DO UPDATE SET checkpoint=excluded.checkpoint, "
        "checkpoint_wall_ms=excluded.checkpoint_wall_ms",
        (board, json.dumps(checkpoint, separators=(",", ":")), wall_ms),
    )


def prune(db: sqlite3.Connection, *, keep: int, capacity: int) -> int:
    """Forget sent events beyond the newest ``keep``; drop unsent ones past ``capacity``."""
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
    return int(dropped)
