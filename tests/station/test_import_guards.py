"""Issue 25, "no file can move a result": an import never touches a round that has results
unless the chief chooses to replace it (and then the results are voided: kept, marked, no longer
counted); a file of another event is refused naming the mismatch; a dry run previews; a refused
file answers a 4xx with a code and a message and changes nothing; standings and the TRF export
keep answering after every import.

A station without a broker (its events fed as a node's), over HTTP as the pairing page calls it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, decision_txn, envelope, station_config

from venue_station.domain.station import Station
from venue_station.store.round_import import voided_games

GOLDEN = Path(__file__).parents[1] / "trf" / "golden"
PLAYERS = "name\n甲一\n乙二\n丙三\n丁四\n戊五\n己六\n"
PAIRINGS = "round,board,red,black\n1,1,甲一,乙二\n1,2,丙三,丁四\n1,3,戊五,己六\n"
# The same round paired otherwise: 甲一's win on board 1 would go to 丙三.
REPAIRED = "round,board,red,black\n1,1,丙三,乙二\n1,2,甲一,丁四\n1,3,戊五,己六\n"


@pytest.fixture
async def station(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    config = station_config(tmp_path, database_url=db_url)  # SQLite and PostgreSQL
    started: Station = await start_station(config, connect=False)
    return started


async def _login(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


async def _seen(client: httpx.AsyncClient, station: Station) -> dict[str, Any]:
    """Everything a person would look at after an import."""
    games = (await client.get("/api/games", params={"round": 1})).json()["games"]
    standings = await client.get("/api/standings")
    trf = await client.get("/api/export/tournament.trf")
    assert standings.status_code == 200, standings.text
    assert trf.status_code == 200, trf.text
    return {
        "games": [(g["board"], g["red"], g["black"], g["result"]) for g in games],
        "standings": {r["player"]: r["points"] for r in standings.json()["standings"]},
        "entrants": (await client.get("/api/trf/entrants")).json(),
        "players": sorted(await station.require_store().player_names()),
        "trf": trf.text,
    }


async def _round_one_with_a_result(client: httpx.AsyncClient, station: Station) -> None:
    h = await _login(client)
    csv = {**h, "Content-Type": "text/csv"}
    assert (await client.post("/api/players", content=PLAYERS.encode(), headers=csv)).is_success
    r = await client.post("/api/pairings?send=0", content=PAIRINGS.encode(), headers=csv)
    assert r.status_code == 200, r.text
    assert station.ingest is not None
    won = {"winner": "red", "reason": "resignation"}
    ev = envelope("1", 1, type="result", data=won, txn=decision_txn(station, "1", "result", won))
    station.ingest.handle("qz/v1/test/board/1/event", json.dumps(ev).encode())
    await station.ingest.flush()


async def test_a_round_with_results_is_never_moved_by_a_file(station: Station) -> None:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        await _round_one_with_a_result(client, station)
        h = {**await _login(client), "Content-Type": "text/csv"}
        before = await _seen(client, station)
        assert before["games"][0] == ("1", "甲一", "乙二", "1-0")
        assert before["standings"]["甲一"] == 2

        bad_files = [
            ("/api/pairings?send=0", REPAIRED, "round_has_results"),
            ("/api/pairs?send=0&round=1", "3\n3 2\n1 4\n5 6\n", "round_has_results"),
            # a players TRF of another event: its start ranks name other players
            ("/api/trf?send=0", (GOLDEN / "xiangqi-r3.trf").read_text(), "players_mismatch"),
            # a pairs list of another event: four of the six players neither paired nor a bye
            ("/api/pairs?send=0&round=2", "1\n1 2\n", "players_unpaired"),
            ("/api/pairings?send=0", "round,board,red,black\n1,1,甲一\n", "bad_csv"),
            ("/api/trf?send=0", "", "bad_trf"),
        ]
        for path, body, code in bad_files:
            r = await client.post(path, content=body.encode(), headers=h)
            assert 400 <= r.status_code < 500, (path, r.status_code, r.text)
            assert r.json()["code"] == code and r.json()["error"], (path, r.json())
            assert await _seen(client, station) == before, f"{path} ({code}) changed the store"
        unpaired = await client.post("/api/pairs?send=0&round=2", content=b"1\n1 2\n", headers=h)
        assert unpaired.json()["args"]["count"] == 4

        # The preview says what replacing round 1 would do, and does nothing.
        r = await client.post(
            "/api/pairings?send=0&replace_round=1&dry_run=1", content=REPAIRED.encode(), headers=h
        )
        assert r.status_code == 200, r.text
        assert r.json()["dry_run"] is True and r.json()["voided_results"] == ["r1-b1"]
        assert await _seen(client, station) == before

        # The chief chooses to replace round 1: its result is voided, kept, and counts nowhere.
        r = await client.post(
            "/api/pairings?send=0&replace_round=1", content=REPAIRED.encode(), headers=h
        )
        assert r.status_code == 200, r.text
        assert r.json()["voided_results"] == ["r1-b1"]
        after = await _seen(client, station)
        assert after["games"][0] == ("1", "丙三", "乙二", None)  # no win credited to 丙三
        assert after["standings"].get("丙三", 0) == 0 and after["standings"].get("甲一", 0) == 0
        [voided] = await voided_games(station.require_store().engine)
        assert (voided["game"], voided["red"], voided["black"], voided["result"]) == (
            "r1-b1",
            "甲一",
            "乙二",
            "1-0",
        )
        kept = await station.require_store().game_events(voided["events_game"])
        assert [e["type"] for e in kept] == ["result"]  # the fact is kept, not deleted


async def test_start_ranks_are_never_reassigned_by_a_players_file(station: Station) -> None:
    body = (GOLDEN / "xiangqi-r3.trf").read_bytes()
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        h = await _login(client)
        assert (await client.post("/api/trf?send=0", content=body, headers=h)).status_code == 200
        ranks = (await client.get("/api/trf/entrants")).json()
        # The same file with two players' start ranks swapped: refused, ranks as they were.
        text = body.decode()
        swapped = text.replace("王天一", "@@").replace("郑惟桐", "王天一").replace("@@", "郑惟桐")
        r = await client.post("/api/trf?send=0", content=swapped.encode(), headers=h)
        assert r.status_code == 409 and r.json()["code"] == "players_mismatch", r.text
        assert r.json()["args"]["start_rank"] in (1, 2)
        assert (await client.get("/api/trf/entrants")).json() == ranks
        # The same file again is fine (nothing moves).
        assert (await client.post("/api/trf?send=0", content=body, headers=h)).status_code == 200
        assert (await client.get("/api/trf/entrants")).json() == ranks


async def test_a_players_file_previewed_stores_nothing(station: Station) -> None:
    """docs/pairing.md: ``?dry_run=1`` on any import stores nothing (an outsider's preview of
    a players file with a ``local`` tag put the player in the local group's prize list)."""
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        h = {**await _login(client), "Content-Type": "text/csv"}
        assert (await client.post("/api/players", content=PLAYERS.encode(), headers=h)).is_success
        before = await _seen(client, station)
        tags = await station.require_store().reads.player_tags()
        tagged = "name,club,rating,tags\n甲一,,,local\n新人,,,u14\n"
        r = await client.post("/api/players?dry_run=1", content=tagged.encode(), headers=h)
        assert r.status_code == 200, r.text
        assert r.json()["dry_run"] is True and r.json()["imported"] == 2
        assert await _seen(client, station) == before
        assert await station.require_store().reads.player_tags() == tags
        # the same file for real: stored
        r = await client.post("/api/players", content=tagged.encode(), headers=h)
        assert r.status_code == 200 and "dry_run" not in r.json()
        assert "新人" in await station.require_store().player_names()


ROUND_TWO = "round,board,red,black\n2,1,乙二,丙三\n2,2,丁四,甲一\n2,3,己六,戊五\n"


async def test_no_round_is_paired_while_an_earlier_game_waits_for_a_ruling(
    station: Station,
) -> None:
    """An outsider's Wulong round: a flag left unruled in round 2, round 3 imported and sent;
    the flag could never be ruled any more (its board had the next game), the game stayed
    pending, the standings left it out and the TRF for round 4 was refused for good."""
    assert station.ingest is not None
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        h = await _login(client)
        csv = {**h, "Content-Type": "text/csv"}
        assert (await client.post("/api/players", content=PLAYERS.encode(), headers=csv)).is_success
        r = await client.post("/api/pairings?send=0", content=PAIRINGS.encode(), headers=csv)
        assert r.status_code == 200, r.text
        # board 1: red's flag, its loss proposed; board 2: a pause foul proposed; board 3 decided
        facts = [
            ("1", 1, "flag", {"side": "red"}),
            ("1", 2, "result", {"winner": "black", "reason": "flag", "status": "pending"}),
            ("2", 1, "foul", {"side": "red", "reason": "board_pause", "status": "pending",
                              "count": 0}),
        ]  # fmt: skip
        for board, seq, type_, data in facts:
            ev = envelope(board, seq, type=type_, data=data, game=f"r1-b{board}")
            station.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())
        won = {"winner": "red", "reason": "resignation"}
        ev = envelope(
            "3", 1, type="result", data=won, txn=decision_txn(station, "3", "result", won)
        )
        station.ingest.handle("qz/v1/test/board/3/event", json.dumps(ev).encode())
        await station.ingest.flush()
        before = await _seen(client, station)

        for preview in ("?send=0&dry_run=1", "?send=0"):
            r = await client.post(
                f"/api/pairings{preview}", content=ROUND_TWO.encode(), headers=csv
            )
            assert r.status_code == 409, r.text
            body = r.json()
            assert body["code"] == "rulings_pending", body
            assert body["args"] == {"round": 1, "count": 2, "boards": "1, 2"}
        assert await _seen(client, station) == before

        # the arbiter rules both; then round 2 goes in
        rulings = [
            ("1", 3, "result", {"winner": "black", "reason": "flag", "status": "confirmed",
                                "ref": 2}),
            ("2", 2, "foul", {"side": "red", "reason": "board_pause", "status": "dismissed",
                              "count": 0, "ref": 1}),
        ]  # fmt: skip
        for board, seq, type_, data in rulings:
            txn = decision_txn(station, board, type_, data)
            ev = envelope(board, seq, type=type_, data=data, txn=txn, game=f"r1-b{board}")
            station.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())
        await station.ingest.flush()
        r = await client.post("/api/pairings?send=0", content=ROUND_TWO.encode(), headers=csv)
        assert r.status_code == 200, r.text


async def test_a_round_imported_before_a_flag_is_not_sent_over_it(station: Station) -> None:
    """Round 2 imported unsent while round 1 was clean; then red's flag fell on board 1, its
    loss to rule. Sending round 2 (POST /api/rounds/2/set_games) put the next game on the
    board and the flag could never be ruled (an outsider chief): refused as an import is."""
    assert station.ingest is not None
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        h = await _login(client)
        csv = {**h, "Content-Type": "text/csv"}
        assert (await client.post("/api/players", content=PLAYERS.encode(), headers=csv)).is_success
        for pairs in (PAIRINGS, ROUND_TWO):
            r = await client.post("/api/pairings?send=0", content=pairs.encode(), headers=csv)
            assert r.status_code == 200, r.text
        for seq, type_, data in (
            (1, "flag", {"side": "red"}),
            (2, "result", {"winner": "black", "reason": "flag", "status": "pending"}),
        ):
            ev = envelope("1", seq, type=type_, data=data, game="r1-b1")
            station.ingest.handle("qz/v1/test/board/1/event", json.dumps(ev).encode())
        await station.ingest.flush()
        r = await client.post("/api/rounds/2/set_games", headers=h)
        assert r.status_code == 409, r.text
        assert r.json()["code"] == "rulings_pending" and r.json()["args"]["boards"] == "1"
