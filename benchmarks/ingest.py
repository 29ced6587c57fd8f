"""Events stored per second by one station from >= 1,000 simulated boards, as a ratio to the
messages per second a bare aiomqtt subscriber receives from the same broker in the same run.

Both consumers hold a persistent MQTT session (clean_start false) subscribed to the events; the
events of every board (QoS 1, 10 node accounts of 100 boards each) are published while both
are away, so the broker queues them for each. Then each drains its queue alone: the bare
subscriber counts messages, the station (SQLite, WAL) stores them exactly once. Publishing
speed (the simulated boards' side) is therefore not part of either figure.

``--profile N`` runs the station's drain under cProfile (the intake -> writer path is on the
event loop's thread) and prints its top N functions by own time (tottime) to stderr; the
profiler's overhead lowers the stored rate, so read that run's ratio as profiled.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, parse_args
from _station_bench import WATCHER, client, event, start_broker, station_config, stop_broker
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

EVENTS = "qz/v1/bench/board/+/event"


def persistent(broker: Any) -> Any:
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = 3600
    # The watcher account, not the station's: one client id per account (docs/broker.md).
    return client(broker, WATCHER, clean_start=False, properties=props)


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


async def drain_bare(broker: Any, total: int) -> float:
    async with persistent(broker) as sub:
        start = time.perf_counter()
        got = 0
        async for _ in sub.messages:
            got += 1
            if got >= total:
                break
        return total / (time.perf_counter() - start)


async def drain_station(config: Any, total: int, profile: int = 0) -> float:
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
    start = time.perf_counter()
    try:
        while station.metrics.events_stored < total:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        elapsed = time.perf_counter() - start
    finally:
        await starting
        await station.stop()
    return total / elapsed


async def main() -> None:
    args = parse_args(
        (__doc__ or "").splitlines()[0],
        extra=lambda p: (
            p.add_argument("--boards", type=int, default=1000),
            p.add_argument("--profile", type=int, default=0, help="cProfile: print the top N"),
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

            config = station_config(broker, Path(tmp), rebirth_grace_ms=600_000)
            async with persistent(broker) as sub:  # create both sessions, then go away
                await sub.subscribe(EVENTS, qos=1)
            first = Station(config)
            await first.start()
            await first.stop()
            t0 = time.perf_counter()
            await publish_all(broker, nodes, per_board)
            published = total / (time.perf_counter() - t0)
            baseline = await drain_bare(broker, total)
            stored = await drain_station(config, total, args.profile)
    finally:
        stop_broker(broker, directory)
    emit(
        {
            "benchmark": "ingest",
            "boards": args.boards,
            "events": total,
            "published_per_s": round(published),
            "bare_subscriber_msgs_per_s": round(baseline),
            "station_stored_per_s": round(stored),
            "ratio": round(stored / baseline, 3),
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
