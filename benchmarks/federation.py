"""Federation hub and public viewers (issue 18), each as a ratio to a baseline of the same run.

1. Hub throughput: N events in the federation's JetStream stream; a bare pull consumer (fetch,
   ack, nothing else) reads them all, then the hub (validate, PostgreSQL commit, ack) does:
   hub events/s ÷ bare events/s (aim ≥ 0.5). ``--rounds`` such pairs, interleaved, because the
   shared machine's load swings between seconds; ``ratio`` is the median of the pairs' ratios.
2. Venue publish → hub stored: events published on a venue Mosquitto, bridged to NATS over MQTT,
   stored by the hub; p50/p99 of (stored_ms − ts), against the bridge alone (publish → a core
   NATS subscriber at the centre).
3. Viewers: V WebSocket viewers in the PUBLIC account, each subscribed to every board's state,
   while a venue publishes ``--rate`` state changes per second; p99 of (received − ts) against
   one viewer alone (the engine's fan-out measured alone). The viewers are raw NATS-over-
   WebSocket clients (_ws_viewers.py), ``--per-process`` of them in each child process, which
   report every update's latency back; nats-server's CPU share and RSS over the window.

    python benchmarks/federation.py           # 30,000 events ×3, 2,000 e2e, 1,000 viewers
    python benchmarks/federation.py --quick   # 3,000 events ×3, 300 e2e, 100 viewers
    python benchmarks/federation.py --viewers-only --viewers 10000   # ratio: p99 ÷ 1 viewer's
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import nats
import sqlalchemy as sa
from _common import PG_ADMIN, emit, parse_args, percentiles, pg_url
from _fed_viewers import raise_nofile, viewers
from _ws_viewers import sched_s

from broker_config import MosquittoProcess, Roster
from federation_hub.centre_runner import HUB_USER, NatsCentre
from federation_hub.consumer import HubConsumer
from federation_hub.store import HubStore, events
from federation_hub.streams import (
    EVENTS_DURABLE,
    EVENTS_STREAM,
    StreamPlan,
    consumer_config,
    ensure_streams,
)

BOARDS = 100
PLAN = StreamPlan(max_bytes=256 * 1024**2)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def event(board: int, seq: int, ts: int | None = None) -> bytes:
    return json.dumps({
        "v": 1, "board": str(board), "node": "n1", "game": f"r1-b{board}", "session": 1,
        "seq": seq, "ts": now_ms() if ts is None else ts, "type": "move", "replay": False,
        "clock": {"red_ms": 1_700_000, "black_ms": 1_800_000, "running": "black"},
        "data": {"side": "red", "used_ms": 8123, "move": seq},
    }).encode()  # fmt: skip


async def new_db() -> str:
    name = f"qz_fedbench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(**PG_ADMIN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    return name


async def drop_db(name: str) -> None:
    admin = await asyncpg.connect(**PG_ADMIN)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.close()


async def fill_stream(nc: Any, n: int, venue: str = "va") -> None:
    js = nc.jetstream()
    for i in range(n):
        board, seq = i % BOARDS + 1, i // BOARDS + 1
        await nc.publish(f"fed.qz.v1.{venue}.board.{board}.event", event(board, seq))
    await nc.flush()
    while (await js.stream_info("QZ_FED_EVENTS")).state.messages < n:  # noqa: ASYNC110 - the server's count, polled
        await asyncio.sleep(0.05)


async def bare_rate(nc: Any, n: int, durable: str) -> float:
    js = nc.jetstream()
    await js.add_consumer("QZ_FED_EVENTS", consumer_config(durable, PLAN))
    sub = await js.pull_subscribe_bind(durable, "QZ_FED_EVENTS")
    t0, got = time.perf_counter(), 0
    while got < n:
        for m in await sub.fetch(200, timeout=5):
            await m.ack()
            got += 1
    rate = n / (time.perf_counter() - t0)
    await sub.unsubscribe()
    await js.delete_consumer("QZ_FED_EVENTS", durable)
    return rate


async def stop(task: asyncio.Task[None]) -> None:
    """Cancel the hub's task until it has ended.

    Python 3.11's ``asyncio.wait_for`` (inside nats-py's fetch) can swallow a cancellation that
    arrives as its fetch completes; the reader then goes on fetching and one ``cancel()`` never
    ends it (seen once: a --quick run waited 10 minutes here).
    """
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)
    await asyncio.gather(task, return_exceptions=True)


async def hub_rate(hub: HubConsumer, n: int) -> float:
    task = asyncio.create_task(hub.run())
    await hub.ready.wait()  # connected and bound, as the bare consumer is before its clock starts
    t0 = time.perf_counter()
    last, since = -1, time.monotonic()
    while hub.counters.stored < n:
        # A hub that stopped, or stores nothing for a minute, is an error, not a long wait.
        if hub.counters.stored != last:
            last, since = hub.counters.stored, time.monotonic()
        if task.done() or time.monotonic() - since > 60:
            await stop(task)
            raise RuntimeError(f"the hub stalled at {hub.counters.as_dict()} of {n}")
        await asyncio.sleep(0.01)
    rate = n / (time.perf_counter() - t0)
    await stop(task)
    return rate


class CpuMeter:
    """CPU seconds spent by this process, nats-server and the database's backends.

    The wall-clock ratio swings with the shared machine's load; CPU seconds per event do not
    (much): what the hub costs the machine per event, against what the bare consumer costs.
    """

    def __init__(self, centre: NatsCentre, db: str) -> None:
        self.nats_pid = centre.procs[0].pid  # type: ignore[union-attr]
        self.db = db

    async def _backends(self) -> dict[int, float]:
        admin = await asyncpg.connect(**PG_ADMIN)
        try:
            rows = await admin.fetch("SELECT pid FROM pg_stat_activity WHERE datname = $1", self.db)
        finally:
            await admin.close()
        out = {}
        for r in rows:
            try:
                out[r["pid"]] = sched_s(r["pid"])[0]
            except OSError:
                pass  # a backend that ended meanwhile
        return out

    async def snapshot(self) -> tuple[float, float, dict[int, float]]:
        return time.process_time(), sched_s(self.nats_pid)[0], await self._backends()

    async def since(self, start: tuple[float, float, dict[int, float]]) -> dict[str, float]:
        end = await self.snapshot()
        db = sum(v - start[2].get(pid, 0.0) for pid, v in end[2].items())
        return {"python": end[0] - start[0], "nats": end[1] - start[1], "db": db}


async def throughput(
    centre: NatsCentre, store: HubStore, db: str, n: int, rounds: int, workers: int
) -> dict[str, Any]:
    """``rounds`` pairs of (bare consumer, hub) over the same ``n`` events, interleaved.

    The machine is shared and its load swings within seconds: a pair measured back to back
    sees nearly the same load, so each pair gives one ratio and the figure is their median.
    Between rounds the hub's durable consumer and table are reset, so each round stores all n.
    """
    nc = await nats.connect(centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    js = nc.jetstream()
    await ensure_streams(js, PLAN)
    await fill_stream(nc, n)
    meter = CpuMeter(centre, db)
    bare, hub = [], []
    cpu: dict[str, list[dict[str, float]]] = {"bare": [], "hub": []}
    try:
        for i in range(rounds):
            t0 = await meter.snapshot()
            bare.append(await bare_rate(nc, n, f"bench-bare-{i}"))
            cpu["bare"].append(await meter.since(t0))
            if i:
                await js.delete_consumer(EVENTS_STREAM, EVENTS_DURABLE)
                async with store.engine.begin() as conn:
                    await conn.execute(sa.text("TRUNCATE fed_events"))
            t0 = await meter.snapshot()
            hub.append(await hub_rate(HubConsumer(
                servers=centre.urls, user=HUB_USER[0], password=HUB_USER[1], store=store,
                plan=PLAN, batch=500, workers=workers,
            ), n))  # fmt: skip
            cpu["hub"].append(await meter.since(t0))
    finally:
        await nc.close()
    ratios = sorted(h / b for h, b in zip(hub, bare, strict=True))

    def per_event_us(kind: str) -> dict[str, float]:
        return {
            part: round(statistics.median(c[part] for c in cpu[kind]) / n * 1e6, 1)
            for part in ("python", "nats", "db")
        }

    bare_us, hub_us = per_event_us("bare"), per_event_us("hub")
    return {
        "bare": bare,
        "hub": hub,
        "ratios": ratios,
        "median": statistics.median(ratios),
        "bare_cpu_us": bare_us,
        "hub_cpu_us": hub_us,
        "cpu_ratio": sum(bare_us.values()) / sum(hub_us.values()),
    }


async def e2e(centre: NatsCentre, store: HubStore, hub: HubConsumer, n: int) -> dict[str, Any]:
    import aiomqtt

    user, password = centre.users.venues["vb"]
    roster = Roster.build(
        venue="vb",
        nodes={"n1": [str(b) for b in range(1, BOARDS + 1)]},
        broker={"max_queued_messages": 100_000},
        federation={"urls": [f"mqtt://127.0.0.1:{centre.nodes[0].mqtt_port}"],
                    "username": user, "password": password},
    )  # fmt: skip
    directory = Path(tempfile.mkdtemp(prefix="qz-fedbench-"))
    broker = MosquittoProcess.from_roster(roster, directory)
    nc = await nats.connect(centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    bridge_lat: list[float] = []

    async def on_msg(msg: Any) -> None:
        bridge_lat.append(now_ms() - json.loads(msg.data)["ts"])

    await nc.subscribe("fed.qz.v1.vb.board.*.event", cb=on_msg)
    task = asyncio.create_task(hub.run())
    try:
        creds = broker.files.credentials("n1")
        async with aiomqtt.Client(
            broker.host, broker.port, username=creds.username, password=creds.password,
            protocol=aiomqtt.ProtocolVersion.V5,
        ) as client:  # fmt: skip
            # The bridge connects in the background: wait until a probe crosses it.
            while not bridge_lat:
                await client.publish("qz/v1/vb/board/1/event", event(1, 1), qos=1)
                await asyncio.sleep(0.2)
            bridge_lat.clear()
            for i in range(n):
                board, seq = i % BOARDS + 1, i // BOARDS + 2
                await client.publish(f"qz/v1/vb/board/{board}/event", event(board, seq), qos=1)
                await asyncio.sleep(0.01)  # ~100 events/s: a busy federation's live rate
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            async with store.engine.connect() as conn:
                rows = (await conn.execute(
                    sa.select(events.c.stored_ms - events.c.ts)
                    .where(events.c.venue == "vb", events.c.seq >= 2)
                )).all()  # fmt: skip
            if len(rows) >= n:
                break
            await asyncio.sleep(0.5)
        hub_lat = [float(r[0]) for r in rows]
    finally:
        await stop(task)
        await nc.close()
        broker.close()
        shutil.rmtree(directory, ignore_errors=True)
    return {"bridge": percentiles(bridge_lat), "hub": percentiles(hub_lat), "n": len(hub_lat)}


async def main_async(args: Any) -> dict[str, Any]:
    quick = args.quick
    n_events = 3_000 if quick else 30_000
    n_e2e = 300 if quick else 2_000
    n_view = args.viewers or (100 if quick else 1_000)
    seconds = args.seconds or (3 if quick else 10)
    raise_nofile(n_view)
    centre = NatsCentre.start(
        nodes=1, venues={"va": ("venue-va", "pw-va"), "vb": ("venue-vb", "pw-vb")}
    )
    db = await new_db()
    store = await HubStore.open(pg_url(db))
    result: dict[str, Any] = {}
    try:
        if not args.viewers_only:
            put = await throughput(centre, store, db, n_events, args.rounds, args.workers)

            def make_hub() -> HubConsumer:
                return HubConsumer(servers=centre.urls, user=HUB_USER[0], password=HUB_USER[1],
                           store=store, plan=PLAN, batch=500, workers=args.workers)  # fmt: skip

            lat = await e2e(centre, store, make_hub(), n_e2e)
            result |= {
                "ratio": round(put["median"], 3),
                "ratio_per_round": [round(r, 3) for r in put["ratios"]],
                # CPU per event (this process, nats-server, PostgreSQL), medians of the rounds:
                # the same comparison without the machine's load in it
                "cpu_ratio": round(put["cpu_ratio"], 3),
                "bare_cpu_us_per_event": put["bare_cpu_us"],
                "hub_cpu_us_per_event": put["hub_cpu_us"],
                "hub_workers": args.workers,
                "bare_events_per_s": [round(r) for r in put["bare"]],
                "hub_events_per_s": [round(r) for r in put["hub"]],
                "events": n_events,
                "e2e_events": lat["n"],
                "bridge_p50_ms": lat["bridge"]["p50"],
                "bridge_p99_ms": lat["bridge"]["p99"],
                "hub_stored_p50_ms": lat["hub"]["p50"],
                "hub_stored_p99_ms": lat["hub"]["p99"],
                "e2e_p99_ratio": round(lat["hub"]["p99"] / max(1.0, lat["bridge"]["p99"]), 2),
            }
        one = await viewers(centre, 1, seconds, args.rate, args.per_process)
        many = await viewers(centre, n_view, seconds, args.rate, args.per_process)
    finally:
        await store.close()
        await drop_db(db)
        centre.close()
    if args.viewers_only:
        result["ratio"] = round(many["p99"] / max(1.0, one["p99"]), 2)
    result |= {
        "update_rate_per_s": args.rate,
        "viewer_1_p50_ms": one["p50"],
        "viewer_1_p99_ms": one["p99"],
        "viewer_1_server_cpu": one["server_cpu"],
        "viewers": n_view,
        "viewers_held": many["held"],
        "viewer_processes": many["processes"],
        "viewers_connect_s": many["connect_s"],
        "viewers_p50_ms": many["p50"],
        "viewers_p99_ms": many["p99"],
        "viewers_2nd_half_p50_ms": many["steady_p50"],
        "viewers_2nd_half_p99_ms": many["steady_p99"],
        "viewers_slow_consumers": many["slow_consumers"],
        "viewers_updates": many["updates"],
        "viewers_last_received_after_ms": many["last_received_after_ms"],
        "viewers_delivered": round(many["delivered"], 4),
        "viewers_dropped_during": many["dropped_during"],
        "viewers_p99_ratio": round(many["p99"] / max(1.0, one["p99"]), 2),
        # CPU used and run-queue wait, in cores over the window (1.0 = one core all along)
        "nats_server_cpu": many["server_cpu"],
        "nats_server_runqueue_wait": many["server_wait"],
        "nats_server_rss_mb": many["server_rss_mb"],
        "viewer_clients_cpu": many["client_cpu"],
        "viewer_clients_runqueue_wait": many["client_wait"],
        "load_average": os.getloadavg()[0],
        "bench_process_peak_rss_mb": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
        ),
    }
    return result


def _options(parser: Any) -> None:
    parser.add_argument("--workers", type=int, default=1, help="the hub's event readers")
    parser.add_argument("--seconds", type=float, default=0, help="viewers' window (10; quick 3)")
    parser.add_argument("--rounds", type=int, default=3, help="bare/hub pairs (ratio: median)")
    parser.add_argument(
        "--viewers", type=int, default=0, help="WebSocket viewers (default 1,000; quick 100)"
    )
    parser.add_argument("--per-process", type=int, default=2_500, help="viewers per client process")
    parser.add_argument(
        "--rate", type=float, default=10.0, help="state changes published per second"
    )
    parser.add_argument(
        "--viewers-only",
        action="store_true",
        help="skip the hub; ratio = viewers p99 ÷ one viewer's",
    )


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _options)
    emit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
