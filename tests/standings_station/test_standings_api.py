"""Standings computed by the station from its stored events: results, flags, confirmed forfeits
and fouls, colours and the players' tags; the API, the exports, the page, bad requests."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
from support.station import (
    ARBITER,
    ARBITER_PASSWORD,
    Feeder,
)

from clock_service import GameRecord, Regulation, compute_standings
from venue_station.domain.station import Station

# 甲 local, 乙 u14, 丙 women, 丁 local+u14 (Meishan: 1 progressive point off per foul)
PLAYERS = "name,club,tags\n甲,杭州,local\n乙,,u14\n丙,,women\n丁,四川,local;u14\n"
PAIRINGS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n2,1,丁,甲\n2,2,乙,丙\n"


def result(winner: str | None, reason: str, status: str = "confirmed") -> dict[str, Any]:
    return {"winner": winner, "reason": reason, "status": status}


async def two_rounds(station: Station) -> None:
    await station.import_players(PLAYERS)
    await station.import_pairings(PAIRINGS, send=False)
    feed = Feeder(station)
    # round 1: 甲 mates 乙; 丙's flag falls; 丁 a confirmed foul, 丙 a dismissed one
    feed("1", "r1-b1", "result", result("red", "checkmate"))
    foul = feed(
        "2", "r1-b2", "foul", {"side": "black", "reason": "长将", "status": "pending", "count": 1}
    )
    feed(
        "2",
        "r1-b2",
        "foul",
        {"side": "black", "reason": "长将", "status": "confirmed", "count": 1, "ref": foul},
    )
    other = feed(
        "2", "r1-b2", "foul", {"side": "red", "reason": "长捉", "status": "pending", "count": 1}
    )
    feed(
        "2",
        "r1-b2",
        "foul",
        {"side": "red", "reason": "长捉", "status": "dismissed", "count": 0, "ref": other},
    )
    feed("2", "r1-b2", "flag", {"side": "red"})
    # a flag's loss counts once the arbiter confirms it (issue 15: one rule for every view)
    feed("2", "r1-b2", "result", result("black", "flag"))
    # round 2: a draw; 丙 forfeits, after a result proposal for 丙 that is never confirmed
    feed("1", "r2-b1", "result", result(None, "agreed"))
    feed("2", "r2-b2", "result", result("black", "resign", status="pending"))
    absent = feed(
        "2", "r2-b2", "forfeit", {"side": "black", "reason": "absent", "status": "pending"}
    )
    feed(
        "2",
        "r2-b2",
        "forfeit",
        {"side": "black", "reason": "absent", "status": "confirmed", "ref": absent},
    )
    await feed.flush()


def table(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    keys = ("rank", "player", "points", "progressive", "wins", "fouls", "black_games")
    return [tuple(r[k] for k in keys) for r in rows]


async def test_standings_from_the_stored_events(offline: Station) -> None:
    await two_rounds(offline)
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        body = (await client.get("/api/standings")).json()
        after1 = (await client.get("/api/standings", params={"round": 1})).json()
    assert body["after_round"] is None and body["regulation"] == "meishan-2016"
    rows = body["standings"]
    assert table(rows) == [
        (1, "甲", 3, 5, 1, 0, 1),
        (2, "丁", 3, 4, 1, 1, 1),  # 2 + 3 minus the foul's progressive point
        (3, "乙", 2, 2, 1, 0, 1),  # the forfeit is a win; the pending result decided nothing
        (4, "丙", 0, 0, 0, 0, 1),  # flag and forfeit; the dismissed foul does not count
    ]
    assert [r["reason_zh"] for r in rows] == ["累进分 5 > 4", "积分 3 > 2", "积分 2 > 0", ""]
    assert rows[0]["reason_en"] == "progressive 5 > 4" and rows[0]["decided_by"] == "progressive"
    assert rows[1]["tags"] == ["local", "u14"]
    # after round 1: 乙 and 丙 both 0, separated only by games as black
    assert table(after1["standings"])[2:] == [(3, "乙", 0, 0, 0, 0, 1), (4, "丙", 0, 0, 0, 0, 0)]
    assert after1["standings"][2]["reason_zh"] == "后走局数 1 > 0"
    assert after1["standings"][0]["reason_zh"] == "累进分 2 > 1"


async def test_the_conversion_matches_the_pure_core(offline: Station) -> None:
    await two_rounds(offline)
    games = [
        GameRecord(1, "甲", "乙", "red"),
        GameRecord(1, "丙", "丁", "black", black_fouls=1),
        GameRecord(2, "丁", "甲", "draw"),
        GameRecord(2, "乙", "丙", "red", forfeit=True),
    ]
    tags = {"甲": {"local"}, "乙": {"u14"}, "丙": {"women"}, "丁": {"local", "u14"}}
    expected = compute_standings(Regulation.load("meishan-2016"), games, players=tags)
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        got = (await client.get("/api/standings")).json()["standings"]
    assert got == [s.as_dict() for s in expected]


async def test_filter_by_tag(offline: Station) -> None:
    await two_rounds(offline)
    async with httpx.AsyncClient(base_url=offline.http_url) as client:

        async def group(tag: str) -> list[tuple[int, str, int]]:
            r = await client.get("/api/standings", params={"tag": tag})
            assert r.status_code == 200, r.text
            return [(s["rank"], s["player"], s["event_rank"]) for s in r.json()["standings"]]

        assert await group("local") == [(1, "甲", 1), (2, "丁", 2)]
        assert await group("u14") == [(1, "丁", 2), (2, "乙", 3)]
        assert await group("u14,women") == [(1, "丁", 2), (2, "乙", 3), (3, "丙", 4)]
        assert await group("nobody") == []


async def test_exports(offline: Station) -> None:
    await two_rounds(offline)
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        r = await client.get("/api/export/standings.csv", params={"round": 2, "tag": "local"})
        assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
        assert "round2" in r.headers["content-disposition"]
        assert r.content.startswith(
            b"\xef\xbb\xbf"
        )  # the BOM: Excel on Chinese Windows reads UTF-8
        rows = list(csv.DictReader(io.StringIO(r.content.decode("utf-8-sig"))))
        assert [(x["rank"], x["player"], x["progressive"]) for x in rows] == [
            ("1", "甲", "5"),
            ("2", "丁", "4"),
        ]
        # the page's link asks the header row in its language (a spreadsheet's reader)
        zh = await client.get("/api/export/standings.csv", params={"round": 2, "lang": "zh"})
        lines = zh.content.decode("utf-8-sig").splitlines()
        assert lines[0].startswith("名次,棋手,积分,累进分,胜局,犯规,后走局数"), lines[0]
        codes = await client.get("/api/export/standings.csv", params={"round": 2})
        by_code = list(csv.DictReader(io.StringIO(codes.content.decode("utf-8-sig"))))
        in_words = list(csv.DictReader(io.StringIO(zh.content.decode("utf-8-sig"))))
        assert [(x["名次"], x["棋手"], x["积分"]) for x in in_words] == [
            (x["rank"], x["player"], x["points"]) for x in by_code
        ]  # the same rows under the organiser's words
        en = await client.get("/api/export/standings.csv", params={"lang": "en"})
        assert en.content.decode("utf-8-sig").startswith("Rank,Player,Points,Progressive")
        doc = (await client.get("/api/export/standings.json", params={"round": 1})).json()
        assert doc["v"] == 1 and doc["regulation"] == "meishan-2016" and doc["after_round"] == 1
        assert [s["player"] for s in doc["standings"]] == ["甲", "丁", "乙", "丙"]


async def test_players_without_a_list_and_no_games(offline: Station) -> None:
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        assert (await client.get("/api/standings")).json()["standings"] == []
        await offline.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=False)
        rows = (await client.get("/api/standings")).json()["standings"]
    # paired, nothing played: both listed, equal on everything but colour
    assert [(r["player"], r["points"], r["tags"]) for r in rows] == [("乙", 0, []), ("甲", 0, [])]


async def test_players_csv_with_tags_through_the_api(offline: Station) -> None:
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        csrf = (
            await client.post(
                "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
            )
        ).json()["csrf"]
        r = await client.post(
            "/api/players",
            content="name,tags\n甲,local u14\n乙,\n".encode(),
            headers={"X-CSRF-Token": csrf},
        )
        assert r.json() == {"imported": 2}
        bad = await client.post(
            "/api/players",
            content=("name,tags\n甲," + "x" * 40 + "\n").encode(),
            headers={"X-CSRF-Token": csrf},
        )
        assert bad.status_code == 400 and bad.json()["where"] == "line 2"
        rows = (await client.get("/api/standings", params={"tag": "u14"})).json()["standings"]
    assert [(r["player"], r["tags"]) for r in rows] == [("甲", ["local", "u14"])]


BAD = [
    ("/api/standings?round=abc", 400, "query.round"),
    ("/api/standings?round=10", 400, "query.round"),  # Meishan has 9 rounds
    ("/api/standings?tag=,,", 400, "query.tag"),
    ("/api/standings?tag=" + "x" * 33, 400, "query.tag"),
    ("/api/export/standings.xml", 404, "path.fmt"),
    ("/api/export/standings.csv?round=-1", 400, "query.round"),
]


async def test_bad_requests_get_a_clear_error(offline: Station) -> None:
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        for url, status, where in BAD:
            r = await client.get(url)
            assert r.status_code == status, (url, r.text)
            assert r.json()["error"] and r.json().get("where") == where, (url, r.json())
        login = {"username": ARBITER, "password": ARBITER_PASSWORD}
        assert (await client.post("/api/auth/login", json=login)).status_code == 200
        metrics = (await client.get("/metrics")).text  # behind login
    assert 'qz_bad_requests_total{kind="bad_request"} 5' in metrics


async def test_the_standings_page(offline: Station) -> None:
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        page = await client.get("/standings")
        js = await client.get("/static/standings.js")
        kit = await client.get("/static/pagekit.js")  # the standalone pages' stream
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<html lang="zh-CN">' in page.text and "/static/standings.js" in page.text
    assert "/static/pagekit.js" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert js.status_code == 200 and kit.status_code == 200
    # refreshed on the stream's `game` news, never by polling
    assert "game: () =>" in js.text and 'new EventSource("/api/stream")' in kit.text
    assert "setInterval" not in js.text + kit.text
