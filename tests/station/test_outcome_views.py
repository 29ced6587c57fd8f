"""Every view of a game's outcome agrees (issue 14): one confirmed result, counted everywhere;
pending proposals (a board's result or ruling sent without the station's command, so stored
``unverified``; a flag's loss) shown as pending where a view has a status, and counted nowhere:
``/api/games``, ``/api/games/{g}``, ``/api/results``, the results CSV, the standings and the TRF.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import httpx
from support.station import decision_txn, envelope, station_config

from venue_station.domain.station import Station

PAIRINGS = (
    "round,board,red,black\n"
    "1,1,王天一,郑惟桐\n"  # confirmed: red wins
    "1,2,许银川,吕钦\n"  # a board's result without the station's command: pending, unverified
    "1,3,赵国荣,洪智\n"  # a flag, and a board's own 'confirmed' ruling on it: still pending
)
CONFIRMED, UNVERIFIED, FLAGGED = "r1-b1", "r1-b2", "r1-b3"


def feed(station: Station, ev: dict[str, Any]) -> None:
    assert station.ingest is not None
    station.ingest.handle(f"qz/v1/test/board/{ev['board']}/event", json.dumps(ev).encode())


async def _games_stored(station: Station) -> None:
    await station.import_pairings(PAIRINGS, send=False)
    resign = {"winner": "red", "reason": "resign"}
    feed(
        station,
        envelope(
            "1",
            1,
            game=CONFIRMED,
            type="result",
            data=resign,
            txn=decision_txn(station, "1", "result", resign),
        ),
    )
    feed(station, envelope("2", 1, game=UNVERIFIED, type="result", data=resign))
    feed(station, envelope("3", 1, game=FLAGGED, type="flag", data={"side": "black"}))
    proposal = {"winner": "red", "reason": "flag", "status": "pending"}
    feed(station, envelope("3", 2, game=FLAGGED, type="result", data=proposal))
    ruling = {"winner": "red", "reason": "flag", "status": "confirmed", "ref": 2}
    feed(station, envelope("3", 3, game=FLAGGED, type="result", data=ruling))
    assert station.ingest is not None
    await station.ingest.flush()
    assert station.store is not None
    stored = await station.store.events(board="2", types=["result"])
    assert [e["data"].get("unverified") for e in stored] == [True]  # the premise: unverified


async def test_every_view_counts_the_confirmed_result_and_no_pending_one(
    tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path), connect=False)
    await _games_stored(station)
    win, loss = station.scoring.win, station.scoring.loss
    async with httpx.AsyncClient(base_url=station.http_url, timeout=10) as client:
        # /api/games: the confirmed one with its points, the others marked pending, no points
        games = {g["game"]: g for g in (await client.get("/api/games?round=1")).json()["games"]}
        one = games[CONFIRMED]
        assert (one["status"], one["result"], one["winner"]) == ("confirmed", "1-0", "red")
        assert (one["red_points"], one["black_points"]) == (win, loss)
        for gid in (UNVERIFIED, FLAGGED):
            g = games[gid]
            assert (g["status"], g["proposed"], g["result"], g["winner"]) == (
                "pending",
                "1-0",
                None,
                None,
            ), gid
            assert (g["red_points"], g["black_points"]) == (None, None), gid
            # /api/games/{g} says the same
            single = (await client.get(f"/api/games/{gid}")).json()
            assert (single["status"], single["result"], single["red_points"]) == (
                "pending",
                None,
                None,
            ), gid
        single = (await client.get(f"/api/games/{CONFIRMED}")).json()
        assert (single["status"], single["result"]) == ("confirmed", "1-0")

        # /api/results and the CSV: the confirmed result only
        rows = {r["game"]: r for r in (await client.get("/api/results?round=1")).json()["results"]}
        assert (rows[CONFIRMED]["result"], rows[CONFIRMED]["red_points"]) == ("1-0", win)
        for gid in (UNVERIFIED, FLAGGED):
            assert (rows[gid]["result"], rows[gid]["red_points"]) == ("", None), gid
        text = (await client.get("/api/export/rounds/1/results.csv")).text
        csv_rows = {r["game"]: r for r in csv.DictReader(io.StringIO(text))}
        assert csv_rows[CONFIRMED]["result"] == "1-0"
        assert csv_rows[CONFIRMED]["red_points"] == str(win)
        for gid in (UNVERIFIED, FLAGGED):
            assert (csv_rows[gid]["result"], csv_rows[gid]["red_points"]) == ("", ""), gid

        # the standings: one game played, by the confirmed result's two players
        body = (await client.get("/api/standings")).json()
        table = {r["player"]: r for r in body["standings"]}
        assert (table["王天一"]["points"], table["王天一"]["games"]) == (win, 1)
        assert (table["郑惟桐"]["points"], table["郑惟桐"]["games"]) == (loss, 1)
        for name in ("许银川", "吕钦", "赵国荣", "洪智"):
            assert (table.get(name, {}).get("points", 0), table.get(name, {}).get("games", 0)) == (
                0,
                0,
            ), name

        # the TRF: round 1 has a result for the confirmed pair only
        trf = (await client.get("/api/export/tournament.trf?round=1")).text
    cells = _round_one_results(trf)
    assert (cells["王天一"], cells["郑惟桐"]) == ("1", "0")
    for name in ("许银川", "吕钦", "赵国荣", "洪智"):
        assert cells[name] == "", name


def _round_one_results(trf: str) -> dict[str, str]:
    """player name -> the result character of round 1 on the player's 001 line (FIDE TRF:
    the round cells start at column 92, ``oooo c r``; the result is the cell's 8th column)."""
    out = {}
    for line in trf.splitlines():
        if line.startswith("001 "):
            name = line[14:47].strip()
            out[name] = line[91:101][7:8].strip()
    return out
