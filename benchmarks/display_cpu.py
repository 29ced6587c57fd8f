"""Chromium's CPU for the hall display with 120 running boards, against the same page with the
boards idle (the same-run baseline), for the page as it is and for an older page.

A private Mosquitto, a real station, and one MQTT client per node account publishing the
boards' retained snapshots (DESIGN.md §4): first every board idle (a game set, not started),
then every board running with moves (a new snapshot, the other side running) at ``--moves``
per second over the hall. As a node does, each board's status is published once (a node
publishes it when it changes) and the station's clock probes are answered (unanswered, the
station would mark the boards silent and the page would stop their clocks). Debian's
chromium at 1920×1080 loads each page variant; the CPU time of every chromium process
(``/proc/<pid>/stat`` utime+stime of our descendants) over a window of ``--window`` seconds
gives its share of one core.

Variants: ``old`` is the display of commit ``--old`` (its display.js/common.js/style.css
served through Playwright's routing in place of today's files), ``all`` is today's ``/``,
``paged`` today's hall screen ``/?page_s=20`` (40 boards a page), ``range`` ``/?boards=1-40``,
``paged_slow`` the hall screen with the renderer's CPU throttled ``--throttle`` times (×4, a
stand-in for a Pi 4 core): its frames over 50 ms, longest frame, share of the throttled core
and cost per changed card (``_frames.py``); ``--trace FILE`` also records a devtools trace
of that window and prints where the renderer's main thread spent it.
``--records 2``: boards 1 and 2 are recorded, a move every 2 s (the hall screen then shows their
positions beside the grid, positions.js).

    .venv/bin/python benchmarks/display_cpu.py            # 30 s windows, ~5 min
    .venv/bin/python benchmarks/display_cpu.py --quick    # 6 s windows

The last line is JSON: per variant ``running_pct``/``idle_pct`` (% of one core) and ``ratio``
(running / idle); top-level ``ratio`` is today's paged hall screen's.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _frames
from _common import emit, parse_args
from _station_bench import VENUE, client, start_broker, station_config, stop_broker

from wire_contract.messages import Command, ProbeTimes, Reply, Topics, encode

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
BOARDS = 120
TICKS = os.sysconf("SC_CLK_TCK")
OLD_FILES = ("display.js", "display.html", "common.js", "style.css")
VARIANTS = {
    "old": "/", "all": "/", "paged": "/?page_s=20", "range": "/?boards=1-40",
    "paged_slow": "/?page_s=20",  # the hall screen under CPU throttling (--throttle)
}  # fmt: skip


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def descendants(root: int) -> list[int]:
    """Every live process under ``root`` (by the ppid field of /proc/<pid>/stat)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, pp in parent.items() if pp == pid]
        out.extend(kids)
        frontier.extend(kids)
    return out


def chromium_ticks() -> dict[int, int]:
    """utime+stime (clock ticks) of every chromium process under this one."""
    out = {}
    for pid in descendants(os.getpid()):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if "chrom" in comm:
            out[pid] = int(fields[11]) + int(fields[12])
    return out


async def cpu_pct(window_s: float) -> float:
    """Chromium's CPU over the window, in % of one core (processes that died are left out)."""
    before, t0 = chromium_ticks(), time.monotonic()
    await asyncio.sleep(window_s)
    after, t1 = chromium_ticks(), time.monotonic()
    used = sum(after[p] - before.get(p, 0) for p in after)
    return 100.0 * used / TICKS / (t1 - t0)


class Hall:
    """The boards' snapshots, published as their nodes would: a board's status once (a node
    publishes it when it changes), a snapshot per move, and an answer to every clock probe of
    the station (unanswered, the station would show the boards silent and stop their clocks).
    """

    def __init__(self, broker: Any, nodes: dict[str, list[str]]) -> None:
        self.broker, self.nodes = broker, nodes
        self.topics = Topics(VENUE)
        self.clients: dict[str, Any] = {}
        self.answering: list[asyncio.Task[None]] = []
        self.seq: dict[str, int] = {}
        self.snap: dict[str, dict[str, Any]] = {}
        self.online: set[str] = set()
        self.node_of = {b: n for n, bs in nodes.items() for b in bs}
        self.rng = random.Random(7)

    async def __aenter__(self) -> Hall:
        for node, boards in self.nodes.items():
            c = self.clients[node] = await client(self.broker, node).__aenter__()
            for b in boards:
                await c.subscribe(self.topics.cmd(b), qos=1)
            self.answering.append(asyncio.create_task(self._answer(c)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self.answering:
            task.cancel()
        await asyncio.gather(*self.answering, return_exceptions=True)
        for c in self.clients.values():
            await c.__aexit__(None, None, None)

    async def _answer(self, c: Any) -> None:
        """Answer the station's clock probes with this machine's wall clock, as a node does."""
        async for message in c.messages:
            received = wall_ms()
            cmd = Command.model_validate_json(message.payload)
            if cmd.cmd == "clock_probe":
                board = str(message.topic).split("/")[4]
                reply = Reply(txn=cmd.txn, ok=True, clock=ProbeTimes(rx=received, tx=wall_ms()))
                await c.publish(self.topics.reply(board), encode(reply), qos=1)

    async def publish(self, board: str, **state: Any) -> None:
        node = self.node_of[board]
        self.seq[board] = self.seq.get(board, 0) + 1
        body = {
            "v": 1, "board": board, "node": node, "session": 1, "seq": self.seq[board],
            "ts": wall_ms(), "game": f"r1-b{board}", "tc": "30m+5s", "red": f"红{board}",
            "black": f"黑{board}", "moves": {"red": 0, "black": 0}, "flag": None,
            "fouls": {"red": 0, "black": 0}, "result": None, **state,
        }  # fmt: skip
        self.snap[board] = body
        c = self.clients[node]
        if board not in self.online:
            self.online.add(board)
            status = {"state": "online", "node": node, "session": 1, "ts": wall_ms()}
            await c.publish(self.topics.status(board), json.dumps(status), qos=1, retain=True)
        await c.publish(self.topics.state(board), json.dumps(body), qos=1, retain=True)

    async def all_idle(self) -> None:
        for b in self.node_of:
            await self.publish(b, phase="ready", running=None, red_ms=1_800_000, black_ms=1_800_000)

    async def all_running(self) -> None:
        # Spread times so the boards' seconds tick at different instants, as in a hall.
        for b in self.node_of:
            red = self.rng.randrange(600_000, 1_700_000)
            black = self.rng.randrange(600_000, 1_700_000)
            side = self.rng.choice(["red", "black"])
            await self.publish(b, phase="running", running=side, red_ms=red, black_ms=black)

    async def moves(self, per_s: float) -> None:
        boards = list(self.node_of)
        while True:
            await asyncio.sleep(self.rng.expovariate(per_s))
            b = self.rng.choice(boards)
            old = self.snap[b]
            side = old["running"]
            left = max(60_000, old[side + "_ms"] - (wall_ms() - old["ts"]) + 5_000)
            other = "black" if side == "red" else "red"
            times = {"red_ms": old["red_ms"], "black_ms": old["black_ms"], f"{side}_ms": left}
            await self.publish(b, phase="running", running=other, **times)


async def record_moves(station: Any, boards: int, done: list[int]) -> None:
    """Games on boards 1..``boards`` (Meishan: both must be recorded) and a random legal move
    every 2 s over them, entered as a recorder's page does (the hall screen's ``record`` events).
    """
    rng = random.Random(11)
    pairs = "round,board,red,black\n" + "".join(
        f"1,{b},红{b},黑{b}\n" for b in range(1, boards + 1)
    )
    await station.import_pairings(pairs, send=False)
    board = 0
    while True:
        await asyncio.sleep(2.0)
        board = board % boards + 1
        view = await station.records.view(str(board))
        legal = view.legal()
        if not legal:
            continue
        await station.records.add(
            str(board), rng.choice(legal)["iccs"], ply=len(view.record.moves), by=None
        )
        done.append(board)


def old_files(commit: str) -> dict[str, str]:
    """The old page's files (the static folder was venue_station/static before the house)."""
    out = {}
    for name in OLD_FILES:
        for folder in ("venue_station/web/static", "venue_station/static"):
            spec = f"{commit}:{folder}/{name}"
            proc = subprocess.run(["git", "show", spec], cwd=REPO, capture_output=True, text=True)
            if proc.returncode == 0:
                out[name] = proc.stdout
                break
        else:
            raise SystemExit(f"display_cpu: {name} not found in commit {commit}")
    return out


def _server(text: str, kind: str) -> Any:
    async def serve(route: Any) -> None:
        await route.fulfill(status=200, body=text, content_type=kind)

    return serve


async def measure(
    browser: Any,
    url: str,
    old: dict[str, str] | None,
    window: float,
    throttle: float = 0,
    trace: Path | None = None,
) -> dict[str, Any]:
    context = await browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = await context.new_page()
        cdp = await _frames.prepare(context, page, throttle) if throttle else None
        if old is not None:
            for name, text in old.items():
                kind = "text/css" if name.endswith(".css") else (
                    "text/html" if name.endswith(".html") else "text/javascript")  # fmt: skip

                serve = _server(text, kind)
                await page.route(f"**/static/{name}", serve)
                if name == "display.html":
                    await page.route(url.rsplit("/", 1)[0] + "/", serve)
        await page.goto(url)
        await page.wait_for_selector(".card[data-board]")
        await asyncio.sleep(3)  # loaded, fonts in, first frames drawn
        if cdp is None:
            return {"pct": await cpu_pct(window)}
        if trace is not None:
            await browser.start_tracing(page=page, categories=_frames.TRACE_CATEGORIES)
        pct, frames = await asyncio.gather(cpu_pct(window), _frames.measure(page, cdp, window))
        if trace is not None:
            raw = await browser.stop_tracing()
            trace.write_bytes(raw)
            frames["trace"] = _frames.trace_summary(raw)
        return {"pct": pct, **frames}
    finally:
        await context.close()


async def main() -> None:
    args = parse_args(
        __doc__.splitlines()[0],
        lambda p: (
            p.add_argument("--window", type=float, default=None, help="seconds per measure"),
            p.add_argument("--moves", type=float, default=4.0, help="moves per second, hall"),
            p.add_argument("--old", default="ce2ad44", help="the commit of the 'old' page"),
            p.add_argument(
                "--records",
                type=int,
                default=0,
                help="boards 1..N recorded (N <= 2), a move every 2 s over them",
            ),
            p.add_argument("--variants", default=",".join(VARIANTS), help="which pages, a,b"),
            p.add_argument("--throttle", type=float, default=4.0, help="paged_slow's CPU rate"),
            p.add_argument(
                "--trace",
                type=Path,
                default=None,
                help="paged_slow running: a devtools trace of the window to this file (+ summary)",
            ),
        ),
    )
    window = args.window or (6.0 if args.quick else 30.0)
    from playwright.async_api import async_playwright

    from venue_station.web.web_server import StationWithWeb

    broker, directory, nodes = start_broker(BOARDS)
    data = Path(tempfile.mkdtemp(prefix="qz-bench-display-"))
    station = StationWithWeb(station_config(broker, data))
    await station.start()
    old = old_files(args.old) if "old" in args.variants.split(",") else {}
    recorder, recorded = None, []
    if args.records:
        recorder = asyncio.create_task(record_moves(station, min(args.records, 2), recorded))
    results: dict[str, dict[str, Any]] = {v: {} for v in VARIANTS}
    try:
        async with Hall(broker, nodes) as hall, async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=CHROMIUM,
                args=["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                      "--disable-background-networking", "--no-first-run"],
            )  # fmt: skip
            try:
                for phase in ("idle", "running"):
                    mover = None
                    if phase == "idle":
                        await hall.all_idle()
                    else:
                        await hall.all_running()
                        mover = asyncio.create_task(hall.moves(args.moves))
                    await asyncio.sleep(1)
                    for variant in args.variants.split(","):
                        path = VARIANTS[variant]
                        url = station.http_url + path
                        rate = args.throttle if variant == "paged_slow" else 0
                        traced = args.trace if rate and phase == "running" else None
                        m = await measure(
                            browser, url, old if variant == "old" else None, window, rate, traced
                        )
                        pct = m.pop("pct")
                        results[variant][phase + "_pct"] = round(pct, 1)
                        m.pop("_n0", None)
                        if m:
                            results[variant][phase] = m
                        print(
                            f"{variant:10} {phase:8} {pct:6.1f} % of a core {m or ''}", flush=True
                        )
                    if mover is not None:
                        mover.cancel()
            finally:
                await browser.close()
    finally:
        if recorder is not None:
            if recorder.done() and recorder.exception():
                raise recorder.exception()  # type: ignore[misc]
            recorder.cancel()
        await station.stop()
        stop_broker(broker, directory)
        shutil.rmtree(data, ignore_errors=True)
    results = {k: v for k, v in results.items() if v}
    for r in results.values():
        r["ratio"] = round(r["running_pct"] / max(r["idle_pct"], 0.1), 2)
    print(f"load average: {os.getloadavg()[0]:.1f}  ({os.cpu_count()} cores)", file=sys.stderr)
    top = results.get("paged") or next(iter(results.values()))
    emit({"ratio": top["ratio"], "window_s": window, "boards": BOARDS,
          "moves_per_s": args.moves, "old_commit": args.old, "throttle": args.throttle,
          "records": args.records, "recorded_moves": len(recorded),
          **results})  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
