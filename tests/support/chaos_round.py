"""The chaos round: set up the venue, play a round while injecting faults, end it, converge.

``ChaosRound(venue, proxy)``: ``await setup()`` (venue, sim, every board online, round 1
paired and started), ``await inject()`` (the faults of the plan, on a timeline over
``plan.play_s``), ``await finish()`` (the cut healed, every board online, a result entered on
every board still playing, and the station's store caught up with every journal). Blocking
work (processes, HTTP) runs in threads, so the proxy on the loop keeps piping meanwhile. Every
wait is bounded by a deadline and names what it waited for when it fails.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import random
import sqlite3
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.chaos import ChaosVenue, TcpProxy

__all__ = ["ChaosRound", "Fault", "journal_keys", "store_keys"]

Key = tuple[str, int, int]


@dataclass
class Fault:
    kind: str  # broker_kill | station_kill | power_cut | cutoff
    target: str
    at_s: float  # offset into the round
    down_s: float = 0.0  # measured: kill to restarted (cut-off: its length)
    kill_wall_ms: int = 0
    session_before: int = 0  # power cut: the node's session at the kill


class Api:
    """The station's HTTP API as the arbiter: logs in again after a station restart."""

    def __init__(self, url: str, password: str) -> None:
        self.url, self.password = url, password
        self.csrf = ""
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def call(self, method: str, path: str, body: Any = None, *, raw: bool = False) -> Any:
        status, reply = self._call(method, path, body, raw=raw)
        if status in (401, 403) and path != "/api/auth/login":
            self.login()
            status, reply = self._call(method, path, body, raw=raw)
        return reply if status < 500 else {"error": f"HTTP {status}", "reply": reply}

    def _call(self, method: str, path: str, body: Any, *, raw: bool) -> tuple[int, Any]:
        data, headers = None, {"X-CSRF-Token": self.csrf} if self.csrf else {}
        if body is not None:
            data = body.encode() if raw else json.dumps(body).encode()
            headers["Content-Type"] = "text/csv" if raw else "application/json"
        req = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with self._opener.open(req, timeout=15) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            try:
                return exc.code, json.loads(exc.read() or b"null")
            except ValueError:
                return exc.code, None
        except OSError as exc:  # the station is down (being restarted)
            return 599, {"error": str(exc)}

    def login(self) -> None:
        _, body = self._call(
            "POST", "/api/auth/login", {"username": "arbiter", "password": self.password}, raw=False
        )
        self.csrf = (body or {}).get("csrf", "") if isinstance(body, dict) else ""

    def boards(self) -> dict[str, dict[str, Any]]:
        body = self.call("GET", "/api/boards")
        rows = body.get("boards", []) if isinstance(body, dict) else body
        return {str(v["board"]): v for v in rows or []} if isinstance(rows, list) else {}

    def board_cmd(self, board: str, cmd: str, args: dict[str, Any] | None = None) -> bool:
        reply = self.call("POST", f"/api/boards/{board}/cmd", {"cmd": cmd, "args": args or {}})
        return isinstance(reply, dict) and reply.get("ok") is True


async def until(
    check: Callable[[], Any], *, timeout_s: float, what: str, every_s: float = 0.5
) -> Any:
    """Call ``check`` (in a thread) until it returns something truthy, or fail naming ``what``."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = await asyncio.to_thread(check)
        if last:
            return last
        await asyncio.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def journal_keys(path: Path) -> set[Key]:
    """The (board, session, seq) of every event a journal holds, read-only (the node may run)."""
    if not path.exists():
        return set()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        rows = db.execute(
            "SELECT json_extract(payload, '$.board'), json_extract(payload, '$.session'), seq "
            "FROM outbox"
        ).fetchall()
    finally:
        db.close()
    return {(str(b), int(s), int(q)) for b, s, q in rows}


def journal_session(path: Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        row = db.execute("SELECT value FROM meta WHERE key='session'").fetchone()
    finally:
        db.close()
    return int(row[0]) if row else 0


def store_keys(db_file: Path) -> set[Key]:
    db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=10)
    try:
        rows = db.execute("SELECT board, session, seq FROM events").fetchall()
    finally:
        db.close()
    return {(str(b), int(s), int(q)) for b, s, q in rows}


class ChaosRound:
    def __init__(self, venue: ChaosVenue, proxy: TcpProxy) -> None:
        self.venue, self.proxy, self.plan = venue, proxy, venue.plan
        self.faults: list[Fault] = []
        self.api: Api | None = None
        self.rng = random.Random(self.plan.seed)
        self._resumers: list[asyncio.Task[None]] = []
        self.results_entered = 0
        self.resumed = 0
        self.log: list[str] = []

    @property
    def db_file(self) -> Path:
        return self.venue.work / "station" / "station.db"

    def note(self, text: str) -> None:
        self.log.append(f"{time.strftime('%H:%M:%S')} {text}")

    # -- setting up ------------------------------------------------------------------------
    async def setup(self) -> None:
        await self.proxy.start()
        self.venue.proxy_port = self.proxy.port
        await asyncio.to_thread(self.venue.start)
        self.venue.start_sim()
        self.api = api = Api(self.venue.url, self.venue.arbiter_password)
        await asyncio.to_thread(api.login)
        await self.wait_online(timeout_s=120)
        rows = ["round,board,red,black"] + [
            f"1,{b},P{2 * b - 1:03d},P{2 * b:03d}" for b in range(1, self.venue.boards + 1)
        ]
        reply = await asyncio.to_thread(
            api.call, "POST", "/api/pairings", "\n".join(rows) + "\n", raw=True
        )
        assert isinstance(reply, dict) and not reply.get("error"), f"pairings refused: {reply}"
        await until(
            lambda: all(v.get("state", {}).get("phase") == "ready" for v in api.boards().values()),
            timeout_s=60,
            what="every board to have its game set (phase ready)",
        )
        at = int(time.time() * 1000) + 1000
        reply = await asyncio.to_thread(
            api.call, "POST", "/api/venue/cmd", {"cmd": "start", "args": {"at": at}}
        )
        assert isinstance(reply, dict) and reply.get("ok"), f"round start refused: {reply}"
        self.note(f"round started: {self.venue.boards} boards")

    async def wait_online(self, *, timeout_s: float) -> None:
        api = self.api
        assert api is not None

        def all_online() -> bool:
            self.venue.check_alive()
            views = api.boards()
            return len(views) >= self.venue.boards and all(v.get("online") for v in views.values())

        await until(all_online, timeout_s=timeout_s, what=f"all {self.venue.boards} boards online")

    # -- the faults ------------------------------------------------------------------------
    def schedule(self) -> list[Fault]:
        p, window = self.plan, self.plan.play_s
        faults = [
            Fault("power_cut", node, window * (i + 0.5) / p.power_cuts)
            for i, node in enumerate(self.venue.power_cut)
        ]
        faults += [
            Fault("broker_kill", "mosquitto", window * (i + 0.3) / p.broker_kills)
            for i in range(p.broker_kills)
        ]
        faults += [
            Fault("station_kill", "station", window * (i + 0.7) / p.station_kills)
            for i in range(p.station_kills)
        ]
        if p.cutoffs:
            faults.append(Fault("cutoff", ",".join(self.venue.proxied), window * 0.45))
        return sorted(faults, key=lambda f: f.at_s)

    async def inject(self) -> None:
        start = time.monotonic()
        for fault in self.schedule():
            await asyncio.sleep(max(0.0, start + fault.at_s - time.monotonic()))
            fault.at_s = time.monotonic() - start
            began = time.monotonic()
            if fault.kind == "broker_kill":
                await asyncio.to_thread(self.venue.restart_broker, down_s=self.plan.down_s)
            elif fault.kind == "station_kill":
                await asyncio.to_thread(self.venue.restart_station, down_s=self.plan.down_s)
            elif fault.kind == "power_cut":
                await self._power_cut(fault)
            elif fault.kind == "cutoff":
                await self._cut_off()
            fault.down_s = (
                time.monotonic() - began if fault.kind != "cutoff" else self.plan.cutoff_s
            )
            self.faults.append(fault)
            self.note(f"{fault.kind} {fault.target} at {fault.at_s:.1f} s, {fault.down_s:.1f} s")

    async def _cut_off(self) -> None:
        proxied = sum(len(self.venue.node_boards[n]) for n in self.venue.proxied)  # one each
        await until(
            lambda: self.proxy.connections >= proxied,
            timeout_s=60,
            what=f"the {proxied} proxied boards to be connected before the cut",
            every_s=0.2,
        )
        self.proxy.cut(self.plan.cutoff_s)

    async def _power_cut(self, fault: Fault) -> None:
        node = fault.target
        # The instant of the SIGKILL itself: the node can do nothing after it.
        fault.kill_wall_ms = time.time_ns() // 1_000_000
        self.venue.nodes[node].kill()
        await asyncio.to_thread(self.venue.kill_node, node)  # reaps it
        fault.session_before = journal_session(self.venue.journals()[node])
        await asyncio.sleep(self.plan.down_s)  # the Pi is without power this long
        self.venue.start_node(node)
        self._resumers.append(asyncio.create_task(self._resume(node, fault.session_before)))

    async def _resume(self, node: str, session_before: int) -> None:
        """The arbiter resumes the clocks the restart left paused, once the station sees them."""
        api = self.api
        assert api is not None
        todo = set(self.venue.node_boards[node])

        def step() -> bool:
            views = api.boards()
            for board in list(todo):
                state = views.get(board, {}).get("state") or {}
                if int(state.get("session") or 0) <= session_before:
                    continue  # the station has not seen the restarted node yet
                if state.get("phase") != "paused":
                    todo.discard(board)  # finished, or already running again
                elif api.board_cmd(board, "resume"):
                    self.resumed += 1
                    todo.discard(board)
            return not todo

        await until(step, timeout_s=120, what=f"the clocks of {node} to be resumed", every_s=1.0)

    # -- the end of the round ------------------------------------------------------------
    async def finish(self) -> None:
        api = self.api
        assert api is not None
        await self.proxy.wait_healed()
        for task in self._resumers:
            await task
        await self.wait_online(timeout_s=120)
        self.note("every board online again")

        def enter_results() -> bool:
            playing = {
                b: v
                for b, v in api.boards().items()
                if (v.get("state") or {}).get("phase") in ("ready", "running", "paused")
            }
            for board in playing:
                winner = self.rng.choice(["red", "black", None])
                args = {"winner": winner, "reason": "resigned" if winner else "agreed"}
                if api.board_cmd(board, "result", args):
                    self.results_entered += 1
            # A flag's loss is only proposed: the arbiter confirms it (issue 15), as in the hall.
            proposed = {
                b: item["seq"]
                for b, v in api.boards().items()
                for item in (v.get("state") or {}).get("pending") or ()
                if item.get("kind") == "result" and item.get("seq") is not None
            }
            for board, seq in proposed.items():
                if api.board_cmd(board, "resolve", {"seq": seq, "status": "confirmed"}):
                    self.results_entered += 1
            return not playing and not proposed

        await until(enter_results, timeout_s=120, what="a result on every board", every_s=1.0)
        self.note(f"results entered on {self.results_entered} boards")
        journals = self.venue.journals()

        def caught_up() -> bool:
            wanted: set[Key] = set().union(*(journal_keys(p) for p in journals.values()))
            return wanted <= store_keys(self.db_file)

        await until(caught_up, timeout_s=180, what="the store to hold every journaled event")
        self.note("the store holds every journaled event")
