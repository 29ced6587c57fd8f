"""Meishan's final standings (issue 25): once the knockout of the top four is finished, the
whole event's table puts the knockout's places 1–4 first (marked ``knockout_place``), then the
others ranked among themselves from 5; an earlier round, a group, or a knockout not yet finished
stays the Swiss table. The API, the CSV and the JSON export all carry the final place."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, decision_txn, envelope, station_config
from support.web import WebStation

from clock_service.trf.engines import read as read_engine
from venue_station.domain.station import Station

# Meishan scores 2 / 1 / 0. After round 2: 甲 4, 戊 3, 丙 2 (progressive 4), 丁 2 (2), 乙 1, 己 0
PLAYERS = "name,tags\n甲,local\n乙,\n丙,\n丁,\n戊,\n己,u14\n"
PAIRINGS = (
    "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n1,3,戊,己\n2,1,甲,丙\n2,2,戊,乙\n2,3,丁,己\n"
)
SWISS = [
    ("1", "r1-b1", "red"),
    ("2", "r1-b2", "red"),
    ("3", "r1-b3", "red"),
    ("1", "r2-b1", "red"),
    ("2", "r2-b2", None),
    ("3", "r2-b3", "red"),
]


async def login(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


async def swiss(st: Station) -> None:
    await st.import_players(PLAYERS)
    await st.import_pairings(PAIRINGS, send=False)
    seqs: dict[str, int] = {}
    assert st.ingest is not None
    for board, game, winner in SWISS:
        seqs[board] = seqs.get(board, 0) + 1
        data = {"winner": winner, "reason": "agreed" if winner is None else "resign"}
        txn = decision_txn(st, board, "result", data)
        ev = envelope(board, seqs[board], game=game, type="result", data=data, txn=txn)
        st.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())
    await st.ingest.flush()


async def knockout(client: httpx.AsyncClient, results: dict[str, str]) -> dict[str, Any]:
    """Start the knockout and enter ``results`` by hand, in order; the last answer."""
    csrf = await login(client)
    # the knockout follows round 2, the last one played here (Meishan's: round 7)
    body = {"seed": 7, "after_round": 2}
    r = await client.post("/api/knockout/start", json=body, headers=csrf)
    assert r.status_code == 200, r.text
    assert r.json()["top"] == ["甲", "戊", "丙", "丁"]
    answer: dict[str, Any] = r.json()
    for gid, result in results.items():
        r = await client.post(
            f"/api/knockout/games/{gid}/result", json={"result": result}, headers=csrf
        )
        assert r.status_code == 200, r.text
        answer = r.json()
    return answer


FINISHED = {"ko-sf1": "black", "ko-sf2": "black", "ko-f": "red", "ko-3": "black"}


@pytest.fixture
async def station(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    st: Station = await start_station(station_config(tmp_path, database_url=db_url), connect=False)
    await swiss(st)
    return st


def places(rows: list[dict[str, Any]]) -> list[tuple[int, str, int | None]]:
    return [(r["rank"], r["player"], r["knockout_place"]) for r in rows]


async def test_the_final_list_opens_with_the_knockout_places(station: Station) -> None:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        swiss = (await client.get("/api/standings")).json()
        assert swiss["final"] is False
        assert [r["player"] for r in swiss["standings"]] == ["甲", "戊", "丙", "丁", "乙", "己"]
        assert all(r["knockout_place"] is None for r in swiss["standings"])

        half = await knockout(client, {"ko-sf1": "black", "ko-sf2": "black"})
        assert half["finished"] is False
        # half-way through the knockout the table is still the Swiss one
        assert (await client.get("/api/standings")).json()["final"] is False
        # ... while the prize list keeps places 1–4 for the knockout's four (their order and
        # prizes still open) and ranks the others from 5th (录取前30名: 5th 600, 6th 500)
        prizes = (await client.get("/api/prizes")).json()
        rows = prizes["lists"][0]["rows"]
        assert [(r["place"], r["to"], r["prize"], r["knockout_pending"]) for r in rows[:4]] == [
            (1, 4, "", True)
        ] * 4
        assert {r["player"] for r in rows[:4]} == {"甲", "戊", "丙", "丁"}
        assert [(r["place"], r["player"], r["prize"]) for r in rows[4:]] == [
            (5, "乙", "600.00"),
            (6, "己", "500.00"),
        ]
        assert "knockout" in prizes["provisional"]
        csrf = await login(client)
        for gid in ("ko-f", "ko-3"):
            r = await client.post(
                f"/api/knockout/games/{gid}/result", json={"result": FINISHED[gid]}, headers=csrf
            )
            assert r.status_code == 200, r.text
        ko = r.json()
        assert ko["finished"] is True
        placed = [p["player"] for p in ko["placings"]]
        assert sorted(placed) == ["丁", "丙", "戊", "甲"]
        assert placed != ["甲", "戊", "丙", "丁"]  # black won both semi-finals: a new order

        final = (await client.get("/api/standings")).json()
        assert final["final"] is True
        rows = (await client.get("/api/prizes")).json()["lists"][0]["rows"]
        assert [(r["place"], r["player"], r["prize"], r["knockout_pending"]) for r in rows] == [
            (1, placed[0], "3000.00", False),
            (2, placed[1], "1500.00", False),
            (3, placed[2], "1000.00", False),
            (4, placed[3], "800.00", False),
            (5, "乙", "600.00", False),
            (6, "己", "500.00", False),
        ]
        assert places(final["standings"]) == [
            (1, placed[0], 1),
            (2, placed[1], 2),
            (3, placed[2], 3),
            (4, placed[3], 4),
            (5, "乙", None),
            (6, "己", None),
        ]
        assert final["standings"][0]["reason_zh"] == "淘汰赛第1名"
        assert final["standings"][0]["reason_en"] == "knockout place 1"
        # the knockout's four keep their Swiss totals (what they scored is not rewritten)
        by_name = {r["player"]: r for r in swiss["standings"]}
        for row in final["standings"]:
            assert row["points"] == by_name[row["player"]]["points"]
        # the event's last round asked for by number is the same final list
        last = (await client.get("/api/standings?round=9")).json()
        assert last["final"] is True and places(last["standings"]) == places(final["standings"])
        # an earlier round and one group stay the Swiss table
        for earlier in (1, 2):
            answer = (await client.get(f"/api/standings?round={earlier}")).json()
            assert answer["final"] is False
            assert all(r["knockout_place"] is None for r in answer["standings"])
        group = (await client.get("/api/standings?tag=u14")).json()
        assert group["final"] is False and places(group["standings"]) == [(1, "己", None)]
        # ... whose place in the whole event is the final list's (it kept the Swiss place:
        # a reviewer)
        local = (await client.get("/api/standings?tag=local")).json()["standings"]
        assert [(r["player"], r["event_rank"]) for r in local] == [("甲", placed.index("甲") + 1)]
        assert placed.index("甲") != 0  # (the Swiss leader did not win the knockout)

        text = (await client.get("/api/export/standings.csv")).text.lstrip("\ufeff")
        lines = list(csv.DictReader(io.StringIO(text)))
        assert [(x["rank"], x["player"], x["knockout_place"]) for x in lines] == [
            (str(rank), name, "" if ko_place is None else str(ko_place))
            for rank, name, ko_place in places(final["standings"])
        ]
        doc = (await client.get("/api/export/standings.json")).json()
        assert doc["final"] is True and places(doc["standings"]) == places(final["standings"])
        # the TRF's rank column (a rating body's, a pairing program's) is the final list's too:
        # an outsider chief read the champion ranked 10th in it
        trf = (await client.get("/api/export/tournament.trf")).text
        ranks = {
            line[14:47].strip(): int(line[85:89])
            for line in trf.splitlines()
            if line.startswith("001 ")
        }  # fmt: skip  (TRF: name 15–47, rank 86–89)
        assert ranks == {name: rank for rank, name, _ in places(final["standings"])}, ranks
        # and it says who played the knockout beside the Swiss rounds, in a comment line the
        # engines skip (read as strictly as bbpPairings and JaVaFo do: nothing refused)
        starts = {line[14:47].strip(): int(line[4:8]) for line in trf.splitlines()
                  if line.startswith("001 ")}  # fmt: skip
        four = " ".join(str(r) for r in sorted(starts[p] for p in placed))
        notes = [line for line in trf.splitlines() if line.startswith("### knockout")]
        assert notes == ["### knockout after round 2: start ranks " + four + " play it beside "
                         "rounds 3-4; its games are not in this file"], notes  # fmt: skip
        assert read_engine(trf.encode(), pairing=True).refusals == []


@pytest.mark.browser
@pytest.mark.broker
@pytest.mark.asyncio(loop_scope="session")
async def test_the_page_marks_the_knockout_places_in_both_languages(
    page: Any, web_station: WebStation
) -> None:
    await swiss(web_station.station)
    async with httpx.AsyncClient(base_url=web_station.url) as client:
        placed = [p["player"] for p in (await knockout(client, FINISHED))["placings"]]

    async def shown() -> list[list[str]]:
        await page.wait_for_selector("body[data-loaded]", state="attached")
        await page.wait_for_selector("#ko-note:not([hidden])")
        return await page.eval_on_selector_all(
            "#rows tr", "trs => trs.map(tr => [...tr.cells].map(td => td.textContent.trim()))"
        )

    await page.goto(f"{web_station.url}/standings")
    rows = await shown()
    assert [(r[0], r[1]) for r in rows] == [
        *((str(i), name) for i, name in enumerate(placed, 1)),
        ("5", "乙"),
        ("6", "己"),
    ]
    assert [r[7] for r in rows[:4]] == [f"淘汰赛第{i}名" for i in range(1, 5)]
    assert rows[4][7] == ""  # 乙 is below a knockout place, not below a points criterion
    assert await page.text_content("#title") == "最终排名"
    assert "淘汰赛" in (await page.text_content("#ko-note") or "")
    assert await page.locator("#rows tr.knockout").count() == 4

    await page.goto(f"{web_station.url}/standings?lang=en")
    rows = await shown()
    assert [r[7] for r in rows[:4]] == [f"knockout place {i}" for i in range(1, 5)]
    assert await page.text_content("#title") == "Final standings"
    assert "knockout" in (await page.text_content("#ko-note") or "")

    # an earlier round is the Swiss table: no note, no marks
    await page.goto(f"{web_station.url}/standings?round=1")
    await page.wait_for_selector("body[data-loaded]", state="attached")
    assert await page.is_hidden("#ko-note")
    assert await page.text_content("#title") == "成绩排名"
    assert await page.locator("#rows tr.knockout").count() == 0
