"""The public viewers of benchmarks/federation.py: ``count`` raw NATS-over-WebSocket viewers
(_ws_viewers.py) in child processes while a venue publishes state changes; every update's
latency, nats-server's CPU share and RSS over the window, its slow consumers."""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import resource
import time
import urllib.request
from array import array
from pathlib import Path
from typing import Any

import nats
from _common import percentiles
from _ws_viewers import sched_s, viewer_process

from federation_hub.centre_runner import NatsCentre
from wire_contract.wallclock import wall_ms as now_ms

VIEWER_SUBJECT = "fed.qz.v1.*.board.*.state"


def _server_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def viewers(
    centre: NatsCentre, count: int, seconds: float, rate: float, per_process: int
) -> dict[str, Any]:
    """``count`` WebSocket viewers spread over child processes; latency of each update."""
    port = centre.nodes[0].ws_port
    procs = max(1, -(-count // per_process))
    ctx = mp.get_context("spawn")
    pipes, children = [], []
    for i in range(procs):
        share = count // procs + (1 if i < count % procs else 0)
        parent_end, child_end = ctx.Pipe()
        child = ctx.Process(
            target=viewer_process,
            args=(child_end, "127.0.0.1", port, VIEWER_SUBJECT, share),
            daemon=True,
        )
        child.start()
        pipes.append(parent_end)
        children.append(child)
    loop = asyncio.get_running_loop()
    t_connect = time.perf_counter()
    ready = await asyncio.gather(*(loop.run_in_executor(None, p.recv) for p in pipes))
    connect_s = time.perf_counter() - t_connect
    held = sum(r[1] for r in ready)
    settle_s = 1 + count / 2_000
    pid = centre.procs[0].pid  # type: ignore[union-attr]
    venue = await nats.connect(centre.urls, user="venue-va", password="pw-va")
    try:
        await asyncio.sleep(settle_s)  # the connection storm settles before the clock starts
        slow0 = _slow_consumers(centre)
        for pipe in pipes:
            pipe.send("go")
        (run0, wait0), w0 = sched_s(pid), time.perf_counter()
        t_end = time.monotonic() + seconds
        half_ms = now_ms() + int(seconds * 500)
        seq = 0
        while time.monotonic() < t_end:
            seq += 1
            board = seq % 20 + 1
            body = {"board": str(board), "seq": seq, "ts": now_ms()}
            await venue.publish(f"fed.qz.v1.va.board.{board}.state", json.dumps(body).encode())
            await asyncio.sleep(1 / rate)
        await venue.flush()
        await asyncio.sleep(2)
        run1, wait1 = sched_s(pid)
        window = time.perf_counter() - w0
        server_cpu, server_wait = (run1 - run0) / window, (wait1 - wait0) / window
        rss = _server_rss_mb(pid)
        slow = _slow_consumers(centre) - slow0
    finally:
        await venue.close()
        for pipe in pipes:
            pipe.send("stop")
    done = await asyncio.gather(*(loop.run_in_executor(None, p.recv) for p in pipes))
    for child in children:
        child.join(10)
    lat: array[int] = array("l")
    sent: array[int] = array("q")
    for _, raw_lat, raw_sent, _stats in done:
        lat.frombytes(raw_lat)
        sent.frombytes(raw_sent)
    # The second half of the window alone: past the connection storm's after-effects.
    steady = [d for d, t in zip(lat, sent, strict=True) if t >= half_ms]
    p = percentiles(lat) if lat else {"p50": float("nan"), "p99": float("nan")}
    ps = percentiles(steady) if steady else {"p50": float("nan"), "p99": float("nan")}
    return {
        "viewers": count,
        "held": held,
        "processes": procs,
        "connect_s": round(connect_s, 1),
        "updates": seq,
        # when the last viewer had the last update, after it was published
        "last_received_after_ms": max(d[3]["last_ms"] for d in done) - max(sent, default=0),
        "p50": p["p50"],
        "p99": p["p99"],
        "steady_p50": ps["p50"],
        "steady_p99": ps["p99"],
        "delivered": len(lat) / max(1, seq * count),
        "dropped_during": sum(d[3]["lost_during"] for d in done),
        "slow_consumers": slow,
        "server_cpu": round(server_cpu, 2),
        "server_wait": round(server_wait, 2),
        "client_wait": round(sum(d[3]["wait_s"] for d in done) / window, 2),
        "server_rss_mb": round(rss, 1),
        "client_cpu": round(sum(d[3]["cpu_s"] for d in done) / window, 2),
    }


def _slow_consumers(centre: NatsCentre) -> int:
    url = f"http://127.0.0.1:{centre.nodes[0].http_port}/varz"
    with urllib.request.urlopen(url, timeout=5) as r:
        return int(json.loads(r.read()).get("slow_consumers", 0))


def raise_nofile(viewers: int) -> None:
    # nats-server (our child) holds one descriptor per viewer and inherits this limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, max(soft, viewers + 1024))
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if viewers + 256 > hard:
        raise SystemExit(f"--viewers {viewers}: the hard RLIMIT_NOFILE is {hard}")
