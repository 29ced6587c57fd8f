"""From the exact flag instant on a board to the flag alert in the arbiter's page (Playwright).

A private Mosquitto, the station (collector + HTTP + SSE, SQLite), real nodes in this process
(10 boards each, simulated idle faces: nobody presses) and Debian's chromium logged in to
``/arbiter``. Each round gives every board a game with a staggered short time for red and starts
them all with one venue ``start``: every board runs, and each one flags. The exact flag instant
is the ``started`` event's ``ts`` plus red's time at the start (the node's own stamp); the page
records ``Date.now()`` when the alert's row is inserted in the DOM (a MutationObserver; the next
frame paints it). Both are wall clocks of this one machine.

Baseline in the same run: the raw broker QoS 1 publish -> receive round trip (one client, Nagle
off). Ratio: p50 flag -> alert over p50 broker round trip.

Full run: 100 boards, 2 rounds (200 flags). ``--quick``: 20 boards, 2 rounds (40 flags).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, parse_args, percentiles

from board_nodes import wire
from board_nodes.config import NodeConfig
from board_nodes.node import Node
from broker_config import MosquittoProcess, Roster
from venue_station.auth import hash_password
from venue_station.config import StationConfig
from venue_station.station import Station

VENUE = "bench"
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


async def broker_round_trip(broker: MosquittoProcess, count: int) -> list[float]:
    import aiomqtt

    user, password = broker.credentials("station")
    out: list[float] = []
    async with aiomqtt.Client(
        broker.host, broker.port, username=user, password=password,
        protocol=aiomqtt.ProtocolVersion.V5, identifier="bench-rtt",
    ) as client:  # fmt: skip
        wire.set_nodelay(client)
        topic = f"qz/v1/{VENUE}/board/rtt/cmd"  # no node listens to this board
        await client.subscribe(topic, qos=1)
        messages = client.messages.__aiter__()
        for i in range(count):
            sent = time.monotonic_ns()
            await client.publish(topic, str(i), qos=1)
            await anext(messages)
            out.append((time.monotonic_ns() - sent) / 1e6)
    return out


def node_config(broker: MosquittoProcess, node: str, boards: list[str], data: Path) -> NodeConfig:
    user, password = broker.credentials(node)
    return NodeConfig.model_validate(
        {
            "venue": VENUE,
            "node": node,
            "data_dir": str(data / node),
            "broker": {"url": broker.url, "username": user, "password": password},
            "board": [
                {"id": b, "face": "simulated", "simulated": {"mode": "idle"}} for b in boards
            ],
        }
    )


async def run_round(station: Station, page: Any, boards: list[str], round_no: int) -> list[float]:
    stagger = 1500 / len(boards)

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
    missing = games - set(seen)
    if missing:
        print(f"  round {round_no}: {len(missing)} flag alert(s) not seen within 30 s")
    return [seen[g] - instants[g] for g in seen if g in instants]


async def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    n_boards, rounds = (20, 2) if args.quick else (100, 2)
    boards = [str(b) for b in range(1, n_boards + 1)]
    nodes = {f"n{i:02d}": boards[i : i + 10] for i in range(0, n_boards, 10)}
    work = Path(tempfile.mkdtemp(prefix="qz-bench-alert-"))
    work.chmod(0o755)  # a root-started mosquitto drops to the mosquitto user
    roster = Roster.build(venue=VENUE, nodes=nodes, broker={"max_queued_messages": 100_000})
    broker = MosquittoProcess.from_roster(roster, work / "broker")
    latencies: list[float] = []
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(shutil.rmtree, work, True)
        stack.callback(broker.close)
        rtt = percentiles(await broker_round_trip(broker, 300))
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
        station = Station(config)
        await station.start()
        stack.push_async_callback(station.stop)
        runs = []
        for node_id, ids in nodes.items():
            node = Node(node_config(broker, node_id, ids, work))
            runs.append(asyncio.create_task(node.run(), name=f"bench-{node_id}"))
            stack.push_async_callback(_stop_node, node, runs[-1])
            await node.started.wait()
            for link in node.links.values():
                await link.connected.wait()
        from playwright.async_api import async_playwright

        pw = await stack.enter_async_context(async_playwright())
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.push_async_callback(browser.close)
        page = await browser.new_page(viewport={"width": 1280, "height": 900})
        await page.goto(station.http_url + "/arbiter?lang=en")
        await page.fill("#username", "arb")
        await page.fill("#password", PASSWORD)
        await page.click("#login-submit")
        await page.wait_for_selector("#station:not([hidden])")
        await page.wait_for_function(
            f"document.querySelectorAll('#boards .card').length >= {n_boards}"
        )
        await page.evaluate(OBSERVE)
        for r in range(1, rounds + 1):
            latencies += await run_round(station, page, boards, r)
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
    emit(
        {
            "benchmark": "alert_latency",
            "quick": args.quick,
            "boards": n_boards,
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


async def _stop_node(node: Node, task: asyncio.Task[Any]) -> None:
    node.stop()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(task, 10)


if __name__ == "__main__":
    asyncio.run(main())
