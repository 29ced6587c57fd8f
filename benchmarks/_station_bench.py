"""Shared set-up of the station benchmarks: a private broker for N simulated boards."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import aiomqtt

from broker_config import MosquittoProcess, Roster

VENUE = "bench"
BOARDS_PER_NODE = 100


def start_broker(boards: int) -> tuple[MosquittoProcess, Path, dict[str, list[str]]]:
    nodes: dict[str, list[str]] = {}
    for i in range(boards):
        nodes.setdefault(f"node-{i // BOARDS_PER_NODE}", []).append(str(i + 1))
    roster = Roster.build(
        venue=VENUE,
        nodes=nodes,
        broker={"max_queued_messages": 2_000_000, "max_inflight_messages": 1000},
    )
    directory = Path(tempfile.mkdtemp(prefix="qz-bench-"))
    return MosquittoProcess.from_roster(roster, directory), directory, nodes


def stop_broker(broker: MosquittoProcess, directory: Path) -> None:
    broker.close()
    shutil.rmtree(directory, ignore_errors=True)


def client(broker: MosquittoProcess, username: str, **kw: Any) -> aiomqtt.Client:
    password = broker.credentials(username)[1]
    kw.setdefault("identifier", f"{username}-{uuid.uuid4().hex[:8]}")
    return aiomqtt.Client(
        broker.host,
        broker.port,
        username=username,
        password=password,
        protocol=aiomqtt.ProtocolVersion.V5,
        timeout=30,
        **kw,
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
