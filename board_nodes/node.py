"""The node daemon: every board of one Pi, restored from the journal, linked to the venue.

``Node(config)`` opens the journal, counts a new session, restores each board from its last
checkpoint (paused, with a ``shutdown`` event of cause ``node_restart`` when a game was in
progress), opens the faces and runs, per board, the face, the checkpoints and the MQTT link in
one TaskGroup. ``stop()`` (or SIGTERM/SIGINT under ``qizhong node``) publishes ``offline``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from board_nodes import sdnotify
from board_nodes.board import Board, NodeTime
from board_nodes.board_phase import BoardPhase
from board_nodes.config import NodeConfig
from board_nodes.faces import make_face
from board_nodes.journal import Journal
from board_nodes.link import BoardLink
from board_nodes.takeover import read_predecessors
from clock_service import Regulation
from firmware_bridge.face import ClockFace
from wire_contract.wallclock import wall_ms

__all__ = ["Node"]

log = logging.getLogger(__name__)


class Node:
    def __init__(
        self,
        config: NodeConfig,
        *,
        faces: dict[str, ClockFace] | None = None,
        time_source: Callable[[], int] | None = None,
        journal: Journal | None = None,
    ) -> None:
        self.config = config
        self.regulation = Regulation.load(config.regulation)
        self.journal = journal or Journal(
            config.data_dir / "journal.sqlite3", durable=config.journal_durable
        )
        self.journal.on_written = self._journal_news
        self._failing_since: int | None = None  # as the boards last said it
        self._faces = faces or {}
        self._time_source = time_source
        self.boards: dict[str, Board] = {}
        self.links: dict[str, BoardLink] = {}
        self.session = 0
        self.events_dropped = 0  # unsent events dropped past outbox_capacity (logged CRITICAL)
        self._stopping = asyncio.Event()
        self._task_group: asyncio.TaskGroup | None = None
        self._face_tasks: list[asyncio.Task[None]] = []
        self.started = asyncio.Event()

    def __repr__(self) -> str:
        return f"<Node {self.config.node} boards={list(self.boards)} session={self.session}>"

    def setup(self) -> None:
        """Open the journal and restore every board; safe to call once before ``run``."""
        self.journal.open()
        self.session = self.journal.next_session()
        for board_config in self.config.board:
            face = self._faces.get(board_config.id) or make_face(board_config)
            board = Board(
                board_config.id,
                venue=self.config.venue,
                node=self.config.node,
                session=self.session,
                regulation=self.regulation,
                face=face,
                journal=self.journal,
                # one per board: a late press on one board is not clamped by another's
                time_source=NodeTime(self._time_source) if self._time_source else NodeTime(),
            )
            self.boards[board.id] = board
            self.links[board.id] = BoardLink(
                board,
                broker=self.config.broker,
                journal=self.journal,
                outbox_capacity=self.config.outbox_capacity,
                outbox_alarm_ratio=self.config.outbox_alarm_ratio,
            )
            self._restore(board)

    async def _take_over(self) -> None:
        """Boards this journal holds nothing of go on from what the broker retained of them
        (takeover.py: a replaced Pi, a board moved to this one), before they say anything."""
        journal = self.journal.open()
        if journal.snapshot_only:
            return  # a disk that refuses writes: nothing can be taken over onto it
        fresh = [b.id for b in self.config.board if journal.board(b.id).is_new]
        taken = await read_predecessors(
            self.config.broker, venue=self.config.venue, node=self.config.node, boards=fresh
        )
        if not taken:
            return
        session = max(p.session for p in taken.values())
        try:
            journal.take_over({b: p.last_seq for b, p in taken.items()}, session=session)
        except Exception:  # a disk that refuses: the node starts all the same, from 1
            log.exception("takeover: the journal could not take the boards over")
            return
        for board, p in sorted(taken.items()):
            log.warning(
                "board %s: taken over from node %s (session %d): its next seq is %d",
                board, p.node, p.session, p.last_seq + 1,
            )  # fmt: skip

    def _restore(self, board: Board) -> None:
        record = self.journal.board(board.id)
        if record.checkpoint is None:
            return
        board.restore(record.checkpoint)
        if board.phase is not BoardPhase.PAUSED:
            return  # no game in progress: nothing was interrupted
        outage_ms = max(0, wall_ms() - (record.checkpoint_wall_ms or wall_ms()))
        board.hold_after_restart(outage_ms)
        log.warning("board %s: restored after %d ms without the node", board.id, outage_ms)

    async def run(self) -> None:
        if not self.boards:
            await self._take_over()
            self.setup()
        self.journal.start_writer()  # from now on the loop does not wait for the disk
        try:
            async with asyncio.TaskGroup() as tg:
                self._task_group = tg
                for board_id, board in self.boards.items():
                    error = await _try_open(board.face)
                    self._face_tasks.append(
                        tg.create_task(self._serve_face(board, error), name=f"face-{board_id}")
                    )
                    tg.create_task(self.links[board_id].run(), name=f"link-{board_id}")
                    board.changed()
                tg.create_task(self._checkpoints(), name="checkpoints")
                tg.create_task(self._watchdog(), name="watchdog")
                sdnotify.notify("READY=1")
                self.started.set()
                await self._stopping.wait()
                await self._say_offline()
                raise _Stop
        except* _Stop:
            pass
        finally:
            self._task_group = None
            for board in self.boards.values():
                board.close()
                await board.face.close()
            self.journal.close()

    async def _serve_face(self, board: Board, error: Exception | None) -> None:
        """Run one board's face; a face that will not open (a refused version, a URL that
        refuses, pins in use) is reported with its reason and retried every
        ``FACE_RETRY_S``, and the board serves once it opens. Nothing of it reaches the
        other boards."""
        reported: str | None = None
        while error is not None:
            reason = f"{type(error).__name__}: {error}"[:200]
            if reason != reported:  # once per reason, not once per try
                log.warning("board %s: the clock face does not open: %s", board.id, reason)
                board.report_clock_fault(reason)
                reported = reason
            await asyncio.sleep(FACE_RETRY_S)
            error = await _try_open(board.face)
        if reported is not None:
            log.info("board %s: the clock face is open", board.id)
            board.report_clock_fault(None)
        await board.run_face()

    async def _checkpoints(self) -> None:
        """Keep every running clock's journaled times at most ``checkpoint_s`` old.

        On a fixed schedule (not "interval after the last write", which drifts past the bound
        on a loaded machine), all boards in one transaction: one fsync per tick per node."""
        loop = asyncio.get_running_loop()
        period = self.config.checkpoint_s
        while True:
            await asyncio.sleep(period - loop.time() % period)
            self.journal.flush()  # nothing to do unless the disk refused
            due = [(b.id, cp) for b in self.boards.values() if (cp := b.due_checkpoint())]
            self.journal.checkpoints(due, wall_ms())

    def _journal_news(self, boards: frozenset[str]) -> None:
        """The writer committed these boards' events (the links send them now), or the
        journal began or ceased to refuse writes."""
        for board_id in boards:
            link = self.links.get(board_id)
            if link is not None:
                link.durable()
        journal = self.journal
        if (journal.failing_since is None) != (self._failing_since is None):
            since, self._failing_since = self._failing_since, journal.failing_since
            held = journal.recovered[1] if journal.recovered else 0
            self._journal_changed(since, held)

    def _journal_changed(self, failing_since: int | None, held: int) -> None:
        """The journal began or ceased to refuse writes: every board says so (status, face);
        once it writes again, each board journals a warning of how long it refused."""
        for board_id, board in self.boards.items():
            if failing_since is not None:  # it writes again
                refused_ms = max(0, wall_ms() - failing_since)
                board.emit("warning", {
                    "reason": "journal_failed",
                    "detail": f"the journal refused writes for {refused_ms} ms; "
                              f"{held} events were held and are written",
                })  # fmt: skip
            self.links[board_id].journal_changed()
            board.changed()

    async def _say_offline(self) -> None:
        sdnotify.notify("STOPPING=1")
        await self._send_what_is_journaled()
        await asyncio.gather(*(link.close() for link in self.links.values()))

    async def _send_what_is_journaled(self) -> None:
        """A clean stop ends the boards' facts first, then sends them: the faces are read no
        more, no command is applied, each board's timers close (a running clock's time is
        checkpointed), and each link waits (at most ``STOP_SEND_S``) until the broker holds
        every event the board journaled. What a link could not send goes at the next start."""
        for task in self._face_tasks:
            task.cancel()
        await asyncio.gather(*self._face_tasks, return_exceptions=True)
        for board in self.boards.values():
            board.close()
        sent = await asyncio.gather(
            *(link.send_all(timeout_s=STOP_SEND_S) for link in self.links.values())
        )
        left = [bid for bid, ok in zip(self.links, sent, strict=True) if not ok]
        if left:
            log.warning(
                "stopping with unsent events of boards %s: they are sent at the next start",
                ", ".join(left),
            )

    async def _watchdog(self) -> None:
        """Every few seconds (not per event: pruning is a write): trim the journal, check the
        outbox alarm, and tell systemd the node is alive."""
        interval = sdnotify.watchdog_interval_s()
        config = self.config
        while True:
            self.events_dropped += self.journal.prune(
                keep=config.replay_keep, capacity=config.outbox_capacity
            )
            for link in self.links.values():
                link.check_outbox()
            if interval is not None and not self._stopping.is_set():
                sdnotify.notify("WATCHDOG=1")  # none after STOPPING=1: systemd reads the last
            await asyncio.sleep(interval or 5.0)

    def stop(self) -> None:
        self._stopping.set()

    def status(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "boards": {bid: b.phase for bid, b in self.boards.items()},
            "connected": {bid: link.connected.is_set() for bid, link in self.links.items()},
        }


class _Stop(Exception):
    pass


FACE_RETRY_S = 1.0  # how often a clock face that would not open is tried again
# A clean stop waits this long at most for the broker to take what the boards journaled
# (systemd gives the node 15 s: deploy/systemd/qizhong-node.service).
STOP_SEND_S = 3.0


async def _try_open(face: ClockFace) -> Exception | None:
    try:
        await face.open()
    except Exception as exc:  # whatever a face raises, the node outlives it
        return exc
    return None


async def run_node(config: NodeConfig) -> None:
    """Run until SIGINT/SIGTERM, then stop cleanly."""
    import signal

    node = Node(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, node.stop)
    await node.run()
