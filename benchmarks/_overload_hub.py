"""The hub half of ``benchmarks/overload.py``: one NATS node (JetStream), ``qizhong hub`` as a
process on a throwaway PostgreSQL database; events published straight to the federation's
subjects (``fed.qz.v1.{venue}.board.{board}.event``), as the venues' bridges would."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import nats
from _overload_common import MemorySampler, drive, rss_mb, summary

from federation_hub.centre_runner import HUB_USER, NatsCentre, free_port
from federation_hub.streams import EVENTS_STREAM, StreamPlan, ensure_streams

__all__ = ["run_hub"]

PG_ADMIN = {"host": "127.0.0.1", "port": 5432, "database": "test", "user": "postgres"}
VENUES = ("va", "vb", "vc", "vd")
Key = tuple[str, str, int, int]


class Publisher:
    """Core NATS publishes round-robin over venues × boards; per board seqs 1..n, session 1.
    Not acked one by one: the stream's own message count is checked against ``published``
    before the store is (a message JetStream never stored is reported, not hidden)."""

    def __init__(self, nc: Any, boards: int) -> None:
        self.nc = nc
        self.boards = [(v, str(b)) for v in VENUES for b in range(1, boards // len(VENUES) + 1)]
        self.seq = dict.fromkeys(self.boards, 0)
        self.published = 0

    async def publish(self, n: int) -> None:
        now = time.time_ns() // 1_000_000
        for _ in range(n):
            venue, board = key = self.boards[self.published % len(self.boards)]
            self.published += 1
            self.seq[key] += 1
            seq = self.seq[key]
            body = json.dumps({
                "v": 1, "board": board, "node": "n1", "game": f"r1-b{board}", "session": 1,
                "seq": seq, "ts": now, "type": "move", "replay": False,
                "clock": {"red_ms": 900_000, "black_ms": 900_000, "running": "black"},
                "data": {"side": "red", "used_ms": 2_000, "move": seq},
            }).encode()  # fmt: skip
            await self.nc.publish(f"fed.qz.v1.{venue}.board.{board}.event", body)
        await self.nc.flush()

    def keys(self) -> set[Key]:
        return {(v, b, 1, s) for (v, b), n in self.seq.items() for s in range(1, n + 1)}


class HubProc:
    def __init__(self, centre: NatsCentre, db_url: str) -> None:
        self.port = free_port()
        pw = centre.directory / "hub.pw"
        pw.write_text(HUB_USER[1])
        self.log = centre.directory / "hub.log"
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "qizhong"), "hub", "--nats", ",".join(centre.urls),
             "--user", HUB_USER[0], "--password-file", str(pw), "--db", db_url,
             "--http", f"127.0.0.1:{self.port}", "--name", "hub-overload",
             "--log-level", "WARNING"],
            stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,  # noqa: SIM115 - Popen owns it
        )  # fmt: skip

    def stored(self) -> int:
        if self.proc.poll() is not None:
            raise RuntimeError(f"the hub exited: {self.log.read_text()[-2000:]}")
        try:
            url = f"http://127.0.0.1:{self.port}/api/metrics"
            with urllib.request.urlopen(url, timeout=5) as r:
                return int(json.loads(r.read())["stored"])
        except OSError:
            return 0

    async def wait_stored(self, n: int, timeout_s: float) -> float:
        t0 = time.monotonic()
        while self.stored() < n:
            if time.monotonic() - t0 > timeout_s:
                raise RuntimeError(f"{self.stored()} of {n} stored after {timeout_s:.0f} s")
            await asyncio.sleep(0.2)
        return time.monotonic() - t0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


async def stream_messages(js: Any) -> int:
    return int((await js.stream_info(EVENTS_STREAM)).state.messages)


async def run_hub(boards: int, window_s: float, factor: float, burst: int) -> dict[str, Any]:
    name = f"qz_overload_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(**PG_ADMIN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    centre = NatsCentre.start(nodes=1, venues={}, max_file_store_mb=16384)
    hub: HubProc | None = None
    nc = await nats.connect(centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    try:
        js = nc.jetstream()
        await ensure_streams(js, StreamPlan())  # the hub's own defaults (8 GiB events stream)
        pub = Publisher(nc, boards)
        # Capacity: a burst waiting in the stream, then the hub started on it alone.
        await pub.publish(burst)
        while await stream_messages(js) < burst:  # noqa: ASYNC110 - the server's count, polled
            await asyncio.sleep(0.1)
        hub = HubProc(centre, f"postgresql://postgres@127.0.0.1:5432/{name}")
        while hub.stored() == 0:  # noqa: ASYNC110 - another process's counter, polled
            await asyncio.sleep(0.05)
        t0, s0 = time.monotonic(), hub.stored()
        await hub.wait_stored(burst, 600)
        capacity = (burst - s0) / (time.monotonic() - t0)
        server_pid = centre.procs[0].pid if centre.procs[0] is not None else 0
        sampler = MemorySampler({"hub": hub.proc.pid, "nats": server_pid}).start()
        t_load = time.monotonic()
        sent, achieved = await drive(capacity * factor, window_s, pub.publish)
        window = time.monotonic() - t_load
        backlog = pub.published - hub.stored()
        catch_up = await hub.wait_stored(pub.published, 3600)
        sampler.stop()
        in_stream = await stream_messages(js)
        rows = await admin_rows(name)
        keys = set(rows)
        want = pub.keys()
        return summary(
            "hub",
            capacity=capacity,
            target=capacity * factor,
            achieved=achieved,
            window_s=window,
            sampler=sampler,
            proc="hub",
            catch_up_s=catch_up,
            published=len(want),
            stored=len(rows),
            missing=len(want - keys),
            unknown=len(keys - want) + (len(rows) - len(keys)),
            extra={
                "boards": len(pub.boards),
                "overload_events": sent,
                "backlog_at_stop": backlog,
                "in_stream": in_stream,
                "nats_peak_rss_mb": sampler.peak("nats"),
                "hub_rss_after_mb": round(rss_mb(hub.proc.pid), 1),
            },
        )
    finally:
        await nc.close()
        if hub is not None:
            hub.stop()
        centre.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def admin_rows(db: str) -> list[Key]:
    conn = await asyncpg.connect(**{**PG_ADMIN, "database": db})
    try:
        rows = await conn.fetch("SELECT venue, board, session, seq FROM fed_events")
    finally:
        await conn.close()
    return [(r["venue"], r["board"], int(r["session"]), int(r["seq"])) for r in rows]
