"""The primary station's laptop dies (its disk lost) and the warm standby is promoted: the event
comes back whole (issue 28's acceptance; the repeatable check beside test_disk_lost.py).

Real parts, as a venue runs them: a private Mosquitto, a real node of four boards on simulated
faces, and three ``qizhong station`` processes — the primary (SQLite, a ``decision_key_file``,
driven over HTTP as the chief arbiter does), ``qizhong station standby`` on "a second laptop"
copying it, and ``qizhong station promote`` there once the primary is gone. The standby has the
same key (the technician copied the file). Round 1: players and pairings imported, the clocks
started through the node; before the copy a draw agreed (board 6) and a foul (board 5); after it
board 5's resignation, board 7's flag confirmed, board 8's foul and resignation, then round 2
paired and started, board 5 resigned and board 6 drawn. The primary is killed (SIGKILL) and its
data folder deleted. ``promote``: read from the node's journal directly, every event is stored
once and as journaled, every decision confirmed as it was (none ``unverified``) and made by no
command of the promoted station; players, rounds, games and standings equal what the primary
showed, round 2 included (rebuilt from the boards' signed ``set_game``s). ``-s`` prints the
times for docs/operations.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.node import node_config, running_node
from support.ports import server_port

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace
from venue_station.auth import hash_password
from venue_station.intake.signed_txn import STATION_SET

pytestmark = [pytest.mark.broker, pytest.mark.slow]

CHIEF, CHIEF_PASSWORD = "arb1", "青龙-secret-1"
ADMIN, ADMIN_PASSWORD = "tech", "备用-站-7"
PLAYERS = "name\n" + "".join(f"{n}\n" for n in "甲乙丙丁戊己庚辛")
ROUND1 = {"5": ("甲", "乙"), "6": ("丙", "丁"), "7": ("戊", "己"), "8": ("庚", "辛")}
ROUND2 = "round,board,red,black\n2,5,乙,丙\n2,6,丁,戊\n2,7,己,庚\n2,8,辛,甲\n"
GAME_KEYS = ("game", "round", "board", "red", "black", "result", "winner", "reason", "status")
DECISIONS = ("result", "foul", "forfeit")


def station_toml(
    path: Path, broker: Any, data_dir: Path, key: str, port: int, **extra: str
) -> Path:
    user, password = broker.credentials("station")
    lines = [
        'venue = "test"',
        f'data_dir = "{data_dir}"',
        f'decision_key_file = "{key}"',
        "rebirth_grace_ms = 100",
        "rebirth_retry_ms = 500",
        "[http]",
        'host = "127.0.0.1"',
        f"port = {port}",
        "login_per_address = 1000",
        "[broker]",
        f'url = "mqtt://{broker.host}:{broker.port}"',
        f'username = "{user}"',
        f'password = "{password}"',
        'client_id = "qz-station-venue"',  # the standby takes the primary's place
    ]
    for name, pw, role in ((CHIEF, CHIEF_PASSWORD, "chief"), (ADMIN, ADMIN_PASSWORD, "admin")):
        lines += ["[[account]]", f'username = "{name}"', f'password_hash = "{hash_password(pw)}"']
        lines.append(f'role = "{role}"')
    if extra:
        lines.append("[standby]")
        lines += [f"{k} = {v}" for k, v in extra.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Proc:
    """A ``qizhong station`` process, its output in a log file (no pipe to fill)."""

    def __init__(self, log: Path, *args: str) -> None:
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "qizhong", "station", *args],
            stdout=self._out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    async def said(self, words: str, timeout: float = 60.0) -> str:
        """The first line that contains ``words``, once the process writes it."""
        async with asyncio.timeout(timeout):
            while True:
                line = next((ln for ln in self.text().splitlines() if words in ln), None)
                if line is not None:
                    return line
                assert self.proc.poll() is None, f"exited {self.proc.returncode}:\n{self.text()}"
                await asyncio.sleep(0.05)

    def end(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._out.close()
        return self.proc.returncode


async def arbiter(url: str) -> httpx.AsyncClient:
    """The chief arbiter logged in, once the station answers."""
    client = httpx.AsyncClient(base_url=url, timeout=15)
    async with asyncio.timeout(60):
        while True:
            with suppress(httpx.HTTPError):
                r = await client.post(
                    "/api/auth/login", json={"username": CHIEF, "password": CHIEF_PASSWORD}
                )
                if r.status_code == 200:
                    client.headers["X-CSRF-Token"] = r.json()["csrf"]
                    return client
            await asyncio.sleep(0.1)


async def cmd(client: httpx.AsyncClient, board: str, name: str, **args: Any) -> None:
    r = await client.post(f"/api/boards/{board}/cmd", json={"cmd": name, "args": args})
    assert r.status_code == 200 and r.json()["outcome"] == "ok", (board, name, r.text)


async def rule_flag(client: httpx.AsyncClient, board: str, action: str) -> None:
    async with asyncio.timeout(20):
        while True:
            alerts = (await client.get("/api/alerts", params={"status": "open"})).json()["alerts"]
            flag = next((a for a in alerts if a["board"] == board and a["kind"] == "flag"), None)
            if flag is not None:
                break
            await asyncio.sleep(0.05)
    r = await client.post(f"/api/alerts/{flag['id']}", json={"action": action})
    assert r.status_code == 200, r.text


async def stored_events(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after: int | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000, **({"after": after} if after else {})}
        body = (await client.get("/api/events", params=params)).json()
        out += body["events"]
        if body.get("next") is None:
            return out
        after = body["next"]


async def picture(client: httpx.AsyncClient) -> dict[str, Any]:
    """What the arbiters and the public see: players, rounds, games, standings, decisions."""
    rounds = (await client.get("/api/rounds")).json()["rounds"]
    games = (await client.get("/api/games")).json()["games"]
    decisions = sorted(
        (e["game"], e["board"], e["seq"], e["type"], json.dumps(e["data"], sort_keys=True))
        for e in await stored_events(client)
        if e["type"] in DECISIONS
    )
    return {
        "players": (await client.get("/api/trf/entrants")).json(),
        "rounds": [
            (r["round"], [(p["board"], p["red"], p["black"]) for p in r["pairings"]])
            for r in rounds
        ],
        "games": [{k: g[k] for k in GAME_KEYS} for g in games],
        "standings": (await client.get("/api/standings")).json(),
        "decisions": decisions,
    }


def journal_events(node: Any) -> dict[tuple[str, int, int], dict[str, Any]]:
    out = {}
    for row in node.journal.all_events():
        p = json.loads(row.payload)
        out[(p["board"], int(p["session"]), int(p["seq"]))] = p
    return out


def read_store(db: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stopped station's events and command log, read from its SQLite file."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        events = [dict(r) for r in conn.execute("SELECT * FROM events ORDER BY id")]
        commands = [dict(r) for r in conn.execute("SELECT * FROM commands ORDER BY sent_ms")]
    finally:
        conn.close()
    for ev in events:
        ev["data"] = json.loads(ev["data"]) if isinstance(ev["data"], str) else ev["data"]
    return events, commands


def caught_up(boards: list[dict[str, Any]], last: dict[str, int]) -> bool:
    seen = {b["board"]: b for b in boards}
    return all(
        b in seen and seen[b].get("last_seq") == s and not seen[b].get("missing")
        for b, s in last.items()
    )


async def test_standby_promoted_gives_the_event_back_whole(
    broker_factory: Any, tmp_path: Path, capsys: Any
) -> None:
    broker = broker_factory()
    faces = {b: SimulatedFace(mode="idle") for b in ROUND1}
    node_cfg = node_config(broker, "node-c", list(faces), tmp_path / "node")
    etc, laptop = tmp_path / "etc", tmp_path / "laptop2"
    etc.mkdir()
    laptop.mkdir()
    port, standby_port = server_port(), server_port()
    primary_url, promoted_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{standby_port}"
    primary_cfg = station_toml(
        etc / "station.toml", broker, tmp_path / "primary-data", "decision.key", port
    )
    procs: list[Proc] = []
    clients: list[httpx.AsyncClient] = []
    try:
        async with running_node(node_cfg, faces) as node:
            primary = Proc(tmp_path / "primary.log", "--config", str(primary_cfg))
            procs.append(primary)
            chief = await arbiter(primary_url)
            clients.append(chief)
            async with asyncio.timeout(30):
                while len((await chief.get("/api/boards")).json()["boards"]) < len(faces):
                    await asyncio.sleep(0.1)
            r = await chief.post("/api/players", content=PLAYERS.encode())
            assert r.status_code == 200, r.text
            pairs = "round,board,red,black\n" + "".join(
                f"1,{b},{red},{black}\n" for b, (red, black) in ROUND1.items()
            )
            r = await chief.post("/api/pairings", params={"send": "0"}, content=pairs.encode())
            assert r.status_code == 200, r.text
            for board, (red, black) in ROUND1.items():
                tc = "1+0" if board == "7" else "90m+30s"  # board 7's flag falls
                await cmd(chief, board, "set_game", game=f"r1-b{board}", tc=tc, red=red,
                          black=black)  # fmt: skip
                await cmd(chief, board, "start")
            for board in ("5", "6", "8"):
                faces[board].press(Side.RED)
                faces[board].press(Side.BLACK)
            # before the copy: a draw agreed, a foul
            await cmd(chief, "6", "result", winner=None, reason="agreed")
            await cmd(chief, "5", "foul", side="black", reason="phone")

            # the second laptop: the same config but its own data folder and port, the
            # primary's decision key copied beside it, and the standby copying the primary
            shutil.copy(etc / "decision.key", laptop / "decision.key")
            (laptop / "primary.pw").write_text(ADMIN_PASSWORD + "\n", encoding="utf-8")
            standby_cfg = station_toml(
                laptop / "standby.toml", broker, laptop / "data", "decision.key", standby_port,
                primary=f'"{primary_url}"', user=f'"{ADMIN}"', password_file='"primary.pw"',
                every_s="3600",
            )  # fmt: skip
            standby = Proc(tmp_path / "standby.log", "standby", "--config", str(standby_cfg))
            procs.append(standby)
            copied_line = await standby.said("standby: copied the primary")
            copied_at = time.monotonic()
            in_copy = set(journal_events(node))  # at most: the copy has these events, or fewer

            # after the copy: a resignation, a flag confirmed, a foul and a resignation ...
            await cmd(chief, "5", "result", winner="red", reason="resign")
            await rule_flag(chief, "7", "confirm")
            await cmd(chief, "8", "foul", side="red", reason="phone")
            await cmd(chief, "8", "result", winner="black", reason="resign")
            # ... and round 2 paired (its set_games sent), started and partly decided
            r = await chief.post("/api/pairings", content=ROUND2.encode())
            assert r.status_code == 200, r.text
            for board in ROUND1:
                await cmd(chief, board, "start")
                faces[board].press(Side.RED)
            await cmd(chief, "5", "result", winner="black", reason="resign")
            await cmd(chief, "6", "result", winner=None, reason="agreed")

            # everything journaled and stored (the node's writer commits on its own thread: a
            # command's reply can come before its event is in the journal's file)
            expected = ["confirmed"] * 6 + ["undecided"] * 2
            async with asyncio.timeout(30):
                while True:
                    before = await picture(chief)
                    stored = len(await stored_events(chief))
                    sent = not node.journal.unsent_count()
                    statuses = [g["status"] for g in before["games"]]
                    if statuses == expected and sent and stored == len(journal_events(node)):
                        break
                    await asyncio.sleep(0.2)
            last = {b: max(k[2] for k in journal_events(node) if k[0] == b) for b in ROUND1}

            # the primary's laptop dies: killed, and its disk with it
            primary.end(signal.SIGKILL)
            killed_at = time.monotonic()
            shutil.rmtree(tmp_path / "primary-data")
            standby.end()  # the technician stops the standby's unit, then promotes
            assert "standby stopped after 1 copies" in standby.text(), standby.text()

            t0, promote_wall_ms = time.monotonic(), time.time_ns() // 1_000_000
            promoted = Proc(tmp_path / "promoted.log", "promote", "--config", str(standby_cfg))
            procs.append(promoted)
            chief = await arbiter(promoted_url)
            clients.append(chief)
            serving_s = time.monotonic() - t0
            async with asyncio.timeout(90):
                while not caught_up((await chief.get("/api/boards")).json()["boards"], last):
                    await asyncio.sleep(0.05)
            caught_up_s = time.monotonic() - t0
            rebuilt = await promoted.said("rebuilt from the boards", timeout=90)
            rebuilt_s = time.monotonic() - t0
            assert "rounds [2]" in rebuilt, promoted.text()
            after = await picture(chief)
            journal = journal_events(node)
    finally:
        for client in clients:
            await client.aclose()
        codes = [p.end() for p in reversed(procs)]
    assert codes[0] == 0, promoted.text()

    assert "promoted: running the station on the last copy" in promoted.text()
    for name in ("players", "rounds", "games", "standings"):
        assert after[name] == before[name], name
    assert after["decisions"] == before["decisions"]

    # the node's journal, read directly, against the promoted station's store
    events, commands = read_store(laptop / "data" / "station.db")
    keys = [(e["board"], int(e["session"]), int(e["seq"])) for e in events]
    assert len(keys) == len(set(keys)), "an event stored twice"
    assert sorted(keys) == sorted(journal), "every journaled event stored, and nothing else"
    for ev in events:
        mine = journal[(ev["board"], int(ev["session"]), int(ev["seq"]))]
        data = {k: v for k, v in ev["data"].items() if k != STATION_SET}
        assert (ev["game"], ev["type"], data) == (mine["game"], mine["type"], mine["data"])
        if ev["type"] == "ready":  # the primary's pairings: round 2 is made from them
            assert ev["data"].get(STATION_SET) is True, ev
    decided = [e for e in events if e["type"] in DECISIONS and e["data"].get("status") != "pending"]
    assert not [e for e in events if e["data"].get("unverified")], "none left unverified"
    assert sorted((e["game"], e["type"], e["data"].get("status")) for e in decided) == [
        ("r1-b5", "foul", "confirmed"),
        ("r1-b5", "result", "confirmed"),
        ("r1-b6", "result", "confirmed"),
        ("r1-b7", "result", "confirmed"),  # the flag confirmed
        ("r1-b8", "foul", "confirmed"),
        ("r1-b8", "result", "confirmed"),
        ("r2-b5", "result", "confirmed"),
        ("r2-b6", "result", "confirmed"),
    ]
    # decided once: by the primary's commands, none sent again by the promoted station
    again = [c for c in commands if c["sent_ms"] >= promote_wall_ms and c["cmd"] != "rebirth"]
    assert again == [], again

    after_copy = [e for e in decided if (e["board"], e["session"], e["seq"]) not in in_copy]
    assert len(after_copy) == 6, "the decisions after the copy came back from the boards"
    copy_ms = copied_line.split(" bytes in ")[1].split(" ms")[0]
    with capsys.disabled():
        print(
            f"\nstandby promoted: copy {copy_ms} ms, copy {killed_at - copied_at:.1f} s old when "
            f"the primary died; promote -> serving {serving_s:.2f} s, boards caught up "
            f"{caught_up_s:.2f} s, round 2 rebuilt {rebuilt_s:.2f} s; {len(journal)} events, "
            f"{len(decided)} decisions ({len(after_copy)} after the copy)"
        )
