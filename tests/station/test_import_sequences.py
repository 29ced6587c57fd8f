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

from clock_service.trf.document import Trf
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


async def _win(station: Station, game: dict[str, Any], seq: int) -> None:
    assert station.ingest is not None
    won = {"winner": "red", "reason": "resignation"}
    ev = envelope(game["board"], seq, type="result", data=won, game=game["game"],
                  txn=decision_txn(station, game["board"], "result", won))  # fmt: skip
    station.ingest.handle(f"qz/v1/test/board/{game['board']}/event", json.dumps(ev).encode())
    await station.ingest.flush()


async def test_a_round_replaced_behind_a_played_round_ends_the_trf_at_it(
    tmp_path: Path, start_station: Any
) -> None:
    """The cause of the sequence above: a round without results (here replaced, its results
    voided) before a round with one. A TRF marks only its last round as not played yet, so the
    export is round 1's file (paired, being played) — its points the standings' after round 1 —
    and round 2's win is written once round 1 has its results again."""
    station: Station = await start_station(station_config(tmp_path), connect=False)
    two_rounds = (
        "round,board,red,black\n1,1,甲一,乙二\n1,2,丙三,丁四\n2,1,甲一,丙三\n2,2,乙二,丁四\n"
    )
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        h = {"X-CSRF-Token": r.json()["csrf"]}
        path, body = STEPS["players"]
        assert (await client.post(path, content=body, headers=h)).status_code == 200
        r = await client.post("/api/pairings?send=0", content=two_rounds.encode(), headers=h)
        assert r.status_code == 200, r.text
        games = {g["game"]: g for g in await station.require_store().games()}
        for seq, game in enumerate(("r1-b1", "r1-b2", "r2-b1"), 1):
            await _win(station, games[game], seq)
        assert (await client.get("/api/export/tournament.trf")).status_code == 200
        again = "round,board,red,black\n1,1,甲一,丁四\n1,2,丙三,乙二\n".encode()
        r = await client.post("/api/pairings?send=0&replace_round=1", content=again, headers=h)
        assert r.status_code == 200, r.text
        assert r.json().get("voided_results"), r.text

        export = await client.get("/api/export/tournament.trf")
        assert export.status_code == 200, export.text
        trf = Trf.parse(export.text)
        name = {p.start_rank: p.name for p in trf.players}
        assert trf.paired_round() == 1  # the new round 1, paired, not played
        pairs = [(name[w], name[b]) for w, b in trf.pairings(1)]
        assert pairs == [("甲一", "丁四"), ("丙三", "乙二")]
        points = {p.name: float(p.points) for p in trf.players}
        standings = (await client.get("/api/standings?round=1")).json()["standings"]
        assert points == {row["player"]: float(row["points"]) for row in standings}
        assert set(points.values()) == {0.0}  # round 1's results voided, round 2's waits

        games = {g["game"]: g for g in await station.require_store().games()}
        for seq, game in enumerate(("r1-b1", "r1-b2"), 10):
            await _win(station, games[game], seq)
        export = await client.get("/api/export/tournament.trf")
        assert export.status_code == 200, export.text
        points = {p.name: float(p.points) for p in Trf.parse(export.text).players}
        standings = (await client.get("/api/standings")).json()["standings"]
        assert points == {row["player"]: float(row["points"]) for row in standings}
        assert points["甲一"] == 4.0  # round 1 (new pairing) and round 2 both won


async def test_a_half_point_bye_for_the_next_round_while_a_round_is_played(
    tmp_path: Path, start_station: Any
) -> None:
    """The same cause without a replaced round: a half-point bye given for round 2 while a
    game of round 1 has no result made the export 'after round 2' with round 1 blank. The file
    is round 1's until it is done (the H, which would count in Points, waits), then round 2's."""
    station: Station = await start_station(station_config(tmp_path), connect=False)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        h = {"X-CSRF-Token": r.json()["csrf"]}
        for step in ("players", "pairings"):
            path, body = STEPS[step]
            assert (await client.post(path, content=body, headers=h)).status_code == 200
        games = {g["game"]: g for g in await station.require_store().games()}
        await _win(station, games["r1-b1"], 1)
        bye = {"round": 2, "player": "乙二", "kind": "half"}
        assert (await client.post("/api/tournament/bye", json=bye, headers=h)).status_code == 200

        export = await client.get("/api/export/tournament.trf")
        assert export.status_code == 200, export.text
        trf = Trf.parse(export.text)
        assert trf.paired_round() == 1 and trf.absent(2) == {}
        points = {p.name: float(p.points) for p in trf.players}
        standings = (await client.get("/api/standings?round=1")).json()["standings"]
        assert points == {row["player"]: float(row["points"]) for row in standings}
        assert points["甲一"] == 2.0 and points["乙二"] == 0.0

        await _win(station, games["r1-b2"], 2)
        export = await client.get("/api/export/tournament.trf")
        assert export.status_code == 200, export.text
        points = {p.name: float(p.points) for p in Trf.parse(export.text).players}
        assert points["乙二"] == 1.0  # round 1 lost, round 2's half-point bye
        standings = (await client.get("/api/standings")).json()["standings"]
        assert points == {row["player"]: float(row["points"]) for row in standings}
