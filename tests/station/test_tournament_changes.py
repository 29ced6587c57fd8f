"""Issue 25, the tournament's life cycle: withdraw (退赛) and re-admit a player, give a bye (full,
half, zero), every change audited (who, when, what, before -> after), the last one undone —
over HTTP as the pages call it, on a station without a broker (its events fed as a node's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, arbiter_txn, envelope, station_config

from venue_station.domain.station import Station

PLAYERS = "name\n甲一\n乙二\n丙三\n丁四\n戊五\n己六\n"
ROUND_1 = "round,board,red,black\n1,1,甲一,乙二\n1,2,丙三,丁四\n1,3,戊五,己六\n"
ROUND_2 = "round,board,red,black\n2,1,乙二,丙三\n2,2,丁四,甲一\n2,3,己六,戊五\n"


@pytest.fixture
async def station(tmp_path: Path, start_station: Any) -> Station:
    started: Station = await start_station(station_config(tmp_path), connect=False)
    return started


async def _login(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


async def _entrants(client: httpx.AsyncClient) -> dict[str, Any]:
    body = (await client.get("/api/trf/entrants")).json()
    return {
        "withdrawn": sorted(e["player"] for e in body["entrants"] if e["withdrawn"]),
        "rank": {e["player"]: e["start_rank"] for e in body["entrants"]},
        "byes": body["byes"],
    }


async def test_withdraw_bye_audit_and_undo(station: Station) -> None:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        h = await _login(client)
        csv = {**h, "Content-Type": "text/csv"}
        assert (await client.post("/api/players", content=PLAYERS.encode(), headers=csv)).is_success
        r = await client.post("/api/pairings?send=0", content=ROUND_1.encode(), headers=csv)
        assert r.status_code == 200, r.text

        # 己六 withdraws: shown as withdrawn, paired by no import, absent in the TRF.
        r = await client.post("/api/tournament/withdraw", json={"player": "己六"}, headers=h)
        assert r.status_code == 200 and r.json()["withdrawn"] is True, r.text
        seen = await _entrants(client)
        assert seen["withdrawn"] == ["己六"]
        assert (await client.get("/api/standings")).json()["withdrawn"] == ["己六"]
        again = await client.post("/api/tournament/withdraw", json={"player": "己六"}, headers=h)
        assert again.status_code == 409 and again.json()["code"] == "already_withdrawn"
        r = await client.post("/api/pairings?send=0", content=ROUND_2.encode(), headers=csv)
        assert r.status_code == 409 and r.json()["code"] == "player_withdrawn", r.text
        assert r.json()["args"]["player"] == "己六"
        assert await station.require_store().games(2) == []
        trf = (await client.get("/api/export/tournament.trf?round=1")).text
        rank = seen["rank"]["己六"]
        assert any(
            line.startswith("240 Z") and f"{rank:04d}" in line for line in trf.splitlines()
        ), trf

        # A half-point bye for 戊五 in round 2; none for a player who plays that round.
        r = await client.post(
            "/api/tournament/bye", json={"round": 2, "player": "戊五", "kind": "half"}, headers=h
        )
        assert r.status_code == 200, r.text
        five = seen["rank"]["戊五"]
        assert {"round": 2, "player": five, "kind": "H"} in (await _entrants(client))["byes"]
        paired = await client.post(
            "/api/tournament/bye", json={"round": 1, "player": "甲一", "kind": "full"}, headers=h
        )
        assert paired.status_code == 409 and paired.json()["code"] == "player_paired"
        nobody = await client.post(
            "/api/tournament/bye", json={"round": 2, "player": "无名", "kind": "zero"}, headers=h
        )
        assert nobody.status_code == 404 and nobody.json()["code"] == "no_player"

        # The audit: who, when, what, newest first, before -> after.
        log = (await client.get("/api/tournament/audit")).json()["audit"]
        assert [e["what"] for e in log] == ["bye", "withdraw", "import_pairings"]
        assert {e["user"] for e in log} == {ARBITER} and all(e["at_ms"] > 0 for e in log)
        assert (
            "己六" in log[1]["after"]["withdrawn"] and "己六" not in log[1]["before"]["withdrawn"]
        )

        # Undo, newest first: the bye, the withdrawal, then the import (no game has begun).
        r = await client.post("/api/tournament/undo", json={}, headers=h)
        assert r.status_code == 200 and r.json()["what"] == "bye", r.text
        assert (await _entrants(client))["byes"] == []
        r = await client.post("/api/tournament/undo", json={}, headers=h)
        assert r.json()["what"] == "withdraw", r.text
        assert (await _entrants(client))["withdrawn"] == []
        r = await client.post("/api/tournament/undo", json={}, headers=h)
        assert r.json()["what"] == "import_pairings", r.text
        assert await station.require_store().games(1) == []
        r = await client.post("/api/tournament/undo", json={}, headers=h)
        assert r.status_code == 409 and r.json()["code"] == "nothing_to_undo"

        # An import whose games have begun is not undone (that would orphan a played game).
        r = await client.post("/api/pairings?send=0", content=ROUND_1.encode(), headers=csv)
        assert r.status_code == 200, r.text
        assert station.ingest is not None
        ev = envelope("1", 1, type="started", data={}, txn=arbiter_txn(station, "1", "start"))
        station.ingest.handle("qz/v1/test/board/1/event", json.dumps(ev).encode())
        await station.ingest.flush()
        r = await client.post("/api/tournament/undo", json={}, headers=h)
        assert r.status_code == 409 and r.json()["code"] == "undo_games_begun", r.text
        assert len(await station.require_store().games(1)) == 3
