"""Meishan's knockout starts only after the Swiss part it follows (补充 一（二）: 七轮后前4名进入
淘汰赛): the station refuses ``POST /api/knockout/start`` while a game of rounds 1..7 has no
confirmed result or a round is not paired yet, says which in a code the page translates, and
stores nothing. And a knockout game a board refuses to set up is not on a board: the knockout
does not believe it is being played, and it can be assigned again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.knockout_swiss import Swiss, pairings
from support.station import (
    ARBITER,
    ARBITER_PASSWORD,
    FakeNode,
    station_config,
)

from venue_station.domain.knockout import META_KEY
from venue_station.domain.station import Station


async def login(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


async def stored(station: Station) -> str | None:
    assert station.store is not None
    text: str | None = await station.store.get_meta(META_KEY)
    return text


async def test_the_knockout_waits_for_every_game_of_rounds_1_to_7(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    station: Station = await start_station(
        station_config(tmp_path, database_url=db_url), connect=False
    )
    swiss = Swiss(station)
    await station.import_pairings(pairings(1, 2, 3), send=False)
    await swiss.rounds(1, 2)
    await swiss.result(3, "11")  # round 3: board 12 still playing
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        csrf = await login(client)

        async def refused(body: dict[str, Any]) -> dict[str, Any]:
            r = await client.post("/api/knockout/start", json=body, headers=csrf)
            assert r.status_code == 409, r.text
            assert (await client.get("/api/knockout")).json() == {"started": False}
            assert await stored(station) is None
            answer: dict[str, Any] = r.json()
            return answer

        # the tester's case: one tap during round 3
        got = await refused({"seed": 1})
        assert got["code"] == "swiss_unfinished", got
        assert got["args"] == {"after_round": 7, "round": 3, "count": 1, "boards": ["12"]}
        assert "round 3" in got["error"] and "12" in got["error"], got
        assert "4" in got["error"] and "7" in got["error"]  # rounds 4-7 not paired either

        # a result the board proposes but no arbiter confirmed does not count
        await swiss.result(3, "12", confirmed=False)
        got = await refused({"seed": 1})
        assert got["code"] == "swiss_unfinished" and got["args"]["boards"] == ["12"], got

        # round 3 over: rounds 4-7 are not even paired
        await swiss.result(3, "12")
        got = await refused({})
        assert got["code"] == "swiss_unpaired", got
        assert got["args"] == {"after_round": 7, "round": 4, "rounds": [4, 5, 6, 7]}, got

        # naming the four does not go round it
        got = await refused({"top": ["甲", "乙", "丙", "丁"]})
        assert got["code"] == "swiss_unpaired", got

        await station.import_pairings(pairings(4, 5, 6, 7), send=False)
        await swiss.rounds(4, 5, 6)
        await swiss.result(7, "12")
        got = await refused({"seed": 1})
        assert got["args"] == {"after_round": 7, "round": 7, "count": 1, "boards": ["11"]}, got

        # the last game of round 7 decided: it starts, after round 7
        await swiss.result(7, "11")
        r = await client.post("/api/knockout/start", json={"seed": 1}, headers=csrf)
        assert r.status_code == 200, r.text
        ko = r.json()
    assert ko["started"] and ko["after_round"] == 7
    assert ko["top"] == ["甲", "乙", "丙", "丁"]
    assert {(p["red"], p["black"]) for p in ko["proposed"][:1]} <= {("甲", "丁"), ("丁", "甲")}
    assert await stored(station) is not None


async def test_an_earlier_round_given_waits_for_that_round(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    """``after_round`` (the API's, not the page's) moves the round the knockout follows; the
    rounds up to it must be over all the same."""
    station: Station = await start_station(
        station_config(tmp_path, database_url=db_url), connect=False
    )
    swiss = Swiss(station)
    await station.import_pairings(pairings(1, 2, 3), send=False)
    await swiss.rounds(1)
    await swiss.result(2, "12")
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        csrf = await login(client)
        r = await client.post("/api/knockout/start", json={"after_round": 2}, headers=csrf)
        assert r.status_code == 409 and r.json()["code"] == "swiss_unfinished", r.text
        assert r.json()["args"] == {"after_round": 2, "round": 2, "count": 1, "boards": ["11"]}
        await swiss.result(2, "11")
        r = await client.post("/api/knockout/start", json={"after_round": 2}, headers=csrf)
        assert r.status_code == 200, r.text
        assert r.json()["after_round"] == 2


async def test_many_boards_still_playing_are_named_a_few(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    """A round of 30 boards under way: the reply names the first boards and counts them all."""
    station: Station = await start_station(
        station_config(tmp_path, database_url=db_url), connect=False
    )
    rows = ["round,board,red,black"]
    rows += [f"1,{b},P{2 * b},P{2 * b + 1}" for b in range(1, 31)]
    await station.import_pairings("\n".join(rows) + "\n", send=False)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        csrf = await login(client)
        r = await client.post("/api/knockout/start", json={"after_round": 1}, headers=csrf)
    assert r.status_code == 409, r.text
    args = r.json()["args"]
    assert args["round"] == 1 and args["count"] == 30
    assert args["boards"] == [str(b) for b in range(1, 11)] + ["…"]


@pytest.mark.broker
async def test_a_board_that_refuses_the_game_leaves_it_off_the_boards(
    venue_broker: Any, tmp_path: Path, db_url: str, start_station: Any
) -> None:
    config = station_config(tmp_path, venue_broker, database_url=db_url, command_timeout_s=2.0)
    station: Station = await start_station(config)
    swiss = Swiss(station)
    await station.import_pairings(pairings(*range(1, 8)), send=False)
    await swiss.rounds(*range(1, 8))
    async with (
        FakeNode(venue_broker, "node-a", ["1", "2"]) as node,
        httpx.AsyncClient(base_url=station.http_url) as client,
    ):
        await node.say_online()  # a board the station never heard of is refused a game
        csrf = await login(client)
        r = await client.post("/api/knockout/start", json={"seed": 5}, headers=csrf)
        assert r.status_code == 200, r.text

        async def shown() -> dict[str, Any]:
            ko = (await client.get("/api/knockout")).json()
            return {p["id"]: p for p in ko["proposed"]}

        def confirms() -> list[dict[str, Any]]:
            doc = json.loads(stored_doc[0] or "{}")
            return [s for s in doc.get("inputs", []) if s["op"] == "confirm"]

        stored_doc: list[str | None] = [None]

        # board 1 is busy with another game: it refuses the set-up
        node.reply_ok = False
        url = "/api/knockout/games/ko-sf1/confirm"
        r = await client.post(url, json={"board": "1"}, headers=csrf)
        assert r.status_code == 409, r.text
        body = r.json()
        assert body["command"]["outcome"] == "rejected"
        assert body["game"]["confirmed"] is False and body["game"]["board"] is None, body
        assert "refused" in body["error"] and "not on a board" in body["error"], body
        assert [(b, c.cmd) for b, c in node.commands] == [("1", "set_game")]
        sf1 = (await shown())["ko-sf1"]
        assert sf1["confirmed"] is False and sf1["board"] is None, sf1
        stored_doc[0] = await stored(station)
        assert confirms() == []
        # no board, no result taken from it: the game waits to be assigned
        r = await client.post(url, json={}, headers=csrf)
        assert r.status_code == 400 and r.json()["where"] == "body.board", r.text

        # assigned again, to a board that takes it: now it is on board 2
        node.reply_ok = True
        r = await client.post(url, json={"board": "2"}, headers=csrf)
        assert r.status_code == 200, r.text
        assert r.json()["game"]["confirmed"] is True and r.json()["game"]["board"] == "2"
        sf1 = (await shown())["ko-sf1"]
        assert sf1["confirmed"] is True and sf1["board"] == "2", sf1

        # sent again to another board that refuses: it stays where it is
        node.reply_ok = False
        r = await client.post(url, json={"board": "1"}, headers=csrf)
        assert r.status_code == 409, r.text
        assert r.json()["game"]["board"] == "2" and r.json()["game"]["confirmed"] is True
        sf1 = (await shown())["ko-sf1"]
        assert sf1["confirmed"] is True and sf1["board"] == "2", sf1
        stored_doc[0] = await stored(station)
        assert [(s["game"], s["board"]) for s in confirms()] == [("ko-sf1", "2")]
