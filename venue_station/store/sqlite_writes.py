"""The ingest writer's transactions on SQLite: in a thread of their own, or, a small batch, on
the event loop when SQLite can take it at once.

Through SQLAlchemy's async SQLite driver every statement, BEGIN and COMMIT was a hop to
aiosqlite's thread and back: a one-event batch cost ~1.3 ms, nearly all of it the hops. Here
a batch's transaction runs whole on a synchronous connection of the same file (issue 30):

- **In the writing thread** (one thread: SQLite takes one writer at a time, and the order of
  the batches is the order of their commits): one hop a batch, ~0.2 ms for one event. A lock
  held by another process (a backup, a tool: ``busy_timeout``), a WAL checkpoint's fsync, a slow
  disk wait there, never in front of every page and board.
- **On the loop**, a batch of at most ``INLINE_ROWS`` events (a live event: what a logged-in
  arbiter waits for), ~0.08 ms: the hop to the thread and back is most of a small batch's time.
  It never waits there. Its connection takes no lock it would wait for (``busy_timeout=0``: a
  busy database sends the batch to the thread), runs no checkpoint (``wal_autocheckpoint=0``;
  the thread checkpoints every ``CHECKPOINT_EVERY`` inline commits, PASSIVE), and one that took
  longer than ``INLINE_SLOW_S`` (a disk that makes even a write to the page cache wait) sends
  every batch to the thread for ``INLINE_PAUSE_S``. WAL with ``synchronous=NORMAL`` commits
  without an fsync: what the loop does is copy a few pages into the WAL file.

``close`` is idempotent; a transaction under way finishes first.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Engine

__all__ = ["INLINE_ROWS", "SqliteWrites"]

log = logging.getLogger(__name__)
T = TypeVar("T")

INLINE_ROWS = 8  # events a batch may hold to be written on the loop
INLINE_SLOW_S = 0.002  # an inline transaction longer than this: to the thread for a while
INLINE_PAUSE_S = 10.0
CHECKPOINT_EVERY = 500  # inline commits between two PASSIVE checkpoints in the thread


class SqliteWrites:
    """Transactions on the synchronous ``engine`` (the thread's) and ``inline`` engine (the
    loop's, with ``busy_timeout=0`` and ``wal_autocheckpoint=0``; None: never inline)."""

    def __init__(self, engine: Engine, *, inline: Engine | None = None) -> None:
        self.engine = engine
        self.inline = inline
        self._pool: concurrent.futures.ThreadPoolExecutor | None = (
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="qz-store-writes")
        )
        self._inline_after = 0.0  # monotonic s before which nothing is written inline
        self._inline_commits = 0
        self.inline_done = 0  # counters for /metrics and the tests
        self.inline_busy = 0
        self.inline_slow = 0

    async def run(self, fn: Callable[..., T], *args: Any, rows: int | None = None) -> T:
        """``fn(conn, *args)`` in a transaction, committed when it returns: on the loop when
        ``rows`` (the batch's events) is small and SQLite takes it at once, else in the
        thread."""
        if self._pool is None:
            raise RuntimeError("the store's writes are closed")
        if rows is not None and rows <= INLINE_ROWS and self._may_inline():
            done, value = self._try_inline(fn, *args)
            if done:
                return value  # type: ignore[return-value]
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._pool, functools.partial(_in_txn, self.engine, fn, *args)
        )

    def _may_inline(self) -> bool:
        return self.inline is not None and time.monotonic() >= self._inline_after

    def _try_inline(self, fn: Callable[..., T], *args: Any) -> tuple[bool, T | None]:
        assert self.inline is not None
        started = time.monotonic()
        try:
            value = _in_txn(self.inline, fn, *args)
        except sa.exc.OperationalError as exc:
            if not _is_busy(exc):
                raise  # a full disk, a lost file: the containment's business, as in the thread
            self.inline_busy += 1  # another writer holds the lock: the thread waits for it
            return False, None
        took = time.monotonic() - started
        self.inline_done += 1
        if took > INLINE_SLOW_S:
            self.inline_slow += 1
            self._inline_after = time.monotonic() + INLINE_PAUSE_S
            log.warning(
                "a write on the loop took %.1f ms: batches go to the writing thread for %.0f s",
                took * 1000,
                INLINE_PAUSE_S,
            )
        self._inline_commits += 1
        if self._inline_commits >= CHECKPOINT_EVERY and self._pool is not None:
            self._inline_commits = 0
            self._pool.submit(_checkpoint, self.engine)
        return True, value

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            # A transaction under way finishes (SQLite cannot be interrupted mid-statement
            # from here; busy_timeout bounds a wait for a lock): then the engines go.
            pool.shutdown(wait=True)
            self.engine.dispose()
            if self.inline is not None:
                self.inline.dispose()


def _in_txn(engine: Engine, fn: Callable[..., T], *args: Any) -> T:
    with engine.begin() as conn:
        return fn(conn, *args)


def _is_busy(exc: sa.exc.OperationalError) -> bool:
    text = str(exc.orig).lower()
    return "locked" in text or "busy" in text


def _checkpoint(engine: Engine) -> None:
    """A PASSIVE checkpoint: copies what it can of the WAL into the database, waits for no one
    (the inline connection runs none: it must never wait)."""
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
    except sa.exc.SQLAlchemyError as exc:  # the next one tries again
        log.info("WAL checkpoint not done: %s", exc)
