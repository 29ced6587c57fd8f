"""Federation hub and public viewers (issue 18), each as a ratio to a baseline of the same run.

1. Hub throughput: N events in the federation's JetStream stream; a bare pull consumer (fetch,
   ack, nothing else) reads them all, then the hub (validate, PostgreSQL commit, ack) does:
   ``ratio`` = hub events/s ÷ bare events/s (aim ≥ 0.5).
2. Venue publish → hub stored: events published on a venue Mosquitto, bridged to NATS over MQTT,
   stored by the hub; p50/p99 of (stored_ms − ts), against the bridge alone (publish → a core
   NATS subscriber at the centre).
3. Viewers: V WebSocket viewers in the PUBLIC account, each subscribed to every board's state,
   while a venue publishes state changes; p99 of (received − ts) against one viewer alone (the
   engine's fan-out measured alone). The viewers are nats-py clients in this one Python process:
   past a few hundred, this process, not nats-server, is what saturates (see docs/federation.md).

    python benchmarks/federation.py           # 30,000 events, 2,000 e2e, 1,000 viewers
    python benchmarks/federation.py --quick   # 3,000 events, 300 e2e, 100 viewers
"""

from __future__ import annotations

import asyncio
import json
import resource
import shutil
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import nats
from _common import emit, parse_args, percentiles

from broker_config import MosquittoProcess, Roster
from federation_hub.centre_runner import HUB_USER, NatsCentre
from federation_hub.consumer import Hub
from federation_hub.store import HubStore
from federation_hub.streams import StreamPlan, ensure_streams

PG_ADMIN = {"host": "127.0.0.1", "port": 5432, "database": "test", "user": "postgres"}
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


async def bare_rate(nc: Any, n: int) -> float:
    js = nc.jetstream()
    from federation_hub.streams import consumer_config

    await js.add_consumer("QZ_FED_EVENTS", consumer_config("bench-bare", PLAN))
    sub = await js.pull_subscribe_bind("bench-bare", "QZ_FED_EVENTS")
    t0, got = time.perf_counter(), 0
    while got < n:
        for m in await sub.fetch(200, timeout=5):
            await m.ack()
            got += 1
    return n / (time.perf_counter() - t0)


async def hub_rate(hub: Hub, n: int) -> float:
    task = asyncio.create_task(hub.run())
    await hub.ready.wait()  # connected and bound, as the bare consumer is before its clock starts
    t0 = time.perf_counter()
    while hub.counters.stored < n:  # noqa: ASYNC110 - a counter of the hub's task
        await asyncio.sleep(0.01)
    rate = n / (time.perf_counter() - t0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return rate


async def e2e(centre: NatsCentre, store: HubStore, hub: Hub, n: int) -> dict[str, Any]:
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
                import sqlalchemy as sa

                from federation_hub.store import events

                rows = (await conn.execute(
                    sa.select(events.c.stored_ms - events.c.ts)
                    .where(events.c.venue == "vb", events.c.seq >= 2)
                )).all()  # fmt: skip
            if len(rows) >= n:
                break
            await asyncio.sleep(0.5)
        hub_lat = [float(r[0]) for r in rows]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await nc.close()
        broker.close()
        shutil.rmtree(directory, ignore_errors=True)
    return {"bridge": percentiles(bridge_lat), "hub": percentiles(hub_lat), "n": len(hub_lat)}


async def viewers(centre: NatsCentre, count: int, seconds: float) -> dict[str, float]:
    ws = f"ws://127.0.0.1:{centre.nodes[0].ws_port}"
    lat: list[float] = []

    async def on_msg(msg: Any) -> None:
        lat.append(now_ms() - json.loads(msg.data)["ts"])

    clients = []
    for _ in range(count):
        c = await nats.connect(ws, max_reconnect_attempts=0)
        await c.subscribe("fed.qz.v1.*.board.*.state", cb=on_msg)
        await c.flush()
        clients.append(c)
    venue = await nats.connect(centre.urls, user="venue-va", password="pw-va")
    try:
        t_end = time.monotonic() + seconds
        seq = 0
        while time.monotonic() < t_end:
            seq += 1
            board = seq % 20 + 1
            body = {"board": str(board), "seq": seq, "ts": now_ms()}
            await venue.publish(f"fed.qz.v1.va.board.{board}.state", json.dumps(body).encode())
            await asyncio.sleep(0.1)  # 10 state changes/s across the venue
        await venue.flush()
        await asyncio.sleep(2)
        expected = seq * count
    finally:
        await venue.close()
        for c in clients:
            await c.close()
    p = percentiles(lat)
    p["delivered"] = len(lat) / expected
    return p


def server_mem_mb(centre: NatsCentre) -> float:
    url = f"http://127.0.0.1:{centre.nodes[0].http_port}/varz"
    with urllib.request.urlopen(url, timeout=5) as r:
        return float(json.loads(r.read())["mem"]) / 1e6


async def main_async(quick: bool, workers: int = 1) -> dict[str, Any]:
    n_events = 3_000 if quick else 30_000
    n_e2e = 300 if quick else 2_000
    n_view = 100 if quick else 1_000
    centre = NatsCentre.start(
        nodes=1, venues={"va": ("venue-va", "pw-va"), "vb": ("venue-vb", "pw-vb")}
    )
    db = await new_db()
    store = await HubStore.open(f"postgresql://postgres@127.0.0.1:5432/{db}")
    try:
        nc = await nats.connect(centre.urls, user=HUB_USER[0], password=HUB_USER[1])
        await ensure_streams(nc.jetstream(), PLAN)
        await fill_stream(nc, n_events)
        bare = await bare_rate(nc, n_events)
        await nc.close()

        def make_hub() -> Hub:
            return Hub(servers=centre.urls, user=HUB_USER[0], password=HUB_USER[1],
                       store=store, plan=PLAN, batch=500, workers=workers)  # fmt: skip

        hub_r = await hub_rate(make_hub(), n_events)
        lat = await e2e(centre, store, make_hub(), n_e2e)
        one = await viewers(centre, 1, 5 if quick else 10)
        many = await viewers(centre, n_view, 5 if quick else 10)
        mem = server_mem_mb(centre)
    finally:
        await store.close()
        await drop_db(db)
        centre.close()
    return {
        "ratio": round(hub_r / bare, 3),
        "hub_workers": workers,
        "bare_events_per_s": round(bare),
        "hub_events_per_s": round(hub_r),
        "events": n_events,
        "e2e_events": lat["n"],
        "bridge_p50_ms": lat["bridge"]["p50"],
        "bridge_p99_ms": lat["bridge"]["p99"],
        "hub_stored_p50_ms": lat["hub"]["p50"],
        "hub_stored_p99_ms": lat["hub"]["p99"],
        "e2e_p99_ratio": round(lat["hub"]["p99"] / max(1.0, lat["bridge"]["p99"]), 2),
        "viewer_1_p99_ms": one["p99"],
        "viewers": n_view,
        "viewers_p50_ms": many["p50"],
        "viewers_p99_ms": many["p99"],
        "viewers_delivered": round(many["delivered"], 4),
        "viewers_p99_ratio": round(many["p99"] / max(1.0, one["p99"]), 2),
        "nats_server_mem_mb": round(mem, 1),
        "bench_process_peak_rss_mb": round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
        ),
    }


def _options(parser: Any) -> None:
    parser.add_argument("--workers", type=int, default=1, help="the hub's event readers")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _options)
    emit(asyncio.run(main_async(args.quick, args.workers)))


if __name__ == "__main__":
    main()
