"""The hub half of ``benchmarks/overload.py``: one NATS node (JetStream), ``qizhong hub`` as a
process on a throwaway PostgreSQL database; events published straight to the federation's
subjects (``fed.qz.v1.{venue}.board.{board}.event``), as the venues' bridges would."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import nats
from _common import PG_ADMIN, pg_url
from _overload_common import MemorySampler, rss_mb, summary, tally
from _overload_fedpub import START_DELAY_S, Key, Publisher, all_boards, publish_parallel

from federation_hub.centre_runner import HUB_USER, NatsCentre, free_port
from federation_hub.streams import EVENTS_STREAM, StreamPlan, ensure_streams

__all__ = ["run_hub"]

# Publishing processes: one topped out at ~10,000 events/s here; each adds its share.
PUBLISHERS = 3


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
        pub = Publisher(nc, all_boards(boards))
        # Capacity: a burst waiting in the stream, then the hub started on it alone.
        await pub.publish(burst)
        while await stream_messages(js) < burst:  # noqa: ASYNC110 - the server's count, polled
            await asyncio.sleep(0.1)
        hub = HubProc(centre, pg_url(name))
        while hub.stored() == 0:  # noqa: ASYNC110 - another process's counter, polled
            await asyncio.sleep(0.05)
        t0, s0 = time.monotonic(), hub.stored()
        await hub.wait_stored(burst, 600)
        capacity = (burst - s0) / (time.monotonic() - t0)
        server_pid = centre.procs[0].pid if centre.procs[0] is not None else 0
        processes = max(PUBLISHERS, math.ceil(capacity * factor / 5_000))
        start_at = time.monotonic() + START_DELAY_S
        auth = (HUB_USER[0], HUB_USER[1])
        load = asyncio.ensure_future(
            publish_parallel(
                centre.urls, auth, pub, capacity * factor, window_s, processes, start_at
            )
        )
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        sampler = MemorySampler({"hub": hub.proc.pid, "nats": server_pid}).start()
        t_load = time.monotonic()
        sent, achieved = await load
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
            counts=tally(want, keys, len(rows)),
            extra={
                "boards": len(pub.boards),
                "publisher_processes": processes,
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
