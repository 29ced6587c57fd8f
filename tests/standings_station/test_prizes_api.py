"""The prize list from the station's stored results (docs/prizes.md): the Wulong rules — the
30 % rule, 综合组 (u14 + women), 本地组, a shared place splitting its prize — over the API and
its CSV; provisional until the event is over; a regulation without prizes; a Meishan final
list whose places 1–4 are the knockout's."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import httpx
from support.station import Feeder, station_config

from venue_station.domain import tournament_desk as desk
from venue_station.domain.station import Station
from venue_station.domain.trf_state import load_state, save_state

# 甲 u14, 乙 women, 丙 local, 丁 nobody's group; one round of two draws
PLAYERS = "name,club,tags\n甲,重庆,u14\n乙,成都,women\n丙,武隆,local\n丁,綦江,\n"
PAIRINGS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n"


async def _wulong(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    station: Station = await start_station(
        station_config(tmp_path, database_url=db_url, regulation="wulong-2015"), connect=False
    )
    await station.import_players(PLAYERS)
    await station.import_pairings(PAIRINGS, send=False)
    feed = Feeder(station)
    feed.result("1", "r1-b1", None)
    feed.result("2", "r1-b2", None)
    await feed.flush()
    return station


def _list(body: dict[str, Any], key: str) -> dict[str, Any]:
    return dict(next(p for p in body["lists"] if p["key"] == key))


def _rows(body: dict[str, Any], key: str) -> list[tuple[Any, ...]]:
    plist = next(p for p in body["lists"] if p["key"] == key)
    return sorted(
        (r["place"], r["to"], r["player"], r["prize"]) for r in plist["rows"]
    )  # shared: any order


async def test_the_wulong_lists_from_the_stored_results(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    station = await _wulong(tmp_path, db_url, start_station)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        standings = (await client.get("/api/standings")).json()["standings"]
        r = await client.get("/api/prizes")
        assert r.status_code == 200, r.text
        body = r.json()
        zh = await client.get("/api/export/prizes.csv", params={"lang": "zh"})
    # Two draws: the black players 乙 and 丁 lead on games as black and share 1st–2nd (dropping
    # round 1 leaves nothing to compare), 甲 and 丙 share 3rd–4th.
    assert sorted((s["rank"], s["player"], s["shared"]) for s in standings) == [
        (1, "丁", True), (1, "乙", True), (3, "丙", True), (3, "甲", True),
    ]  # fmt: skip
    assert body["registered"] == 4 and body["total"] == "28700.00" and body["combinable"]
    # 4 registered < 80: 30 % of 4 = 1 paid place; 乙 and 丁 share places 1–2, and so split
    # the one paid place's 5000 yuan
    open_list = next(p for p in body["lists"] if p["key"] == "open")
    assert (open_list["places"], open_list["paid_places"]) == (32, 1)
    assert open_list["shrunk"] == {"below": 80, "percent": 30}
    assert _rows(body, "open") == [(1, 2, "丁", "2500.00"), (1, 2, "乙", "2500.00")]
    assert open_list["paid"] == "5000.00" and open_list["total"] == "23900.00"
    # 综合组 ranks 乙 (women) and 甲 (u14) among themselves, no 30 % rule; 乙 takes both prizes
    assert _rows(body, "mixed") == [(1, 1, "乙", "600.00"), (2, 2, "甲", "500.00")]
    assert _rows(body, "local") == [(1, 1, "丙", "600.00")]
    local = next(p for p in body["lists"] if p["key"] == "local")
    assert (local["members"], local["places"]) == (1, 6) and local["rows"][0]["tags"] == ["local"]
    # one round of nine: provisional
    assert body["final"] is False and body["provisional"] == ["rounds"]
    assert zh.status_code == 200 and zh.content.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(zh.content.decode("utf-8-sig"))))
    assert rows[0] == ["奖项", "名次", "棋手", "奖金（元）", "说明"]
    assert sorted(rows[1:3]) == [
        ["公开组", "1–2", "丁", "2500.00", "并列第1–2名，平分"],
        ["公开组", "1–2", "乙", "2500.00", "并列第1–2名，平分"],
    ]
    assert rows[3:] == [
        ["综合组", "1", "乙", "600.00", "女子"],  # why each is in the group, in words
        ["综合组", "2", "甲", "500.00", "少儿"],
        ["本地组", "1", "丙", "600.00", "本地"],
    ]


async def test_a_game_without_a_result_keeps_the_list_provisional(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    station = await _wulong(tmp_path, db_url, start_station)
    await station.import_pairings("round,board,red,black\n2,1,乙,丁\n2,2,甲,丙\n", send=False)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        body = (await client.get("/api/prizes")).json()
    assert body["provisional"] == ["rounds", "undecided"]


async def test_a_regulation_without_prizes(tmp_path: Path, start_station: Any) -> None:
    station: Station = await start_station(station_config(tmp_path), connect=False)
    object.__setattr__(station.regulation, "prizes", None)  # a profile with no [prizes]
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.get("/api/prizes")
        csv_r = await client.get("/api/export/prizes.csv")
    assert r.status_code == 404 and r.json()["code"] == "no_prizes"
    assert csv_r.status_code == 404


async def test_a_player_withdrawn_before_he_played_is_not_registered(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    station = await _wulong(tmp_path, db_url, start_station)
    await station.import_players("name,club,tags\n戊,重庆,local\n")  # imported by mistake
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        body = (await client.get("/api/prizes")).json()
        assert body["registered"] == 5
        assert [r["player"] for r in _list(body, "local")["rows"]] == ["丙", "戊"]
        await desk.set_withdrawn(station, "戊", withdrawn=True, user="arb")
        body = (await client.get("/api/prizes")).json()
        assert body["registered"] == 4
        # nor does he take a group's prize (a reviewer: 本地组 paid the no-show 500 yuan)
        assert [r["player"] for r in _list(body, "local")["rows"]] == ["丙"]
        # one who played and then withdrew still counts, and keeps his place and prize
        await desk.set_withdrawn(station, "乙", withdrawn=True, user="arb")
        body = (await client.get("/api/prizes")).json()
    assert body["registered"] == 4
    mixed = next(p for p in body["lists"] if p["key"] == "mixed")
    assert [(r["player"], r["withdrawn"]) for r in mixed["rows"]] == [("乙", True), ("甲", False)]


async def test_a_name_that_reads_as_a_formula_stays_text_in_the_csv(
    tmp_path: Path, start_station: Any
) -> None:
    """The organiser opens the prize CSV in a spreadsheet: a player's name written as a
    formula is kept as text, as the other exports keep it (a reviewer)."""
    station: Station = await start_station(
        station_config(tmp_path, regulation="wulong-2015"), connect=False
    )
    await station.import_players("name\n=SUM(1+1)\n乙\n丙\n丁\n")
    pairs = "round,board,red,black\n1,1,=SUM(1+1),乙\n1,2,丙,丁\n"
    await station.import_pairings(pairs, send=False)
    feed = Feeder(station)
    feed.result("1", "r1-b1", "red")  # the one paid place (30 % of 4)
    feed.result("2", "r1-b2", None)
    await feed.flush()
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        for lang in ("zh", None):
            r = await client.get("/api/export/prizes.csv", params={"lang": lang} if lang else {})
            rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"))))
            names = [row[2] if lang else row[3] for row in rows[1:]]
            assert names == ["'=SUM(1+1)"], rows


async def test_an_event_of_fewer_rounds_than_the_regulation_ends_with_its_last(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    """A players file that declares its rounds (TRF 142/XXR: one here) ends the event there:
    the list is final after it, not provisional for ever (a reviewer)."""
    station = await _wulong(tmp_path, db_url, start_station)
    store = station.require_store()
    state = await load_state(store)
    state.header["rounds"] = 1
    await save_state(store, state)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        body = (await client.get("/api/prizes")).json()
    assert (body["final"], body["provisional"]) == (True, [])
