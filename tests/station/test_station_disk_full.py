"""The station's disk is full: it starts anyway, says so on every page, loses nothing (issue 28).

Real parts: a real Mosquitto, a real node (in this process, simulated faces pressed by the
test, its journal on a roomy disk) and ``qizhong station`` as its own process with its data
folder (the SQLite store) on a real tmpfs filled to the last byte. It used to exit with a
traceback (under systemd: a restart loop, no arbiter page at all). Now:

- started while full, it serves its pages within 5 s with the ``store_failing`` banner (both
  languages) and ``/api/station`` says so; it does not exit;
- it keeps the boards' live states meanwhile (the presses while it is blind show up);
- space back, it opens its store and every event of the node's journal (read directly) is
  stored exactly once, the banner gone.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.full_disk import fill, journal_keys, small_disk
from support.node import Probe, node_config, running_node
from support.station import ARBITER, ARBITER_PASSWORD

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace
from venue_station.auth import hash_password

pytestmark = [
    pytest.mark.broker,
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="session"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def station_toml(path: Path, broker: Any, data_dir: Path, port: int) -> Path:
    user, password = broker.credentials("station")
    path.write_text(
        'venue = "test"\n'
        f'data_dir = "{data_dir}"\n'
        "rebirth_grace_ms = 100\n"
        "rebirth_retry_ms = 500\n"
        "[broker]\n"
        f'url = "mqtt://{broker.host}:{broker.port}"\n'
        f'username = "{user}"\n'
        f'password = "{password}"\n'
        "[http]\n"
        'host = "127.0.0.1"\n'
        f"port = {port}\n"
        "[[account]]\n"
        f'username = "{ARBITER}"\n'
        f'password_hash = "{hash_password(ARBITER_PASSWORD)}"\n'
        'role = "chief"\n',
        encoding="utf-8",
    )
    return path


class StationProcess:
    def __init__(self, config: Path, log: Path, port: int) -> None:
        self.config, self.log_path, self.url = config, log, f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = open(self.log_path, "ab")  # noqa: SIM115 — the process owns it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "qizhong", "station", "--config", str(self.config)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    async def get(self, path: str) -> httpx.Response | None:
        try:
            async with httpx.AsyncClient(base_url=self.url, timeout=2) as client:
                return await client.get(path)
        except httpx.HTTPError:
            return None

    async def wait(self, pred: Any, timeout: float, what: str) -> float:
        """Seconds until ``await pred()`` is true (fails naming ``what`` and the log)."""
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            assert self.alive(), f"the station exited: {self.log()[-3000:]}"
            if await pred():
                return time.monotonic() - start
            await asyncio.sleep(0.1)
        raise AssertionError(f"{what}: not within {timeout} s\n{self.log()[-3000:]}")


def stored_keys(db: Path) -> list[tuple[str, int, int]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return [tuple(r) for r in conn.execute("SELECT board, session, seq FROM events")]
    finally:
        conn.close()


async def codes(station: StationProcess) -> list[str] | None:
    r = await station.get("/api/station")
    return None if r is None or r.status_code != 200 else [a["code"] for a in r.json()["alarms"]]


async def press(face: SimulatedFace, sides: list[Side]) -> None:
    for side in sides:
        face.press(side)
        await asyncio.sleep(0.05)


async def test_a_station_started_on_a_full_disk_serves_says_so_and_loses_nothing(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    broker = broker_factory()
    port = free_port()
    with small_disk(tmp_path / "disk", size_kb=8192) as disk:
        config = station_toml(tmp_path / "station.toml", broker, disk / "station", port)
        station = StationProcess(config, tmp_path / "station.log", port)
        # 1. the station's store exists (an event in progress), the station stops
        station.start()
        await station.wait(lambda: _ok(station, "/healthz"), 30, "the first start")
        station.stop()
        # 2. the node plays while the station is away (its journal is on a roomy disk)
        faces = {b: SimulatedFace(mode="idle") for b in ("1", "2")}
        node_cfg = node_config(broker, "node-a", ["1", "2"], tmp_path / "node")
        async with running_node(node_cfg, faces) as node:
            async with Probe(broker) as probe:  # the station's account, while it is away
                for b in ("1", "2"):
                    game = {"game": f"r1-b{b}", "tc": "30m+5s"}
                    assert (await probe.command(b, "set_game", game))["ok"]
                    assert (await probe.command(b, "start"))["ok"]
            await press(faces["1"], [Side.RED, Side.BLACK])
            # 3. the disk fills; the station is started on it
            filler = fill(disk)
            started = time.monotonic()
            station.start()
            await station.wait(
                lambda: _has(station, "store_failing"), 5, "store_failing on /api/station"
            )
            for path, word in (("/", "比赛数据未能保存"), ("/arbiter?lang=en", "not being stored")):
                await page.goto(station.url + path)
                await page.wait_for_selector("#qz-alarm", timeout=5000)
                assert word in (await page.text_content("#qz-alarm") or ""), path
            banner_s = time.monotonic() - started
            assert banner_s < 5 + 2, banner_s  # the page's own load and first poll included
            health = await station.get("/healthz")
            assert health is not None and health.status_code == 503
            # it keeps the live views: a press while it cannot store is shown
            await press(faces["1"], [Side.RED, Side.BLACK, Side.RED])
            await station.wait(lambda: _moves(station, "1", 3, 2), 5, "board 1's live state")
            await press(faces["2"], [Side.RED])
            await station.wait(lambda: _moves(station, "2", 1, 0), 5, "board 2's live state")
            await page.goto(station.url + "/")  # the display's live stream serves too
            await page.wait_for_selector('.card[data-board="1"][data-online="online"]')
            await page.wait_for_selector("#qz-alarm")
            await asyncio.sleep(2.0)
            assert station.alive(), station.log()[-3000:]
            # 4. the technician frees the disk: everything the journal holds is stored, once
            os.unlink(filler)
            freed = time.monotonic()
            await station.wait(lambda: _none(station), 10, "the alarm gone")
            want = journal_keys(node_cfg.data_dir / "journal.sqlite3")
            assert len(want) >= 2 * 2 + 6  # ready/started per board and the presses

            async def all_stored() -> bool:
                return set(stored_keys(disk / "station" / "station.db")) >= want

            caught_up = await station.wait(all_stored, 15, "every journaled event stored")
            keys = stored_keys(disk / "station" / "station.db")
            assert len(keys) == len(set(keys))
            assert set(keys) == want | (set(keys) - want) and not (set(keys) - want), sorted(
                set(keys) - want
            )
            print(f"\nbanner after start {banner_s:.2f} s; all stored {caught_up + 0:.2f} s "
                  f"after the space came back ({time.monotonic() - freed:.2f} s); "
                  f"{len(want)} events")  # fmt: skip
            assert node.boards["1"].clock is not None
            station.stop()
        assert "Traceback" not in station.log(), station.log()[-3000:]


async def _ok(station: StationProcess, path: str) -> bool:
    r = await station.get(path)
    return r is not None and r.status_code == 200


async def _has(station: StationProcess, code: str) -> bool:
    return code in (await codes(station) or [])


async def _none(station: StationProcess) -> bool:
    return (await codes(station)) == []


async def _moves(station: StationProcess, board: str, red: int, black: int) -> bool:
    r = await station.get("/api/boards")
    if r is None or r.status_code != 200:
        return False
    for view in r.json()["boards"] if isinstance(r.json(), dict) else r.json():
        if view["board"] == board and view["state"]:
            return bool(view["state"]["moves"] == {"red": red, "black": black})
    return False


async def test_the_disk_fills_under_a_running_station_alert_banner_and_nothing_lost(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    broker = broker_factory()
    port = free_port()
    with small_disk(tmp_path / "disk", size_kb=8192) as disk:
        config = station_toml(tmp_path / "station.toml", broker, disk / "station", port)
        station = StationProcess(config, tmp_path / "station.log", port)
        faces = {"1": SimulatedFace(mode="idle")}
        node_cfg = node_config(broker, "node-a", ["1"], tmp_path / "node")
        async with running_node(node_cfg, faces):
            async with Probe(broker) as probe:  # before the station takes its account
                assert (await probe.command("1", "set_game", {"game": "r1-b1", "tc": "30m+5s"}))[
                    "ok"
                ]
                assert (await probe.command("1", "start"))["ok"]
            station.start()
            try:
                await station.wait(lambda: _ok(station, "/healthz"), 30, "the start")
                await page.goto(station.url + "/")
                filler = fill(disk)
                full_at = time.monotonic()
                await press(faces["1"], [Side.RED, Side.BLACK, Side.RED, Side.BLACK])
                await station.wait(lambda: _has(station, "store_failing"), 5, "store_failing")
                await page.wait_for_selector("#qz-alarm", timeout=5000)
                banner_s = time.monotonic() - full_at
                assert banner_s < 5, banner_s
                assert "比赛数据未能保存" in (await page.text_content("#qz-alarm") or "")
                await station.wait(lambda: _moves(station, "1", 2, 2), 5, "the live state")
                os.unlink(filler)
                await station.wait(lambda: _none(station), 10, "the alarm gone")
                want = journal_keys(node_cfg.data_dir / "journal.sqlite3")

                async def all_stored() -> bool:
                    return set(stored_keys(disk / "station" / "station.db")) == want

                await station.wait(all_stored, 15, "every journaled event stored")
                db = sqlite3.connect(f"file:{disk / 'station' / 'station.db'}?mode=ro", uri=True)
                try:
                    kinds = [r[0] for r in db.execute("SELECT kind FROM alerts")]
                finally:
                    db.close()
                assert kinds.count("store_failing") == 1, kinds
                print(f"\nbanner {banner_s:.2f} s after the disk filled; {len(want)} events")
            finally:
                station.stop()
        assert "Traceback" not in station.log(), station.log()[-3000:]
