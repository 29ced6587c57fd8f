"""RSS and CPU time per minute of one node process running 4 boards in mid-game.

A private Mosquitto, one ``qizhong node`` process with 4 simulated boards playing (random
moves, a mean of 20 s per move as in a 30-minute game), games set and started through the
broker as the station would. After a warm-up we sample the process's RSS and CPU time from
/proc over the measuring window. Baseline in the same run: a bare Python process that only runs
an asyncio timer ten times a second (what a clock display refresh costs at the least), whose
CPU per minute and RSS are measured the same way. A Pi Zero 2 W has 512 MB; the aim is < 80 MB
and < 1 % of a core.

``--emulated aarch64|armv7l``: the same, inside the pi-check's cached Debian bookworm root of
that CPU (qizhong.deploy.piroot; built first if needed) under proot + qemu-user-static: the
bundle for that CPU is built (PyPI needed) and installed into a venv there with
``pip --no-index``, and the node and the bare timer both run emulated, so the emulation slows
both alike and the ratios stand. Each process is measured with its proot tracer and qemu (the
whole process tree). CPU per event counts the board events seen on the broker in the window.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Callable
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


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants (proot, qemu and the emulated process under it)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _sum(fn: Callable[[int], float], pids: list[int]) -> float:
    total = 0.0
    for p in pids:
        try:
            total += fn(p)
        except OSError:
            pass  # exited between the listing and the read
    return total


def measure(pid: int, window_s: float) -> dict[str, float]:
    pids = tree(pid)
    start_cpu, start = _sum(cpu_s, pids), time.monotonic()
    peak = _sum(rss_mb, pids)
    while time.monotonic() - start < window_s:
        time.sleep(0.5)
        peak = max(peak, _sum(rss_mb, pids))
    used = _sum(cpu_s, pids) - start_cpu
    elapsed = time.monotonic() - start
    return {
        "cpu_s_per_min": used * 60 / elapsed,
        "core_percent": 100 * used / elapsed,
        "rss_mb": _sum(rss_mb, pids),
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


async def start_games(broker: MosquittoProcess, online_s: float = 20) -> int:
    """Set and start a game on every board as the station would; returns boards online.

    Each command is repeated until its reply comes: a slow (emulated) node may say it is
    online a moment before its command subscription holds."""
    user, password = broker.credentials("station")
    settings = BrokerSettings(
        url=f"mqtt://{broker.host}:{broker.port}", username=user, password=password
    )
    async with mqtt_client(settings, identifier="bench-station") as client:
        await client.subscribe("qz/v1/bench/board/+/status", qos=1)
        await client.subscribe("qz/v1/bench/board/+/reply", qos=1)
        online: set[str] = set()
        replied: set[str] = set()
        messages = aiter(client.messages)
        async with asyncio.timeout(online_s):
            while not online >= set(BOARDS):
                message = await anext(messages)
                status = str(message.topic).endswith("/status")
                if status and json.loads(message.payload)["state"] == "online":
                    online.add(str(message.topic).split("/")[4])
        for board in BOARDS:
            for cmd, args in (("set_game", {"game": f"g{board}", "tc": "30m+5s"}), ("start", {})):
                body = {"txn": uuid.uuid4().hex, "cmd": cmd, "args": args}
                topic = f"qz/v1/bench/board/{board}/cmd"
                for _attempt in range(10):
                    await client.publish(topic, json.dumps(body), qos=1)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(online_s / 10):
                            while body["txn"] not in replied:
                                message = await anext(messages)
                                if str(message.topic).endswith("/reply"):
                                    replied.add(json.loads(message.payload).get("txn", ""))
                    if body["txn"] in replied:
                        break
                else:
                    sys.exit(f"board {board}: no reply to {cmd}")
    return len(online)


async def count_events(broker: MosquittoProcess, seconds: float) -> int:
    """Board events seen on the broker during ``seconds`` (the CPU-per-event denominator)."""
    user, password = broker.credentials("station")
    seen = 0
    settings = BrokerSettings(
        url=f"mqtt://{broker.host}:{broker.port}", username=user, password=password
    )
    async with mqtt_client(settings, identifier="bench-counter") as client:
        await client.subscribe("qz/v1/bench/board/+/event", qos=1)
        try:
            async with asyncio.timeout(seconds):
                async for _message in client.messages:
                    seen += 1
        except TimeoutError:
            pass
    return seen


def emulated_commands(machine: str, work: Path, toml: Path) -> tuple[list[str], list[str]]:
    """The node and the bare timer inside ``machine``'s root, from a venv installed there
    with the bundle (pip --no-index), as the playbook does."""
    from qizhong.deploy.bundle import REQUIREMENTS, build_bundle
    from qizhong.deploy.piroot import ensure_root, root_env

    root = ensure_root(machine)
    report = build_bundle(work / "bundle", targets=(machine,), host=False)
    venv = work / "venv"
    # The machine's exact pins, as the playbook installs them (qizhong/deploy/bundle.py).
    requirements = work / "requirements.txt"
    with tarfile.open(report.dir / report.archives[machine]) as tar:
        member = tar.extractfile(REQUIREMENTS)
        assert member is not None
        requirements.write_bytes(member.read())
    env = root_env({"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"})
    for argv in (
        ["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
        [str(venv / "bin/pip"), "install", "--quiet", "--no-index", "--no-deps",
         "--find-links", str(report.dir), "-r", str(requirements)],
    ):  # fmt: skip
        proc = root.run(argv, binds=[work], env=env, timeout=1800)
        if proc.returncode != 0:
            sys.exit(f"{machine}: {' '.join(argv[:3])} failed:\n{proc.stderr[-3000:]}")
    node = root.command(
        [str(venv / "bin/python"), "-m", "qizhong", "node", "--config", str(toml),
         "--log-level", "WARNING"], binds=[work],
    )  # fmt: skip
    return node, root.command(["/usr/bin/python3", "-c", BARE], binds=[work])


def main() -> None:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--emulated", choices=["aarch64", "armv7l"],
            help="run the node and the baseline inside that CPU's emulated bookworm root",
        )  # fmt: skip

    args = parse_args(__doc__.splitlines()[0], extra)
    window = 20.0 if args.quick else 120.0
    warmup = 3.0 if args.quick else 10.0
    if args.emulated:
        warmup *= 3  # the emulated node's first moves still run cold code
    work = Path(tempfile.mkdtemp(prefix="qz-bench-node-"))
    os.chmod(work, 0o755)  # a root-started mosquitto drops to the mosquitto user
    broker = MosquittoProcess.from_roster(
        Roster.build(venue="bench", nodes={"pi-01": BOARDS}), work / "broker"
    )
    toml = work / "node.toml"
    toml.write_text(node_toml(broker, work / "data"))
    if args.emulated:
        node_cmd, bare_cmd = emulated_commands(args.emulated, work, toml)
        env: dict[str, str] | None = None
        from qizhong.deploy.piroot import root_env

        env = root_env()
    else:
        node_cmd = [sys.executable, "-m", "qizhong", "node", "--config", str(toml),
                    "--log-level", "WARNING"]  # fmt: skip
        bare_cmd = [sys.executable, "-c", BARE]
        env = None
    node = subprocess.Popen(node_cmd, env=env, start_new_session=True)
    bare = subprocess.Popen(bare_cmd, env=env, start_new_session=True)
    try:
        asyncio.run(start_games(broker, 240 if args.emulated else 20))
        time.sleep(warmup)
        # Measure both at once, so they share the machine's state.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(3) as pool:
            events_f = pool.submit(lambda: asyncio.run(count_events(broker, window)))
            node_f = pool.submit(measure, node.pid, window)
            bare_f = pool.submit(measure, bare.pid, window)
            got, base, events = node_f.result(), bare_f.result(), events_f.result()
    finally:
        for proc in (node, bare):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(60)
        broker.close()
        shutil.rmtree(work, ignore_errors=True)
    node_cpu_s = got["cpu_s_per_min"] * window / 60
    emit(
        {
            "benchmark": "node_footprint",
            "machine": args.emulated or os.uname().machine,
            "emulated": bool(args.emulated),
            "boards": len(BOARDS),
            "window_s": window,
            "events_seen": events,
            "node_cpu_ms_per_event": round(1000 * node_cpu_s / max(events, 1), 1),
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
