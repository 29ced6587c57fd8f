"""A warm standby on a second laptop, promoted with one command (issue 28, docs/operations.md).

A real primary station (SQLite, its web port) plays a round with decided games; a standby whose
``[standby]`` names the primary copies its store over HTTP (logged in as an admin account), and
copies again after more games are decided. ``promote`` is refused while the primary answers (two
stations must never rule on the same boards); the primary's laptop dies; ``promote`` then goes
on, and a station on the standby's copy shows the primary's standings, games and results. Only an
admin account gets the copy; a standby with a wrong password says so and keeps its last copy.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.ports import server_port
from support.station import station_config
from support.trf_boards import Boards

from qizhong.cli.main import main
from venue_station.auth import hash_password
from venue_station.config import StandbyConfig
from venue_station.domain.station import Station
from venue_station.errors import StationError
from venue_station.store.backup import sqlite_path
from venue_station.web.standby import fetch_once

PLAYERS = ["甲", "乙", "丙", "丁", "戊", "己"]
PAIRS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n1,3,戊,己\n2,1,乙,丙\n2,2,丁,戊\n2,3,己,甲\n"
ADMIN, ADMIN_PASSWORD = "tech", "备用-站-7"
PICK = ("game", "red", "black", "winner", "result", "reason")


def standby_toml(
    path: Path, *, data_dir: Path, primary: str, password_file: str, port: int = 0
) -> Path:
    path.write_text(
        f'venue = "test"\ndata_dir = "{data_dir}"\n'
        f'[http]\nhost = "127.0.0.1"\nport = {port}\n'
        f'[standby]\nprimary = "{primary}"\nuser = "{ADMIN}"\n'
        f'password_file = "{password_file}"\nevery_s = 5\n',
        encoding="utf-8",
    )
    return path


def games_of(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: g[k] for k in PICK} for g in rows]


async def test_standby_copies_the_primary_and_is_promoted_once_it_is_gone(
    tmp_path: Path, start_station: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    accounts = [
        {"username": "arb1", "password_hash": hash_password("x-1"), "role": "chief"},
        {"username": ADMIN, "password_hash": hash_password(ADMIN_PASSWORD), "role": "admin"},
    ]
    config = station_config(tmp_path / "primary", account=accounts)
    primary = await start_station(config, connect=False)
    url = primary.web.url
    await primary.import_players("name\n" + "\n".join(PLAYERS) + "\n")
    await primary.import_pairings(PAIRS, send=False)
    boards = Boards(primary)
    boards.decide("1", "r1-b1", "red")
    boards.decide("2", "r1-b2", "flag")
    boards.decide("3", "r1-b3", "draw")
    await boards.flush()

    # relative to the standby's config file, as every path in a config is
    laptop = tmp_path / "laptop2"
    laptop.mkdir()
    (laptop / "primary.pw").write_text(ADMIN_PASSWORD + "\n", encoding="utf-8")
    port = server_port()
    cfg_file = standby_toml(
        laptop / "standby.toml",
        data_dir=laptop / "data",
        primary=url,
        password_file="primary.pw",
        port=port,
    )
    from venue_station.config import StationConfig

    standby_config = StationConfig.load(cfg_file)
    assert standby_config.standby is not None
    assert standby_config.standby.password_file == laptop / "primary.pw"
    db = sqlite_path(standby_config.db_url)
    assert db is not None

    first = await asyncio.to_thread(fetch_once, standby_config.standby, db)
    assert (first.report.players, first.report.games, first.report.decided) == (6, 6, 3)

    boards.decide("1", "r2-b1", "black")  # round 2 goes on after the first copy
    await boards.flush()
    second = await asyncio.to_thread(fetch_once, standby_config.standby, db)
    assert second.report.decided == 4
    assert not list(db.parent.glob("*.before-restore-*")), "a standby keeps no old copies"

    async with httpx.AsyncClient(base_url=url) as client:
        standings = (await client.get("/api/standings")).json()
    games = games_of(await primary.require_store().games())

    # the primary still answers: promoting now would put two stations on the same boards
    # (on a thread: the primary answers on this test's loop)
    assert await asyncio.to_thread(main, ["station", "promote", "--config", str(cfg_file)]) == 2
    assert "still answers" in capsys.readouterr().err

    await primary.stop()  # the primary's laptop dies
    # the technician's one command, a real process: it runs the station on the last copy
    proc = subprocess.Popen(
        [sys.executable, "-m", "qizhong", "station", "promote", "--config", str(cfg_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ},
    )
    try:
        promoted_url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=promoted_url) as client:
            end = time.monotonic() + 30
            while True:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                try:
                    if (await client.get("/api/station")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < end, "the promoted station never answered"
                await asyncio.sleep(0.2)
            assert (await client.get("/api/standings")).json() == standings
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=20)[0].decode()
    assert "promoted" in out, out
    assert proc.returncode == 0, out

    # what the promoted station stored is the primary's, game for game
    again: Station = await start_station(standby_config, serve_http=False, connect=False)
    assert games_of(await again.require_store().games()) == games


async def test_only_an_admin_gets_the_copy_and_a_failed_copy_keeps_the_last(
    tmp_path: Path, start_station: Any
) -> None:
    accounts = [
        {"username": "arb1", "password_hash": hash_password("x-1"), "role": "chief"},
        {"username": ADMIN, "password_hash": hash_password(ADMIN_PASSWORD), "role": "admin"},
    ]
    primary = await start_station(station_config(tmp_path / "p", account=accounts), connect=False)
    url = f"http://127.0.0.1:{primary.web.port}"
    async with httpx.AsyncClient(base_url=url) as client:
        assert (await client.get("/api/backup")).status_code == 401
        login = await client.post("/api/auth/login", json={"username": "arb1", "password": "x-1"})
        assert login.status_code == 200
        refused = await client.get("/api/backup")
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"

    pw = tmp_path / "pw"
    pw.write_text(ADMIN_PASSWORD, encoding="utf-8")
    db = tmp_path / "standby" / "station.db"
    good = StandbyConfig(primary=url, user=ADMIN, password_file=pw)
    await asyncio.to_thread(fetch_once, good, db)
    kept = db.read_bytes()

    # `qizhong station standby` as the technician leaves it running: copies until stopped
    laptop = tmp_path / "laptop2"
    laptop.mkdir()
    (laptop / "pw").write_text(ADMIN_PASSWORD, encoding="utf-8")
    cfg_file = standby_toml(
        laptop / "standby.toml", data_dir=laptop / "data", primary=url, password_file="pw"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "qizhong", "station", "standby", "--config", str(cfg_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        end = time.monotonic() + 30
        while not (laptop / "data" / "station.db").exists():
            assert proc.poll() is None and time.monotonic() < end, "no copy"
            await asyncio.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=20)[0].decode()
    assert proc.returncode == 0 and "standby stopped after 1 copies" in out, out

    pw_bad = tmp_path / "pw-bad"
    pw_bad.write_text("wrong", encoding="utf-8")
    bad = StandbyConfig(primary=url, user=ADMIN, password_file=pw_bad)
    with pytest.raises(StationError, match="refused"):
        await asyncio.to_thread(fetch_once, bad, db)
    assert db.read_bytes() == kept
    await primary.stop()
    with pytest.raises(StationError, match="cannot reach"):
        await asyncio.to_thread(fetch_once, good, db)
    assert db.read_bytes() == kept
