"""The node's journal: seq numbers, the outbox, clock checkpoints and command replies.

One SQLite file in WAL mode with ``synchronous=FULL``: an event is on disk before it is
published, so a power cut loses nothing the node has decided. Each event is written in the
same transaction as the checkpoint of the board that caused it, so after a restart the board's
state and its event history agree.

The loop does not wait for the disk (``journal_writer.py``): ``record`` gives the event its seq
and payload at once and queues it for the writer thread, which writes whatever has queued in
one transaction (one fsync for all) and tells the loop when it has committed
(``on_written``). Until then the event is *held*: not in the outbox the link reads, so never
published. The one exception is the flag (``urgent``), written on the loop while the disk has
shown itself fast (``JournalWriter.write_now``): at most one commit that turns slow on the loop,
then the thread again. The outbox is read on the loop (its own read-only connection), and
only up to the last event the writer said is committed.

A journal that cannot be written (a full SD card, an I/O error) never stops a clock either:
the writer keeps the refused events, in order, and tries them again (each new write, each
``flush``, every ``RETRY_S``) before anything later; they stay held, so unpublished.
``failing_since`` says since when the disk refuses (the node alarms on it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board_nodes.journal_file import JournalError, disk_refuses, open_for_writing, snapshot
from board_nodes.journal_writer import Held, JournalWriter, Written

__all__ = ["BoardRecord", "Journal", "JournalError", "OutboxRow"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BoardRecord:
    board: str
    last_seq: int
    checkpoint: dict[str, Any] | None
    checkpoint_wall_ms: int | None

    @property
    def is_new(self) -> bool:
        """Nothing of this board was ever journaled here."""
        return self.last_seq == 0 and self.checkpoint is None


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    board: str
    seq: int
    payload: str


class Journal:
    def __init__(
        self,
        path: str | Path,
        *,
        txn_keep: int = 1000,
        durable: bool = True,
        before_commit: Callable[[], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.txn_keep = txn_keep
        # durable=False (load simulations only) skips the fsync per event: thousands of
        # simulated boards on one disk would otherwise measure the disk, not the system.
        self._sync = "FULL" if durable else "NORMAL"
        # Called by the writer inside each durable transaction, before its COMMIT: where a
        # slow disk's fsync would spend its time (tests stand a slow SD card in with it).
        self._before_commit = before_commit
        self._db: sqlite3.Connection | None = None  # the loop's, read-only
        self._writer: JournalWriter | None = None  # owns the write connection
        self._loop: asyncio.AbstractEventLoop | None = None
        self._held: deque[Held] = deque()  # given a seq, not yet known to be on disk
        self._last_seq: dict[str, int] = {}  # a board's seq as given out, held ones included
        self._durable_id = 0  # the outbox id of the last event known committed
        self._snapshot_only = False  # the loop reads a snapshot: the file is not yet open
        self.failing_since: int | None = None  # wall ms of the first write the disk refused
        self.failure: str | None = None
        self.write_failures = 0
        self.recovered: tuple[int, int] | None = None  # (refused since, events then written)
        self._sent_unmarked: set[int] = set()  # sent, the mark not yet written
        self._replies: dict[tuple[str, str], str] = {}  # remembered, not yet written
        self._dropped = 0  # unsent events pruned past capacity, not yet reported
        self._submitted = self._applied = 0
        self._wake_due = False
        self._caught_up: asyncio.Event | None = None  # set once applied meets submitted
        # Called on the loop after the writer's news: the boards whose events are now on
        # disk (empty when only the journal's health changed).
        self.on_written: Callable[[frozenset[str]], None] = lambda boards: None

    # -- lifecycle -------------------------------------------------------------------------------
    def open(self) -> Journal:
        """Open the journal. On a disk that refuses even that (a full card at the node's
        start: the schema, the WAL or its index cannot be created) the node starts all the
        same: the loop reads a snapshot in memory of what the file holds, and the writer
        opens the file with its first try that the disk takes (``journal_writer.py``)."""
        if self._db is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        wdb: sqlite3.Connection | None = None
        try:
            wdb = self._open_for_writing()
            db = sqlite3.connect(self.path, isolation_level=None)
            db.execute("PRAGMA query_only=ON")  # every write is the writer's
        except sqlite3.DatabaseError as exc:
            if wdb is not None:
                wdb.close()
            if not disk_refuses(exc):
                raise JournalError(f"{self.path}: cannot open the journal: {exc}") from None
            log.error(
                "journal %s cannot be opened for writing (%s): the node starts from what it "
                "holds and writes once the disk takes it", self.path, exc,
            )  # fmt: skip
            wdb, db = None, self._snapshot()
            self._snapshot_only = True
        self._writer = JournalWriter(
            wdb, sync=self._sync, txn_keep=self.txn_keep, before_commit=self._before_commit,
            opener=self._open_for_writing,
        )  # fmt: skip
        self._db = db
        row = db.execute("SELECT coalesce(max(id), 0) FROM outbox").fetchone()
        self._durable_id = int(row[0])
        return self

    def _open_for_writing(self) -> sqlite3.Connection:
        """The writer's connection, the schema made or checked (JournalError: another's)."""
        return open_for_writing(self.path, sync=self._sync)

    def _snapshot(self) -> sqlite3.Connection:
        return snapshot(self.path)

    def start_writer(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """From now on write in the writer thread; its news comes back on ``loop`` (the
        running one by default)."""
        writer = self._w
        if writer.threaded:
            return
        self._loop = loop or asyncio.get_running_loop()
        writer.start(self._post)

    def close(self) -> None:
        """Write what is queued (the writer ends once it has), then close."""
        if self._db is None:
            return
        writer = self._w
        if writer.threaded:
            writer.stop()
        else:
            self._write_inline()
        self._db.close()
        if writer.db is not None:
            writer.db.close()
        self._db = None
        self._writer = None

    async def idle(self) -> None:
        """Until everything given to the writer so far has been tried (written, or held
        because the disk refuses)."""
        while self._applied < self._submitted:
            self._caught_up = asyncio.Event()
            await self._caught_up.wait()

    def __enter__(self) -> Journal:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def db(self) -> sqlite3.Connection:
        """The read-only connection (the loop's)."""
        if self._db is None:
            raise JournalError("the journal is not open")
        return self._db

    @property
    def _w(self) -> JournalWriter:
        if self._writer is None:
            raise JournalError("the journal is not open")
        return self._writer

    # -- sessions ----------------------------------------------------------------------------------
    def next_session(self) -> int:
        """Count one more start of the node; returned as the session of every message.

        On a disk that refuses, the node starts all the same: the count is written with the
        first write that succeeds."""
        row = self.db.execute("SELECT value FROM meta WHERE key='session'").fetchone()
        session = int(row[0]) + 1 if row else 1
        self._submit("session", session)
        return session

    @property
    def snapshot_only(self) -> bool:
        """The disk refused to open the file for writing: the loop reads a snapshot of it."""
        return self._snapshot_only

    def take_over(self, seqs: dict[str, int], *, session: int) -> None:
        """Go on from a predecessor's journal (takeover.py): each board's next seq after
        ``seqs[board]``, and the next session after ``session``. Before the writer starts."""
        writer = self._w
        if writer.threaded or writer.db is None:
            raise JournalError("a journal takes over before its writer starts, on a writing disk")
        db = writer.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for board, seq in seqs.items():
                db.execute(
                    "INSERT INTO board (board, last_seq) VALUES (?, ?) ON CONFLICT (board) "
                    "DO UPDATE SET last_seq=max(last_seq, excluded.last_seq)",
                    (board, seq),
                )
            row = db.execute("SELECT value FROM meta WHERE key='session'").fetchone()
            last = max(session, int(row[0]) if row else 0)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('session', ?)", (str(last),))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        for board, seq in seqs.items():
            self._last_seq[board] = max(self._last_seq.get(board, 0), seq)

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
        on in memory, ``failing_since`` says so. It is written after the events given before
        it, never without them."""
        if items:
            self._submit("checkpoints", list(items), wall_ms)

    def record(
        self,
        board: str,
        build: Callable[[int], dict[str, Any]],
        *,
        checkpoint: dict[str, Any] | None = None,
        wall_ms: int | None = None,
        urgent: bool = False,
    ) -> dict[str, Any]:
        """Give the next seq of ``board`` to ``build`` and queue what it builds for the disk,
        with the checkpoint it leads to (one transaction).

        Returns the payload at once: the board goes on. The event is *held* until the writer
        has committed it; the link publishes it only then (``on_written``). An ``urgent``
        event (the flag) is written on the loop at once where that cannot stall it
        (``JournalWriter.write_now``): on disk, and ``on_written`` told, before this returns."""
        if board not in self._last_seq:
            self._last_seq[board] = self.board(board).last_seq
        seq = self._last_seq[board] + 1
        payload = build(seq)
        held = Held(
            board, seq, json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
            checkpoint, wall_ms or 0,
        )  # fmt: skip
        self._last_seq[board] = seq
        self._held.append(held)
        if not (urgent and self._write_now("event", held)):
            self._submit("event", held)
        return payload

    @property
    def held(self) -> int:
        """Events given a seq but not yet known to be on disk (a few in flight to the writer;
        many while the disk refuses)."""
        return len(self._held)

    def holds(self, board: str) -> bool:
        return any(h.board == board for h in self._held)

    def on_disk(self, board: str, seq: int) -> bool:
        """Whether ``board``'s event ``seq`` (given out already) is known committed."""
        return seq <= self._last_seq.get(board, 0) and not any(
            h.board == board and h.seq <= seq for h in self._held
        )

    def flush(self) -> bool:
        """Try the refused writes again now; True when no event is held.

        With the writer thread this only wakes it (its answer comes on the loop)."""
        writer = self._w
        if writer.threaded:
            writer.kick()
        else:
            self._write_inline()
        return not self._held

    # -- the writer's news -----------------------------------------------------------------------
    def _submit(self, *op: Any) -> None:
        writer = self._w
        self._submitted += 1
        if writer.threaded and self._loop is not None:
            writer.submit(*op, wake=False)
            if not self._wake_due:
                try:
                    self._loop.call_soon(self._wake_writer)
                    self._wake_due = True
                except RuntimeError:  # the loop is closed (the node has stopped): now
                    writer.wake()
            return
        writer.submit(*op)
        if not writer.threaded:
            self._write_inline()

    def _wake_writer(self) -> None:
        """End of the loop's turn: the writer takes what the turn gave it, in one go. Woken
        at each ``submit`` it only waited for the GIL the turn holds, and took a core from
        the broker and the station while the turn's first event was on its way (issue 30)."""
        self._wake_due = False
        if self._writer is not None:
            self._writer.wake()

    def _write_now(self, *op: Any) -> bool:
        """Write ``op`` on the loop now, if the writer may (``JournalWriter.write_now``) and
        none of its news is still on its way here (applied in order, always)."""
        writer = self._w
        if not writer.threaded or self._applied < self._submitted or self.failing_since:
            return False
        written = writer.write_now(*op)
        if written is None:
            return False
        self._submitted += 1
        if not written.ok:  # refused: held, and told as the thread's news is (a turn later),
            assert self._loop is not None  # not inside the board's emit
            self._loop.call_soon(self._apply, written)
            return True
        try:
            self._apply(written)
        except Exception:  # a listener's failure is not the record's: the event is on disk
            log.exception("journal %s: the news of an urgent write failed its listener", self.path)
        return True

    def _write_inline(self) -> None:
        written = self._w.write()
        if written is not None:
            self._apply(written)

    def _post(self, written: Written) -> None:
        """In the writer thread: hand ``written`` to the loop."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._apply, written)
        except RuntimeError:  # the loop closed meanwhile: the node is gone
            pass

    def _apply(self, written: Written) -> None:
        """On the loop: what the writer did, in the order it did it."""
        self._applied += written.taken
        if self._caught_up is not None and self._applied >= self._submitted:
            self._caught_up.set()
        for key in written.replies:
            self._replies.pop(key, None)
        health_changed = False
        if written.ok and self._snapshot_only and self._db is not None:
            # The writer opened the file at last: read it from now on (it holds what the
            # snapshot held and what this write added).
            self._db.close()
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA query_only=ON")
            self._snapshot_only = False
        if written.ok:
            for _ in range(written.events):
                self._held.popleft()
            self._durable_id = max(self._durable_id, written.last_id)
            self._sent_unmarked.difference_update(written.marks)
            self._dropped += written.dropped
            if self.failing_since is not None:
                log.warning(
                    "journal %s writes again: %d held events written", self.path, written.events
                )
                self.recovered = (self.failing_since, written.events)
                self.failing_since = self.failure = None
                health_changed = True
        else:
            self.write_failures += 1
            if self.failing_since is None:
                self.failing_since = written.failed_wall_ms or 1
                health_changed = True
                log.error(
                    "journal %s refuses writes (%s): the clocks go on in memory, events are "
                    "held and not published until it writes again", self.path, written.error,
                )  # fmt: skip
            self.failure = written.error
        if (written.boards or health_changed) and self._db is not None:
            self.on_written(written.boards)

    # -- outbox ------------------------------------------------------------------------------------
    def unsent(self, board: str | None = None, *, limit: int = 100) -> list[OutboxRow]:
        """Events on disk not yet acknowledged by the broker, oldest first."""
        where, params = ("AND board=?", (board,)) if board is not None else ("", ())
        skip = len(self._sent_unmarked)
        rows = self.db.execute(
            f"SELECT id, board, seq, payload FROM outbox WHERE sent=0 AND id<=? {where} "
            "ORDER BY id LIMIT ?",
            (self._durable_id, *params, limit + skip),
        ).fetchall()
        return [OutboxRow(*row) for row in rows if row[0] not in self._sent_unmarked][:limit]

    def unsent_count(self, board: str | None = None) -> int:
        where, params = ("AND board=?", (board,)) if board is not None else ("", ())
        row = self.db.execute(f"SELECT count(*) FROM outbox WHERE sent=0 {where}", params)
        return int(row.fetchone()[0])

    def mark_sent(self, ids: list[int]) -> None:
        """Note the broker has these. Not synced to disk on its own: losing the mark in a
        power cut only means sending the events again, which the station dedupes. Kept in
        memory until written (not sent again while the node runs)."""
        if ids:
            self._sent_unmarked.update(ids)
            self._submit("mark", list(ids))

    def events_from(self, board: str, from_seq: int) -> list[OutboxRow]:
        rows = self.db.execute(
            "SELECT id, board, seq, payload FROM outbox WHERE board=? AND seq>=? AND id<=? "
            "ORDER BY seq",
            (board, from_seq, self._durable_id),
        ).fetchall()
        return [OutboxRow(*row) for row in rows]

    def all_events(self) -> list[OutboxRow]:
        rows = self.db.execute("SELECT id, board, seq, payload FROM outbox ORDER BY id").fetchall()
        return [OutboxRow(*row) for row in rows]

    def prune(self, *, keep: int, capacity: int) -> int:
        """Forget sent events beyond the newest ``keep``; returns unsent events dropped (by
        the prunes written since the last call: with the writer thread, earlier ones).

        Unsent events are dropped only past ``capacity`` (days of outage): that is loss, and
        it is logged as such. A disk that refuses prunes nothing (and drops nothing).
        """
        self._submit("prune", keep, capacity)
        dropped, self._dropped = self._dropped, 0
        return dropped

    # -- commands ----------------------------------------------------------------------------------
    def reply_for(self, board: str, txn: str) -> str | None:
        pending = self._replies.get((board, txn))
        if pending is not None:
            return pending
        row = self.db.execute(
            "SELECT reply FROM txn WHERE board=? AND txn=?", (board, txn)
        ).fetchone()
        return row[0] if row else None

    def remember_reply(self, board: str, txn: str, reply: str) -> None:
        """Kept for ``reply_for`` (a txn sent again gets this answer, nothing applied twice);
        a reply the disk refuses is forgotten: a txn sent again is then applied again."""
        self._replies[(board, txn)] = reply
        self._submit("reply", board, txn, reply)
