"""The station half of ``benchmarks/overload.py``: ``qizhong station`` as a process on a private
Mosquitto; events published QoS 1 by every node's own account (so the broker's ACL, the
station's per-board checks and its flood gate see a venue's real traffic)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import aiomqtt
from _overload_common import MemorySampler, drive, rss_mb, summary, tally
from _station_bench import client

from broker_config import Roster
from qizhong.simulation.venue import LocalVenue

__all__ = ["run_station"]

VENUE = "ovl"
Key = tuple[str, int, int]


class OverloadVenue(LocalVenue):
    """Broker and station only; the broker's queue for the station is sized to hold the whole
    overload backlog (the operator sizes it with ``outage_minutes``, docs/broker.md): past it
    Mosquitto would drop, and the run would measure the broker's sizing, not the station."""

    queue: int = 5_000_000

    @property
    def roster(self) -> Roster:
        return Roster.build(
            venue=self.venue,
            nodes=self.node_boards,
            arbiters=["arbiter"],
            broker={"max_queued_messages": self.queue},
        )

    def start_node(self, node: str) -> None:
        return None


class Fleet:
    """One QoS 1 client per node account; each event's (board, session, seq) is remembered by
    its per-board counter (seqs 1..n on every board, session 1)."""

    def __init__(self, venue: LocalVenue) -> None:
        self.venue = venue
        self.boards = [(node, b) for node, bs in venue.node_boards.items() for b in bs]
        self.seq = dict.fromkeys((b for _n, b in self.boards), 0)
        self.clients: dict[str, aiomqtt.Client] = {}
        self.next = 0
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Fleet:
        assert self.venue.broker is not None
        for node in self.venue.node_boards:
            c = client(self.venue.broker, node, max_inflight_messages=1000)
            self.clients[node] = await self._stack.enter_async_context(c)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    def _payload(self, node: str, board: str) -> bytes:
        self.seq[board] += 1
        return json.dumps({
            "v": 1, "board": board, "node": node, "game": f"r1-b{board}", "session": 1,
            "seq": self.seq[board], "ts": time.time_ns() // 1_000_000, "type": "move",
            "replay": False, "clock": {"red_ms": 900_000, "black_ms": 900_000, "running": "black"},
            "data": {"side": "red", "used_ms": 2_000, "move": self.seq[board]},
        }).encode()  # fmt: skip

    async def publish(self, n: int) -> None:
        """``n`` events round-robin over the boards, each awaited to its PUBACK (QoS 1)."""
        sends = []
        for _ in range(n):
            node, board = self.boards[self.next % len(self.boards)]
            self.next += 1
            topic = f"qz/v1/{VENUE}/board/{board}/event"
            sends.append(self.clients[node].publish(topic, self._payload(node, board), qos=1))
        await asyncio.gather(*sends)

    def keys(self) -> set[Key]:
        return {(b, 1, s) for b, n in self.seq.items() for s in range(1, n + 1)}

    @property
    def published(self) -> int:
        return self.next


def stored_count(db_file: Path) -> int:
    """Rows stored so far (the id only grows: max(id) is the count without a table scan)."""
    db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)
    try:
        return int(db.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        db.close()


def stored_keys(db_file: Path) -> tuple[set[Key], int]:
    db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=60)
    try:
        rows = db.execute("SELECT board, session, seq FROM events").fetchall()
    finally:
        db.close()
    return {(str(b), int(s), int(q)) for b, s, q in rows}, len(rows)


async def wait_stored(db_file: Path, n: int, timeout_s: float) -> float:
    """Seconds until ``n`` rows are stored; raises on timeout."""
    t0 = time.monotonic()
    while stored_count(db_file) < n:
        if time.monotonic() - t0 > timeout_s:
            raise RuntimeError(f"{stored_count(db_file)} of {n} stored after {timeout_s:.0f} s")
        await asyncio.sleep(0.2)
    return time.monotonic() - t0


async def run_station(boards: int, window_s: float, factor: float, burst: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="qz-overload-"))
    venue = OverloadVenue(work, boards=boards, venue=VENUE)
    try:
        venue.start()
        assert venue.station_proc is not None and venue.broker is not None
        station_pid, broker_pid = venue.station_proc.pid, venue.broker.pid or 0
        db_file = work / "station" / "station.db"
        async with Fleet(venue) as fleet:
            # Capacity: the burst queued at the broker while the station is stopped (SIGSTOP),
            # then drained by it alone: what it stores per second with a backlog in front.
            await fleet.publish(boards)  # warm-up: every board's first row, tables touched
            await wait_stored(db_file, fleet.published, 60)
            before = fleet.published
            os.kill(station_pid, signal.SIGSTOP)
            try:
                while fleet.published - before < burst:
                    await fleet.publish(min(1000, burst - (fleet.published - before)))
            finally:
                os.kill(station_pid, signal.SIGCONT)
            t0 = time.monotonic()
            await wait_stored(db_file, fleet.published, 600)
            capacity = burst / (time.monotonic() - t0)
            # Overload: factor x capacity for the window, RSS sampled every second.
            sampler = MemorySampler({"station": station_pid, "broker": broker_pid}).start()
            t_load = time.monotonic()
            sent, achieved = await drive(capacity * factor, window_s, fleet.publish)
            window = time.monotonic() - t_load
            backlog = fleet.published - stored_count(db_file)
            catch_up = await wait_stored(db_file, fleet.published, 3600)
            sampler.stop()
            keys, rows = stored_keys(db_file)
            want = fleet.keys()
        return summary(
            "station",
            capacity=capacity,
            target=capacity * factor,
            achieved=achieved,
            window_s=window,
            sampler=sampler,
            proc="station",
            catch_up_s=catch_up,
            counts=tally(want, keys, rows),
            extra={
                "boards": boards,
                "overload_events": sent,
                "backlog_at_stop": backlog,
                "broker_peak_rss_mb": sampler.peak("broker"),
                "station_rss_after_mb": round(rss_mb(station_pid), 1),
            },
        )
    finally:
        venue.stop()
        shutil.rmtree(work, ignore_errors=True)
