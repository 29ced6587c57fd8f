"""Events stored per second by one station from >= 1,000 simulated boards, as a ratio to the
messages per second a bare aiomqtt subscriber receives from the same broker in the same run,
and the CPU each spends per message.

Every consumer holds a persistent MQTT session (clean_start false) subscribed to the events;
the events of every board (QoS 1, 10 node accounts of 100 boards each) are published while
they are away, so the broker queues them for each. Then each drains its queue alone: the bare
subscribers decode each message's JSON and count it, the station (SQLite, WAL; ``--db`` for
PostgreSQL) stores them exactly once. Publishing speed (the simulated boards' side) is
therefore not part of any figure. Two bare subscribers: stock ``aiomqtt.Client`` (the issue's
baseline), and the project's own client (``wire_contract.broker.mqtt_client``: it reads a burst
of packets a turn of the loop where aiomqtt reads one, issue 30), the stricter bar. CPU is this
process's (user + system, every thread: the station's writer thread included) over the drain.

``--profile N`` runs the station's drain under cProfile (the intake -> writer path is on the
event loop's thread) and prints its top N functions by own time (tottime) to stderr; the
profiler's overhead lowers the stored rate, so read that run's ratio as profiled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import aiomqtt
from _common import emit, parse_args
from _station_bench import (
    WATCHER,
    WATCHER_2,
    client,
    event,
    start_broker,
    station_config,
    stop_broker,
)
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from wire_contract.broker import NODELAY

EVENTS = "qz/v1/bench/board/+/event"


def persistent(broker: Any, *, stock: bool = False) -> Any:
    """A watcher's persistent session (not the station's account: the broker makes the client id
    the account's name, docs/broker.md); ``stock``: a plain ``aiomqtt.Client`` (the second
    watcher's) with the same settings."""
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = 3600
    if not stock:
        return client(broker, WATCHER, clean_start=False, properties=props, identifier=WATCHER)
    return aiomqtt.Client(
        broker.host,
        broker.port,
        username=WATCHER_2,
        password=broker.credentials(WATCHER_2)[1],
        identifier=WATCHER_2,
        protocol=aiomqtt.ProtocolVersion.V5,
        clean_start=False,
        properties=props,
        socket_options=NODELAY,
    )


async def publish_all(broker: Any, nodes: dict[str, list[str]], per_board: int) -> None:
    async def one(node: str, boards: list[str]) -> None:
        async with client(broker, node, max_inflight_messages=1000) as c:
            for k in range(per_board):
                await asyncio.gather(
                    *(
                        c.publish(f"qz/v1/bench/board/{b}/event", event(b, node, k + 1), qos=1)
                        for b in boards
                    )
                )

    await asyncio.gather(*(one(n, bs) for n, bs in nodes.items()))


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def drain_bare(broker: Any, total: int, *, stock: bool) -> tuple[float, float]:
    """Messages a second, and CPU µs a message, of a bare subscriber draining its queue."""
    async with persistent(broker, stock=stock) as sub:
        start, cpu = time.perf_counter(), cpu_s()
        got = 0
        async for message in sub.messages:
            json.loads(message.payload)  # type: ignore[arg-type]
            got += 1
            if got >= total:
                break
        return total / (time.perf_counter() - start), (cpu_s() - cpu) / total * 1e6


async def drain_station(config: Any, total: int, profile: int = 0) -> tuple[float, float]:
    from venue_station.domain.station import Station

    if profile:
        import cProfile
        import pstats
        import sys

        prof = cProfile.Profile()
        prof.enable()
        try:
            return await drain_station(config, total)
        finally:
            prof.disable()
            stats = pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime")
            print(
                f"cProfile of the station's drain, {total} events, top {profile}:", file=sys.stderr
            )
            stats.print_stats(profile)
            print("... the station's own functions by cumulative time:", file=sys.stderr)
            stats.sort_stats("cumulative").print_stats("venue_station", profile)

    station = Station(config)
    starting = asyncio.create_task(station.start())
    while station.collector is None:  # noqa: ASYNC110 (polling another object)
        await asyncio.sleep(0.001)
    await station.collector.connected.wait()
    start, cpu = time.perf_counter(), cpu_s()
    try:
        while station.metrics.events_stored < total:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        elapsed, used = time.perf_counter() - start, cpu_s() - cpu
    finally:
        await starting
        await station.stop()
    return total / elapsed, used / total * 1e6


async def main() -> None:
    args = parse_args(
        (__doc__ or "").splitlines()[0],
        extra=lambda p: (
            p.add_argument("--boards", type=int, default=1000),
            p.add_argument("--profile", type=int, default=0, help="cProfile: print the top N"),
            p.add_argument(
                "--db",
                default=None,
                help="the station's database URL (an empty PostgreSQL database); default SQLite",
            ),
        ),
    )
    per_board = 8 if args.quick else 40
    total = args.boards * per_board
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("mqtt").setLevel(logging.ERROR)
    broker, directory, nodes = start_broker(args.boards)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            from venue_station.domain.station import Station

            extra = {"database_url": args.db} if args.db else {}
            config = station_config(broker, Path(tmp), rebirth_grace_ms=600_000, **extra)
            for stock in (True, False):  # create every session, then go away
                async with persistent(broker, stock=stock) as sub:
                    await sub.subscribe(EVENTS, qos=1)
            first = Station(config)
            await first.start()
            await first.stop()
            t0 = time.perf_counter()
            await publish_all(broker, nodes, per_board)
            published = total / (time.perf_counter() - t0)
            stock, stock_cpu = await drain_bare(broker, total, stock=True)
            own, own_cpu = await drain_bare(broker, total, stock=False)
            stored, stored_cpu = await drain_station(config, total, args.profile)
    finally:
        stop_broker(broker, directory)
    emit(
        {
            "benchmark": "ingest",
            "db": "postgresql" if args.db else "sqlite",
            "boards": args.boards,
            "events": total,
            "published_per_s": round(published),
            "bare_subscriber_msgs_per_s": round(stock),
            "bare_cpu_us_per_msg": round(stock_cpu, 1),
            "own_client_msgs_per_s": round(own),
            "own_client_cpu_us_per_msg": round(own_cpu, 1),
            "station_stored_per_s": round(stored),
            "station_cpu_us_per_event": round(stored_cpu, 1),
            "ratio": round(stored / stock, 3),
            "ratio_own_client": round(stored / own, 3),
            "cpu_ratio": round(stored_cpu / stock_cpu, 2),
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
