"""Shared set-up of the benchmarks that need a broker: a private Mosquitto, clients, and the
raw QoS 1 round trip that most of them take as their same-run baseline."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiomqtt

from broker_config import MosquittoProcess, Roster
from wire_contract.broker import BrokerSettings, mqtt_client

VENUE = "bench"
BOARDS_PER_NODE = 100


WATCHER = "watch"
WATCHER_2 = "watch2"  # a second reader (ingest.py's two bare subscribers: a session each)


def start_broker(boards: int) -> tuple[MosquittoProcess, Path, dict[str, list[str]]]:
    nodes: dict[str, list[str]] = {}
    for i in range(boards):
        nodes.setdefault(f"node-{i // BOARDS_PER_NODE}", []).append(str(i + 1))
    roster = Roster.build(
        venue=VENUE,
        nodes=nodes,
        # Readers of everything beside the station (one client id per account).
        arbiters=[WATCHER, WATCHER_2],
        broker={"max_queued_messages": 2_000_000, "max_inflight_messages": 1000},
    )
    directory = Path(tempfile.mkdtemp(prefix="qz-bench-"))
    return MosquittoProcess.from_roster(roster, directory), directory, nodes


def stop_broker(broker: MosquittoProcess, directory: Path) -> None:
    broker.close()
    shutil.rmtree(directory, ignore_errors=True)


@contextlib.contextmanager
def private_broker(roster: Roster, *, prefix: str = "qz-bench-") -> Iterator[MosquittoProcess]:
    """A Mosquitto from ``broker-config`` output for ``roster``, on free ports, removed after."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(directory, 0o755)  # a root-started mosquitto drops to the mosquitto user
    broker = MosquittoProcess.from_roster(roster, directory / "broker")
    try:
        yield broker
    finally:
        broker.close()
        shutil.rmtree(directory, ignore_errors=True)


async def qos1_round_trips(
    broker: MosquittoProcess,
    count: int,
    *,
    topic: str,
    publisher: str = "station",
    subscriber: str = "station",
    payload: Callable[[int], bytes] = lambda i: str(i).encode(),
    gap_s: float = 0.0,
) -> list[float]:
    """The raw broker round trip in ms: QoS 1 publish as ``publisher`` until ``subscriber``
    has the message. ``topic`` must be one both accounts' ACL allow and nothing else uses.
    ``gap_s``: the machine idle this long before each (back to back by default)."""
    out: list[float] = []
    async with contextlib.AsyncExitStack() as stack:
        pub = await stack.enter_async_context(client(broker, publisher))
        # One connection per account: the same account publishes and reads on one client.
        sub = (
            pub
            if subscriber == publisher
            else await stack.enter_async_context(client(broker, subscriber))
        )
        await sub.subscribe(topic, qos=1)
        messages = sub.messages
        for i in range(count):
            if gap_s:
                await asyncio.sleep(gap_s)
            t0 = time.perf_counter()
            await pub.publish(topic, payload(i), qos=1)
            await anext(messages)
            out.append((time.perf_counter() - t0) * 1000)
    return out


def client(broker: MosquittoProcess, username: str, **kw: Any) -> aiomqtt.Client:
    """A client of ``username``; ``node.board`` is a board's own account (the node's password).

    The broker makes a connection's client id its username (docs/broker.md "Identity"): two
    clients of one account at once take each other's connection over."""
    password = broker.credentials(username.split(".")[0])[1]
    kw.setdefault("identifier", f"{username}-{uuid.uuid4().hex[:8]}")
    return mqtt_client(settings(broker, username, password), timeout=30, **kw)


def settings(broker: MosquittoProcess, username: str, password: str | None) -> BrokerSettings:
    """The contract's broker settings for one account of a benchmark's broker."""
    return BrokerSettings(
        url=f"mqtt://{broker.host}:{broker.port}", username=username, password=password
    )


def event(board: str, node: str, seq: int) -> bytes:
    now = time.time_ns() // 1_000_000
    return json.dumps(
        {
            "v": 1,
            "board": board,
            "node": node,
            "game": f"r1-b{board}",
            "session": 1,
            "seq": seq,
            "ts": now,
            "type": "move",
            "replay": False,
            "clock": {"red_ms": 1_000_000, "black_ms": 1_000_000, "running": "black"},
            "data": {"side": "red", "used_ms": 1234, "move": seq},
        }
    ).encode()


def station_config(broker: MosquittoProcess, data_dir: Path, **kw: Any) -> Any:
    from venue_station.config import StationConfig

    user, password = broker.credentials("station")
    return StationConfig.from_dict(
        {
            "venue": VENUE,
            "data_dir": str(data_dir),
            "broker": {
                "url": f"mqtt://{broker.host}:{broker.port}",
                "username": user,
                "password": password,
                "client_id": f"bench-{uuid.uuid4().hex[:8]}",
            },
            "http": {"host": "127.0.0.1", "port": 0},
            **kw,
        }
    )


if __name__ == "__main__":
    # `make bench` runs every benchmarks/*.py; this one is a helper module, so say so and succeed.
    print("benchmarks/_station_bench.py is a helper of the station benchmarks, not one")
