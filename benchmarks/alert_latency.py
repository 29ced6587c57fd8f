"""From the exact flag instant on a board to the flag alert in the arbiter's page (Playwright).

A private Mosquitto, the station (collector + HTTP + SSE, SQLite) in this process, real nodes
(``qizhong node``, one process each as on its own Pi, 10 boards each, simulated idle faces) and
Debian's chromium logged in to ``/arbiter``. Each round gives every board a game with a
staggered short time for red and starts them all with one venue ``start``: every board runs,
and each one flags. The exact flag instant is the ``started`` event's ``ts`` plus red's time at
the start (the node's own stamp); the page records ``Date.now()`` when the alert's row is
inserted in the DOM (a MutationObserver; the next frame paints it). Both are wall clocks of
this one machine.

Baseline in the same run: the raw broker QoS 1 publish -> receive round trip (one client, Nagle
off). Ratio: p50 flag -> alert over p50 broker round trip.

Full run: 100 boards, 2 rounds (200 flags), each round's flags over 10 s (10 flags/s, far
more than a real round). ``--quick``: 20 boards, 2 rounds (40 flags) over 3 s each.
``--spread S`` sets the span (``--spread 1.5``: 67 flags/s, a stress test).

Stages per flag (p50/p99): ``node_emit`` flag instant -> the node's flag event; ``node_to_broker``
-> the broker hands it on (seen by an independent ``mosquitto_sub``); ``broker_to_station`` ->
the station's collector reads it; ``alert_decided`` -> the alert is decided and sent on the SSE
stream; ``page_shown`` -> the row is in the page. ``station_loop_lag``: how late the station's
event loop wakes a 10 ms sleeper. ``--trace`` prints every flag's stages by its instant.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, parse_args, percentiles
from _station_bench import WATCHER, qos1_round_trips

from broker_config import MosquittoProcess, Roster
from venue_station.auth import hash_password
from venue_station.config import StationConfig
from venue_station.domain.station import Station
from venue_station.web.web_server import StationWithWeb

VENUE = "bench"
SPREAD_MS = 10_000  # one round's flags fall over this span (--spread)
TRACE = False  # --trace: one line per flag, its stages, by its instant in the round
PASSWORD = "bench-arbiter-pw"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run",
]  # fmt: skip
OBSERVE = """() => {
  window.__seen = {};
  const list = document.getElementById('alerts');
  new MutationObserver(() => {
    const now = Date.now();
    for (const li of list.querySelectorAll('li[data-kind="flag"]')) {
      const g = li.dataset.game;
      if (g && !(g in window.__seen)) window.__seen[g] = now;
    }
  }).observe(list, {childList: true, subtree: true});
}"""


def node_toml(broker: MosquittoProcess, node: str, boards: list[str], data: Path) -> Path:
    """A node.toml for ``qizhong node``: each node is its own process, as on its own Pi."""
    user, password = broker.credentials(node)
    lines = [
        f'venue = "{VENUE}"',
        f'node = "{node}"',
        f'data_dir = "{data / node}"',
        "[broker]",
        f'url = "{broker.url}"',
        f'username = "{user}"',
        f'password = "{password}"',
    ]
    for b in boards:
        lines += ["[[board]]", f'id = "{b}"', 'face = "simulated"', "[board.simulated]",
                  'mode = "idle"']  # fmt: skip
    path = data / f"{node}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


class Watcher:
    """An independent subscriber (``mosquitto_sub``, its own process): when the broker handed
    each flag event on. It splits "node -> station" into node -> broker and broker -> station."""

    def __init__(self) -> None:
        self.flag_seen_ms: dict[str, float] = {}
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, broker: MosquittoProcess) -> None:
        # An arbiter account: the station's is the station's alone (one client id per account).
        user, password = broker.credentials(WATCHER)
        self.proc = await asyncio.create_subprocess_exec(
            "mosquitto_sub", "-h", broker.host, "-p", str(broker.port), "-u", user, "-P", password,
            "-i", "bench-watcher", "-V", "mqttv5", "-q", "1", "-F", "%U %p",
            "-t", f"qz/v1/{VENUE}/board/+/event", stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        self._task = asyncio.create_task(self._read(), name="watcher")

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        async for line in self.proc.stdout:
            stamp, _, payload = line.decode().partition(" ")
            if '"flag"' not in payload:
                continue
            ev = json.loads(payload)
            if ev.get("type") == "flag" and ev.get("game"):
                self.flag_seen_ms.setdefault(ev["game"], float(stamp) * 1000)

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def loop_lag(samples: list[float], period_s: float = 0.01) -> None:
    """How late this process's event loop wakes a sleeper: time the station cannot react."""
    while True:
        start = time.monotonic()
        await asyncio.sleep(period_s)
        samples.append((time.monotonic() - start - period_s) * 1000)


async def run_round(
    station: Station,
    page: Any,
    boards: list[str],
    round_no: int,
    stages: dict[str, list[float]],
    watcher: Watcher,
) -> list[float]:
    stagger = SPREAD_MS / len(boards)

    async def set_game(i: int, board: str) -> None:
        args = {
            "game": f"g{round_no}-{board}",
            "tc": "30m+5s",
            "red_ms": int(800 + i * stagger),
            "black_ms": 600_000,
        }
        reply = await station.send_command(board, "set_game", args)
        if not reply.ok:
            raise RuntimeError(f"set_game on board {board}: {reply.as_dict()}")

    await asyncio.gather(*(set_game(i, b) for i, b in enumerate(boards)))
    await station.send_command(None, "start", {})
    games = {f"g{round_no}-{b}" for b in boards}
    deadline = time.monotonic() + 30
    seen: dict[str, int] = {}
    while time.monotonic() < deadline:
        seen = {g: t for g, t in (await page.evaluate("window.__seen")).items() if g in games}
        if len(seen) == len(games):
            break
        await asyncio.sleep(0.2)
    assert station.store is not None and station.ingest is not None
    await station.ingest.flush()
    started = await station.store.events(types=["started"], limit=1000, newest_first=True)
    instants = {e["game"]: e["ts"] + e["red_ms"] for e in started if e["game"] in games}
    # Where the time goes: node emits the flag -> broker -> station -> alert decided -> page.
    flags = await station.store.events(types=["flag"], limit=1000, newest_first=True)
    alerts = {a["game"]: a for a in await station.store.alerts(limit=1000) if a["kind"] == "flag"}
    for ev in flags:
        g = ev["game"]
        if g not in games or g not in instants or g not in alerts or g not in seen:
            continue
        stages["node_emit"].append(ev["ts"] - instants[g])
        if g in watcher.flag_seen_ms:
            stages["node_to_broker"].append(watcher.flag_seen_ms[g] - ev["ts"])
            stages["broker_to_station"].append(ev["received_ms"] - watcher.flag_seen_ms[g])
        stages["station_receive"].append(ev["received_ms"] - ev["ts"])
        stages["alert_decided"].append(alerts[g]["updated_ms"] - ev["received_ms"])
        stages["page_shown"].append(seen[g] - alerts[g]["updated_ms"])
        if TRACE:
            b = watcher.flag_seen_ms.get(g, math.nan)
            print(
                f"  trace r{round_no} +{instants[g] - min(instants.values()):5d} ms: "
                f"emit {ev['ts'] - instants[g]:4d} broker {b - ev['ts']:6.0f} "
                f"station {ev['received_ms'] - b:6.0f} "
                f"decided {alerts[g]['updated_ms'] - ev['received_ms']:4d} "
                f"page {seen[g] - alerts[g]['updated_ms']:4d}"
            )
    missing = games - set(seen)
    if missing:
        print(f"  round {round_no}: {len(missing)} flag alert(s) not seen within 30 s")
    return [seen[g] - instants[g] for g in seen if g in instants]


async def main() -> None:
    args = parse_args(
        __doc__.splitlines()[0],
        extra=_extra_args,
    )
    global SPREAD_MS, TRACE
    TRACE = args.trace
    SPREAD_MS = int(1000 * (args.spread or (3 if args.quick else 10)))
    n_boards, rounds = (20, 2) if args.quick else (100, 2)
    boards = [str(b) for b in range(1, n_boards + 1)]
    nodes = {f"n{i:02d}": boards[i : i + 10] for i in range(0, n_boards, 10)}
    work = Path(tempfile.mkdtemp(prefix="qz-bench-alert-"))
    work.chmod(0o755)  # a root-started mosquitto drops to the mosquitto user
    roster = Roster.build(
        venue=VENUE, nodes=nodes, arbiters=[WATCHER], broker={"max_queued_messages": 100_000}
    )
    broker = MosquittoProcess.from_roster(roster, work / "broker")
    latencies: list[float] = []
    stages: dict[str, list[float]] = {
        k: []
        for k in (
            "node_emit",
            "node_to_broker",
            "broker_to_station",
            "station_receive",
            "alert_decided",
            "page_shown",
        )
    }
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        stack.callback(broker.close)
        # no node listens to the board "rtt"
        rtt = percentiles(await qos1_round_trips(broker, 300, topic=f"qz/v1/{VENUE}/board/rtt/cmd"))
        user, password = broker.credentials("station")
        config = StationConfig.from_dict(
            {
                "venue": VENUE,
                "data_dir": str(work / "station"),
                "http": {"host": "127.0.0.1", "port": 0},
                "account": [{"username": "arb", "password_hash": hash_password(PASSWORD)}],
                "broker": {"url": broker.url.replace("tcp", "mqtt"), "username": user,
                           "password": password},
                "command_timeout_s": 10,
            }
        )  # fmt: skip
        station = StationWithWeb(config)
        await station.start()
        stack.push_async_callback(station.stop)
        for node_id, ids in nodes.items():
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "qizhong", "node", "--log-level", "WARNING",
                "--config", str(node_toml(broker, node_id, ids, work)),
            )  # fmt: skip
            stack.push_async_callback(_stop_node, proc)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if sum(1 for v in station.board_views() if v["online"]) >= n_boards:
                break
            await asyncio.sleep(0.1)
        from playwright.async_api import async_playwright

        pw = await stack.enter_async_context(async_playwright())
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.push_async_callback(browser.close)
        page = await browser.new_page(viewport={"width": 1280, "height": 900}, bypass_csp=True)
        await page.goto(station.http_url + "/arbiter?lang=en")
        await page.fill("#username", "arb")
        await page.fill("#password", PASSWORD)
        await page.click("#login-submit")
        await page.wait_for_selector("#station:not([hidden])")
        await page.wait_for_function(
            f"document.querySelectorAll('#boards .card').length >= {n_boards}"
        )
        await page.evaluate(OBSERVE)
        watcher = Watcher()
        await watcher.start(broker)
        stack.push_async_callback(watcher.stop)
        lag: list[float] = []
        lag_task = asyncio.create_task(loop_lag(lag), name="loop-lag")
        stack.callback(lag_task.cancel)
        for r in range(1, rounds + 1):
            latencies += await run_round(station, page, boards, r, stages, watcher)
        stages["station_loop_lag"] = lag
    alert = percentiles(latencies)
    flags = n_boards * rounds
    print(
        f"alert_latency: {len(latencies)}/{flags} flags, {n_boards} boards running"
        + (
            " (--quick: fewer boards and flags than the full run's 100 boards, 200 flags)"
            if args.quick
            else ""
        )
    )
    for name, values in stages.items():
        if values:
            p = percentiles(values)
            print(f"  stage {name:<18} p50 {p['p50']:7.1f} ms  p99 {p['p99']:7.1f} ms")
    emit(
        {
            "benchmark": "alert_latency",
            "quick": args.quick,
            "boards": n_boards,
            "flags_per_s": round(n_boards / (SPREAD_MS / 1000), 1),
            "flags": len(latencies),
            "alert_p50_ms": alert["p50"],
            "alert_p99_ms": alert["p99"],
            "alert_max_ms": alert["max"],
            "broker_rtt_p50_ms": rtt["p50"],
            "broker_rtt_p99_ms": rtt["p99"],
            "ratio": round(alert["p50"] / max(rtt["p50"], 1e-3), 1),
            "ratio_p99": round(alert["p99"] / max(rtt["p99"], 1e-3), 1),
        }
    )


def _extra_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--spread", type=float, help="seconds over which a round's flags fall (default 10, quick 3)"
    )
    parser.add_argument(
        "--trace", action="store_true", help="print every flag's stages, by its instant"
    )


async def _stop_node(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()


if __name__ == "__main__":
    asyncio.run(main())
