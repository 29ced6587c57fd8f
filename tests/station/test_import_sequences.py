"""Issue 25: whatever the order of imports (players CSV, pairings CSV, a TRF of this or another
event, a pairs list), the standings and the TRF export keep answering (never a 400 or 500), and
a refused import answers a 4xx with a code."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, decision_txn, envelope, station_config

from venue_station.domain.station import Station

GOLDEN = Path(__file__).parents[1] / "trf" / "golden"
STEPS: dict[str, tuple[str, bytes]] = {
    "players": ("/api/players", "name\n甲一\n乙二\n丙三\n丁四\n".encode()),
    "pairings": (
        "/api/pairings?send=0",
        "round,board,red,black\n1,1,甲一,乙二\n1,2,丙三,丁四\n".encode(),
    ),
    "trf": ("/api/trf?send=0", (GOLDEN / "xiangqi-r3.trf").read_bytes()),
    "trf_paired": ("/api/trf?send=0", (GOLDEN / "xiangqi-r4-paired.trf").read_bytes()),
    "pairs": ("/api/pairs?send=0", b"2\n1 2\n3 4\n"),
}
ORDERS = [
    ("players", "pairings", "result", "trf", "pairs"),
    ("players", "pairings", "result", "trf_paired", "pairs"),
    ("trf", "players", "pairings", "result", "trf_paired"),
    ("trf_paired", "result", "pairs", "trf", "players", "pairings"),
    *itertools.islice(itertools.permutations(("players", "trf", "pairs", "pairings")), 0, 24, 5),
]


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(o) for o in ORDERS])
async def test_standings_and_export_answer_after_any_imports(
    order: tuple[str, ...], tmp_path: Path, start_station: Any
) -> None:
    station: Station = await start_station(station_config(tmp_path), connect=False)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        h = {"X-CSRF-Token": r.json()["csrf"]}
        for step in order:
            if step == "result":
                assert station.ingest is not None
                games = await station.require_store().games()
                if games:
                    g = games[0]
                    won = {"winner": "red", "reason": "resignation"}
                    ev = envelope(g["board"], 1, type="result", data=won, game=g["game"],
                                  txn=decision_txn(station, g["board"], "result", won))  # fmt: skip
                    station.ingest.handle(
                        f"qz/v1/test/board/{g['board']}/event", json.dumps(ev).encode()
                    )
                    await station.ingest.flush()
                continue
            path, body = STEPS[step]
            r = await client.post(path, content=body, headers=h)
            assert r.status_code < 500, (step, r.text)
            if r.status_code >= 400:
                assert r.json()["code"] and r.json()["error"], (step, r.text)
            standings = await client.get("/api/standings")
            assert standings.status_code == 200, (order, step, standings.text)
            export = await client.get("/api/export/tournament.trf")
            assert export.status_code == 200, (order, step, export.text)
