"""RSS and CPU time per minute of one node process running 4 boards in mid-game.

A private Mosquitto, one ``qizhong node`` process with 4 simulated boards playing (random
moves, a mean of 20 s per move as in a 30-minute game), games set and started through the
broker as the station would. After a warm-up we sample the process's RSS and CPU time from
/proc over the measuring window. Baseline in the same run: a bare Python process that only runs
an asyncio timer ten times a second (what a clock display refresh costs at the least), whose
CPU per minute and RSS are measured the same way. A Pi Zero 2 W has 512 MB; the aim is < 80 MB
and < 1 % of a core.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _common import emit, parse_args

from broker_config import MosquittoProcess, Roster
from wire_contract.broker import BrokerSettings, mqtt_client

BOARDS = ["1", "2", "3", "4"]
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

BARE = """
import asyncio
async def main():
    while True:
        await asyncio.sleep(0.1)
asyncio.run(main())
"""


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mb(pid: int) -> float:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE / 2**20


def measure(pid: int, window_s: float) -> dict[str, float]:
    start_cpu, start = cpu_s(pid), time.monotonic()
    peak = rss_mb(pid)
    while time.monotonic() - start < window_s:
        time.sleep(0.5)
        peak = max(peak, rss_mb(pid))
    used = cpu_s(pid) - start_cpu
    elapsed = time.monotonic() - start
    return {
        "cpu_s_per_min": used * 60 / elapsed,
        "core_percent": 100 * used / elapsed,
        "rss_mb": rss_mb(pid),
        "rss_peak_mb": peak,
    }


def node_toml(broker: MosquittoProcess, data: Path) -> str:
    user, password = broker.credentials("pi-01")
    lines = [
        'venue = "bench"',
        'node = "pi-01"',
        f'data_dir = "{data}"',
        "[broker]",
        f'url = "{broker.url}"',
        f'username = "{user}"',
        f'password = "{password}"',
    ]
    for board in BOARDS:
        lines += [
            "[[board]]",
            f'id = "{board}"',
            'face = "simulated"',
            "[board.simulated]",
            'mode = "random"',
            "mean_move_s = 20.0",
            f"seed = {board}",
        ]
    return "\n".join(lines) + "\n"


async def start_games(broker: MosquittoProcess) -> int:
    """Set and start a game on every board as the station would; returns moves seen."""
    user, password = broker.credentials("station")
    settings = BrokerSettings(
        url=f"mqtt://{broker.host}:{broker.port}", username=user, password=password
    )
    async with mqtt_client(settings, identifier="bench-station") as client:
        await client.subscribe("qz/v1/bench/board/+/status", qos=1)
        online: set[str] = set()
        async with asyncio.timeout(20):
            async for message in client.messages:
                if json.loads(message.payload)["state"] == "online":
                    online.add(str(message.topic).split("/")[4])
                if online >= set(BOARDS):
                    break
        for board in BOARDS:
            for cmd, args in (("set_game", {"game": f"g{board}", "tc": "30m+5s"}), ("start", {})):
                body = {"txn": uuid.uuid4().hex, "cmd": cmd, "args": args}
                topic = f"qz/v1/bench/board/{board}/cmd"
                await client.publish(topic, json.dumps(body), qos=1)
    return len(online)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    window = 20.0 if args.quick else 120.0
    warmup = 3.0 if args.quick else 10.0
    work = Path(tempfile.mkdtemp(prefix="qz-bench-node-"))
    os.chmod(work, 0o755)  # a root-started mosquitto drops to the mosquitto user
    broker = MosquittoProcess.from_roster(
        Roster.build(venue="bench", nodes={"pi-01": BOARDS}), work / "broker"
    )
    toml = work / "node.toml"
    toml.write_text(node_toml(broker, work / "data"))
    node = subprocess.Popen(
        [sys.executable, "-m", "qizhong", "node", "--config", str(toml), "--log-level", "WARNING"]
    )
    bare = subprocess.Popen([sys.executable, "-c", BARE])
    try:
        asyncio.run(start_games(broker))
        time.sleep(warmup)
        # Measure both at once, so they share the machine's state.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            node_f = pool.submit(measure, node.pid, window)
            bare_f = pool.submit(measure, bare.pid, window)
            got, base = node_f.result(), bare_f.result()
        with sqlite3.connect(work / "data" / "journal.sqlite3") as db:
            events = db.execute("SELECT count(*) FROM outbox").fetchone()[0]
    finally:
        for proc in (node, bare):
            proc.terminate()
            proc.wait(10)
        broker.close()
        shutil.rmtree(work, ignore_errors=True)
    emit(
        {
            "benchmark": "node_footprint",
            "boards": len(BOARDS),
            "window_s": window,
            "events_journaled": events,
            "node_rss_mb": round(got["rss_mb"], 1),
            "node_rss_peak_mb": round(got["rss_peak_mb"], 1),
            "node_cpu_s_per_min": round(got["cpu_s_per_min"], 3),
            "node_core_percent": round(got["core_percent"], 3),
            "bare_rss_mb": round(base["rss_mb"], 1),
            "bare_cpu_s_per_min": round(base["cpu_s_per_min"], 3),
            "ratio": round(got["cpu_s_per_min"] / max(base["cpu_s_per_min"], 1e-3), 2),
            "rss_ratio": round(got["rss_mb"] / max(base["rss_mb"], 1e-3), 2),
        }
    )


if __name__ == "__main__":
    main()
