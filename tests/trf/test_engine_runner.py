"""The configured pairing engine as the station runs it: bounded (time, output), in a folder of
its own, without the station's environment; only the chief may run or approve; a proposal is not
imported over changed results; without an engine the action says so."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, station_config
from support.trf_boards import Boards

from qizhong.cli.main import main
from venue_station.auth import hash_password
from venue_station.config import StationConfig
from venue_station.domain.station import Station
from venue_station.domain.trf_state import load_state, save_state
from venue_station.errors import ConfigError

CHIEF, CHIEF_PASSWORD = "chief7", "engine-runner-7"
ENGINE = Path(__file__).resolve().parents[1] / "support" / "trf_engine.py"
PLAYERS = "".join(
    f"001 {i:>4} m    {'选手' + str(i):<33} {2400 - i:>4} CHN {'':>11} {'':<10}  0.0\r\n"
    for i in range(1, 6)
)
ENTRY = "012 引擎\r\n142 5\r\nXXR 5\r\n162  W 2.0    D 1.0\r\n" + PLAYERS


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "engine.sh"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


async def started(
    tmp_path: Path, start_station: Any, pairing: dict[str, Any] | None, db_url: str
) -> Station:
    accounts = [
        {"username": ARBITER, "password_hash": hash_password(ARBITER_PASSWORD), "role": "arbiter"},
        {"username": CHIEF, "password_hash": hash_password(CHIEF_PASSWORD), "role": "chief"},
    ]
    kw: dict[str, Any] = {"database_url": db_url, "regulation": "wulong-2015", "account": accounts}
    if pairing is not None:
        kw["pairing"] = pairing
    station: Station = await start_station(station_config(tmp_path, **kw), connect=False)
    return station


async def login(client: httpx.AsyncClient, user: str, password: str) -> dict[str, str]:
    r = await client.post("/api/auth/login", json={"username": user, "password": password})
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


async def propose(station: Station) -> httpx.Response:
    async with httpx.AsyncClient(base_url=station.http_url, timeout=60) as client:
        chief = await login(client, CHIEF, CHIEF_PASSWORD)
        r = await client.post("/api/trf?send=0", content=ENTRY.encode(), headers=chief)
        assert r.status_code == 200, r.text
        return await client.post("/api/pairing/propose", headers=chief)


def test_an_engine_needs_a_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pairing"):
        StationConfig.from_dict({"venue": "v", "pairing": {"engine": "javafo"}})
    with pytest.raises(ConfigError, match=r"pairing\.engine"):
        StationConfig.from_dict({"venue": "v", "pairing": {"engine": "swiss", "path": "x"}})
    (tmp_path / "station.toml").write_text(
        'venue = "v"\n[pairing]\nengine = "bbpPairings"\npath = "bin/bbp"\ntimeout_s = 5\n'
    )
    cfg = StationConfig.load(tmp_path / "station.toml")
    assert cfg.pairing.path == tmp_path / "bin" / "bbp" and cfg.pairing.timeout_s == 5


async def test_without_an_engine(tmp_path: Path, db_url: str, start_station: Any) -> None:
    station = await started(tmp_path, start_station, None, db_url)
    r = await propose(station)
    assert r.status_code == 409 and "no pairing engine is configured" in r.json()["error"]


@pytest.mark.parametrize(
    ("body", "limit", "word"),
    [
        ("sleep 30", {"timeout_s": 0.5}, "did not answer within 0.5 s"),
        ("echo 'Error parsing file input.trf: no' >&2; exit 3", {}, "exited with 3: Error parsing"),
        ("head -c 5000 /dev/zero", {"max_output_bytes": 1000}, "more than 1000 bytes"),
        ("echo 3 > output.txt", {}, "pairs list"),
        ("true", {}, "wrote no output.txt"),
    ],
)
async def test_an_engine_that_fails(
    tmp_path: Path, db_url: str, start_station: Any, body: str, limit: dict, word: str
) -> None:
    engine = {"engine": "bbpPairings", "path": str(script(tmp_path, body)), **limit}
    station = await started(tmp_path, start_station, engine, db_url)
    r = await propose(station)
    assert r.status_code == 502 and word in r.json()["error"], r.text


async def test_the_engine_sees_its_folder_and_no_secrets(
    tmp_path: Path, db_url: str, start_station: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QZ_SECRET_FOR_TEST", "do-not-leak")
    body = "ls > seen; env >> seen; ls /proc/self/fd >> seen; cat seen >&2; exit 1"
    engine = {"engine": "javafo", "path": str(script(tmp_path, body))}
    station = await started(tmp_path, start_station, engine, db_url)
    assert os.environ["QZ_SECRET_FOR_TEST"]
    error = (await propose(station)).json()["error"]
    assert "input.trf" in error and "do-not-leak" not in error and "QZ_SECRET" not in error
    fds = [x for x in error.split() if x.isdigit()]
    assert set(fds) <= {"0", "1", "2", "3"}, error  # stdin, stdout, stderr, ls's own


async def test_only_the_chief_and_not_over_changed_results(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    wrapper = script(tmp_path, f'exec "{sys.executable}" "{ENGINE}" "$@"')
    station = await started(
        tmp_path, start_station, {"engine": "bbpPairings", "path": str(wrapper)}, db_url
    )
    async with httpx.AsyncClient(base_url=station.http_url, timeout=60) as client:
        arbiter = await login(client, ARBITER, ARBITER_PASSWORD)
        assert (await client.post("/api/pairing/propose", headers=arbiter)).status_code == 403
        chief = await login(client, CHIEF, CHIEF_PASSWORD)
        assert (await client.post("/api/trf?send=0", content=ENTRY, headers=chief)).is_success
        no = await client.post("/api/pairing/approve?send=0", headers=chief)
        assert no.status_code == 409 and "no proposal" in no.text
        first = (await client.post("/api/pairing/propose", headers=chief)).json()
        assert first["round"] == 1 and first["boards"][-1]["black"] == 0  # 5 players: a bye
        assert (await client.post("/api/pairing/approve", headers=arbiter)).status_code == 403
        assert (await client.post("/api/pairing/approve?send=0", headers=chief)).is_success
        # round 1 has no results yet: the engine would refuse, the station says why first
        busy = await client.post("/api/pairing/propose", headers=chief)
        assert busy.status_code == 409 and "have no result yet" in busy.text
        boards = Boards(station)
        for n in range(1, 3):
            boards.decide(str(n), f"r1-b{n}", "red")
        await boards.flush()
        second = await client.post("/api/pairing/propose", headers=chief)
        assert second.status_code == 200 and second.json()["round"] == 2, second.text
        # after the proposal, player 1 withdraws: the export is not what the engine read
        store = station.require_store()
        state = await load_state(store)
        state.byes.append({"round": 2, "player": 1, "kind": "Z"})
        await save_state(store, state)
        stale = await client.post("/api/pairing/approve?send=0", headers=chief)
        assert stale.status_code == 409 and "changed since the engine ran" in stale.text
        assert (await client.get("/api/games", params={"round": 2})).json() in ([], {"games": []})
        await client.post("/api/pairing/discard", headers=chief)
        state_now = (await client.get("/api/pairing/proposal")).json()
        assert state_now == {"engine": "bbpPairings", "proposal": None}


async def test_the_command_line_pairs_and_approves(
    tmp_path: Path, db_url: str, start_station: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    wrapper = script(tmp_path, f'exec "{sys.executable}" "{ENGINE}" "$@"')
    station = await started(
        tmp_path, start_station, {"engine": "bbpPairings", "path": str(wrapper)}, db_url
    )
    entry = tmp_path / "players.trf"
    entry.write_bytes(ENTRY.encode())
    session = ["--station", station.http_url, "--session", str(tmp_path / "s.json")]
    monkeypatch.setenv("QZ_PASSWORD", CHIEF_PASSWORD)
    assert await asyncio.to_thread(main, ["trf", "login", *session, "--user", CHIEF]) == 0
    assert await asyncio.to_thread(main, ["trf", "import", *session, str(entry)]) == 0
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["trf", "pair", *session]) == 0
    line = capsys.readouterr().out
    assert line.startswith("round 1 proposed by bbpPairings: ") and " bye " in line
    assert line.count("\n") == 1
    assert await asyncio.to_thread(main, ["trf", "approve", *session, "--no-send"]) == 0
    assert capsys.readouterr().out == "round 1: 2 games, 1 byes stored\n"
    assert len(await station.require_store().games(1)) == 2
    assert await asyncio.to_thread(main, ["trf", "pair", *session]) == 1
    assert "round 1: 2 games have no result yet" in capsys.readouterr().err
