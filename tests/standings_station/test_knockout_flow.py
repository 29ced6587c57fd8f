"""Meishan's knockout through the station's API: start from the standings with a recorded seed,
confirm games onto boards (set_game over a real broker to a FakeNode), results from the boards'
events, a drawn slow game, the colour choice, an armageddon draw won by black, manual results,
a restart that replays it all, and every kind of bad request."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import (
    ARBITER,
    ARBITER_PASSWORD,
    FakeNode,
    arbiter_txn,
    decision_txn,
    envelope,
    station_config,
    wait_until,
)

from clock_service import Knockout, Regulation
from venue_station.domain.station import Station

# After round 2: 甲 4, 乙 2, 丁 1 (two games as black), 丙 1 -> semi-finals 甲-丙 and 乙-丁
PAIRINGS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n2,1,甲,丙\n2,2,乙,丁\n"
SWISS = [("1", "r1-b1", "red"), ("2", "r1-b2", None), ("1", "r2-b1", "red"), ("2", "r2-b2", "red")]
SEED = 20160501
# The knockout follows the last round played here (Meishan's own is round 7, and it waits for
# rounds 1-7 to be over: test_knockout_start_guard.py)
AFTER = 2


async def login(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


def feed(station: Station, board: str, seq: int, game: str, winner: str | None) -> None:
    data = {"winner": winner, "reason": "agreed" if winner is None else "resign"}
    # a result the arbiter entered: it answers the station's command
    txn = decision_txn(station, board, "result", data)
    ev = envelope(board, seq, game=game, type="result", data=data, txn=txn)
    assert station.ingest is not None
    station.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())


async def swiss(station: Station) -> None:
    await station.import_pairings(PAIRINGS, send=False)
    seqs: dict[str, int] = {}
    for board, game, winner in SWISS:
        seqs[board] = seqs.get(board, 0) + 1
        feed(station, board, seqs[board], game, winner)
    assert station.ingest is not None
    await station.ingest.flush()


def expected_knockout() -> Knockout:
    return Knockout.start(
        ["甲", "乙", "丁", "丙"], random.Random(SEED), regulation=Regulation.load("meishan-2016")
    )


@pytest.mark.broker
async def test_the_knockout_end_to_end(
    venue_broker: Any, tmp_path: Path, db_url: str, start_station: Any
) -> None:
    config = station_config(tmp_path, venue_broker, database_url=db_url, command_timeout_s=2.0)
    station: Station = await start_station(config)
    await swiss(station)
    ref = expected_knockout()
    sf1, sf2 = ref.propose_next()
    async with (
        FakeNode(venue_broker, "node-a", ["1", "2"]) as node,
        httpx.AsyncClient(base_url=station.http_url) as client,
    ):
        node.seq.update({"1": 2, "2": 2})  # the Swiss rounds were seqs 1-2 of each board
        assert (await client.get("/api/knockout")).json() == {"started": False}
        csrf = await login(client)
        body = {"seed": SEED, "after_round": AFTER}
        r = await client.post("/api/knockout/start", json=body, headers=csrf)
        assert r.status_code == 200, r.text
        ko = r.json()
        assert ko["top"] == ["甲", "乙", "丁", "丙"] and ko["seed"] == SEED
        assert ko["after_round"] == AFTER
        assert [(p["id"], p["red"], p["black"]) for p in ko["proposed"]] == [
            ("ko-sf1", sf1.red, sf1.black),
            ("ko-sf2", sf2.red, sf2.black),
        ]
        assert [lot["method"] for lot in ko["lots"]] == ["lot", "lot"]
        assert [p["confirmed"] for p in ko["proposed"]] == [False, False]

        # confirm both semi-finals: set_game reaches the boards, the replies come back
        for gid, board, game in (("ko-sf1", "1", sf1), ("ko-sf2", "2", sf2)):
            r = await client.post(
                f"/api/knockout/games/{gid}/confirm", json={"board": board}, headers=csrf
            )
            assert r.status_code == 200, r.text
            assert r.json()["command"]["ok"] is True
            assert r.json()["game"]["confirmed"] is True
            # still to be played, now on its board (the arbiter page shows it 已上台，待结果)
            shown = {p["id"]: p for p in (await client.get("/api/knockout")).json()["proposed"]}
            assert shown[gid]["confirmed"] is True and shown[gid]["board"] == board
            sent = [c for b, c in node.commands if b == board and c.cmd == "set_game"][-1]
            assert sent.args == {
                "game": gid,
                "tc": "30m+5s",
                "red": game.red,
                "black": game.black,
                "tiebreak": False,
            }

        # the boards report: ko-sf1 drawn, ko-sf2 won by red
        await node.emit(
            "1",
            game="ko-sf1",
            type="result",
            data={"winner": None, "reason": "agreed"},
            txn=arbiter_txn(station, "1", "result", winner=None, reason="agreed"),
        )
        await node.emit(
            "2",
            game="ko-sf2",
            type="result",
            data={"winner": "red", "reason": "resign"},
            txn=arbiter_txn(station, "2", "result", winner="red", reason="resign"),
        )
        await wait_until(lambda: station.metrics.events_stored >= 6, what="results stored")
        ko = (await client.get("/api/knockout")).json()
        games = {g["id"]: g for g in ko["games"]}
        assert games["ko-sf1"]["drawn"] and games["ko-sf1"]["result_source"] == "events"
        assert games["ko-sf2"]["result"] == "red" and ko["proposed"] == []
        assert ko["pending_choices"] == [
            {"game": "ko-sf1", "chooser": sf1.black, "opponent": sf1.red}
        ]

        # the slow game's black chooses red; the tie-break game is on the same board
        r = await client.post("/api/knockout/choices/ko-sf1", json={"side": "red"}, headers=csrf)
        assert r.status_code == 200, r.text
        tb = r.json()["proposed"][0]
        assert (tb["id"], tb["red"], tb["black"], tb["tc"], tb["board"]) == (
            "ko-sf1-tb",
            sf1.black,
            sf1.red,
            "10m+3s",
            "1",
        )
        assert tb["tiebreak"] and tb["draw_winner"] == "black"
        assert r.json()["lots"][-1] == {
            "game": "ko-sf1-tb",
            "red": sf1.black,
            "black": sf1.red,
            "method": "choice",
            "chooser": sf1.black,
        }
        r = await client.post("/api/knockout/games/ko-sf1-tb/confirm", json={}, headers=csrf)
        assert r.status_code == 200, r.text
        assert r.json()["set_game"]["tiebreak"] is True and r.json()["set_game"]["tc"] == "10m+3s"
        assert node.commands[-1][0] == "1" and node.commands[-1][1].args["tiebreak"] is True

        # armageddon drawn: black (the slow game's red) wins the match
        await node.emit(
            "1",
            game="ko-sf1-tb",
            type="result",
            data={"winner": None, "reason": "agreed"},
            txn=arbiter_txn(station, "1", "result", winner=None, reason="agreed"),
        )
        await wait_until(lambda: station.metrics.events_stored >= 7, what="tie-break stored")
        ko = (await client.get("/api/knockout")).json()
        final = next(p for p in ko["proposed"] if p["id"] == "ko-f")
        assert {final["red"], final["black"]} == {sf1.red, sf2.red}
        third = next(p for p in ko["proposed"] if p["id"] == "ko-3")
        assert {third["red"], third["black"]} == {sf1.black, sf2.black}

        # the final and third place entered by hand
        for gid, res in (("ko-f", "red"), ("ko-3", "black")):
            r = await client.post(
                f"/api/knockout/games/{gid}/result", json={"result": res}, headers=csrf
            )
            assert r.status_code == 200, r.text
        ko = r.json()
        assert ko["finished"] is True
        assert [p["player"] for p in ko["placings"]] == [
            final["red"],
            final["black"],
            third["black"],
            third["red"],
        ]
    await station.stop()

    # a restart replays the stored inputs: the same lots, results and placings
    again: Station = await start_station(config)
    async with httpx.AsyncClient(base_url=again.http_url) as client:
        assert (await client.get("/api/knockout")).json() == ko


@pytest.fixture
async def offline(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    station: Station = await start_station(
        station_config(tmp_path, database_url=db_url), connect=False
    )
    await swiss(station)
    return station


async def test_auth_and_csrf_are_required(offline: Station) -> None:
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        posts = [
            ("/api/knockout/start", {"seed": 1}),
            ("/api/knockout/games/ko-sf1/confirm", {"board": "1"}),
            ("/api/knockout/games/ko-sf1/result", {"result": "red"}),
            ("/api/knockout/choices/ko-sf1", {"side": "red"}),
        ]
        for url, body in posts:
            r = await client.post(url, json=body)
            assert r.status_code == 401, (url, r.text)
        await login(client)
        for url, body in posts:
            r = await client.post(url, json=body, headers={"X-CSRF-Token": "forged"})
            assert r.status_code == 403, (url, r.text)
        assert (await client.get("/api/knockout")).json() == {"started": False}


async def test_bad_requests_get_a_clear_error(offline: Station) -> None:
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        csrf = await login(client)

        async def post(url: str, body: Any, status: int, where: str | None = None) -> Any:
            r = await client.post(url, json=body, headers=csrf)
            assert r.status_code == status, (url, body, r.text)
            if status >= 400:
                assert r.json()["error"], r.json()
            if where is not None:
                assert r.json().get("where") == where, (url, r.json())
            return r.json()

        await post("/api/knockout/games/ko-sf1/confirm", {"board": "1"}, 409)  # not started
        await post("/api/knockout/start", {"seed": "abc"}, 400, "body.seed")
        await post("/api/knockout/start", {"after_round": 12}, 400, "body.after_round")
        await post("/api/knockout/start", {"top": ["甲", "乙", "丙"]}, 400, "body.top")
        nobody = {"top": ["甲", "乙", "丙", "无名"], "after_round": AFTER}
        await post("/api/knockout/start", nobody, 400, "body.top")
        await post("/api/knockout/start", [1, 2], 400, "body")
        await post("/api/knockout/start", {"seed": 3}, 409)  # rounds 3-7 not played
        start = {"seed": 3, "after_round": AFTER}
        ko = (await client.post("/api/knockout/start", json=start, headers=csrf)).json()
        assert ko["started"] and ko["seed"] == 3
        await post("/api/knockout/start", {"seed": 4, "after_round": AFTER}, 409)  # started
        await post("/api/knockout/games/ko-x/confirm", {"board": "1"}, 404, "path.id")
        await post("/api/knockout/games/ko-sf1/confirm", {"board": "no board!"}, 400, "body.board")
        await post("/api/knockout/games/ko-sf1/confirm", {}, 400, "body.board")  # no board yet
        await post("/api/knockout/games/ko-f/confirm", {"board": "1"}, 409, "path.id")  # not open
        await post("/api/knockout/games/ko-sf1/result", {"result": "maybe"}, 400, "body.result")
        await post("/api/knockout/choices/ko-sf1", {"side": "green"}, 400, "body.side")
        await post("/api/knockout/choices/ko-sf1", {"side": "red"}, 409, "path.id")  # not drawn
        # the confirmation stands although the station has no broker to send set_game
        body = await post("/api/knockout/games/ko-sf1/confirm", {"board": "1"}, 503)
        assert body["game"]["board"] == "1" and "not sent" in body["error"]
        await post("/api/knockout/games/ko-sf1/result", {"result": "red"}, 200)
        await post("/api/knockout/games/ko-sf1/result", {"result": "black"}, 409, "path.id")
        ko = (await client.get("/api/knockout")).json()
    assert ko["games"][0]["result"] == "red" and ko["games"][0]["result_source"] == "manual"
    assert [p["id"] for p in ko["proposed"]] == ["ko-sf2"]


async def test_a_shared_fourth_place_needs_the_arbiters_four(
    tmp_path: Path, start_station: Any
) -> None:
    station: Station = await start_station(station_config(tmp_path), connect=False)
    # six players, round 1 won by red on each board: 甲 丙 戊 2, and 乙 丁 己 share 4th place
    await station.import_pairings(
        "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n1,3,戊,己\n", send=False
    )
    await station.import_players("name\n甲\n乙\n丙\n丁\n戊\n己\n")
    for board in ("1", "2", "3"):
        feed(station, board, 1, f"r1-b{board}", "red")
    assert station.ingest is not None
    await station.ingest.flush()
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        csrf = await login(client)
        r = await client.post("/api/knockout/start", json={"after_round": 1}, headers=csrf)
        assert r.status_code == 409 and "shared" in r.json()["error"], r.text
        assert r.json()["code"] == "knockout_fourth_shared"
        shared = r.json()["args"]
        assert shared["after_round"] == 1 and sorted(shared["players"]) == ["丁", "乙", "己"]
        top = ["戊", "丁", "丙", "乙"]
        body = {"top": top, "after_round": 1}
        r = await client.post("/api/knockout/start", json=body, headers=csrf)
        assert r.status_code == 200 and r.json()["top"] == top


async def test_a_regulation_without_a_knockout_refuses(tmp_path: Path, start_station: Any) -> None:
    station: Station = await start_station(
        station_config(tmp_path, regulation="wulong-2015"), connect=False
    )
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        csrf = await login(client)
        r = await client.post("/api/knockout/start", json={}, headers=csrf)
    assert r.status_code == 409 and "no knockout" in r.json()["error"]


async def test_starts_at_once_start_one_knockout(tmp_path: Path, start_station: Any) -> None:
    """Each action is one read-apply-save under the station's knockout lock (``KnockoutDesk``,
    no module-global table): of five starts at once, one starts it, four are refused."""
    station: Station = await start_station(station_config(tmp_path), connect=False)
    await swiss(station)
    async with httpx.AsyncClient(base_url=station.http_url, timeout=20) as client:
        csrf = await login(client)
        answers = await asyncio.gather(
            *(
                client.post(
                    "/api/knockout/start", json={"seed": seed, "after_round": AFTER}, headers=csrf
                )
                for seed in range(5)
            )
        )
        ko = (await client.get("/api/knockout")).json()
    assert sorted(r.status_code for r in answers) == [200, 409, 409, 409, 409]
    (started,) = [r.json() for r in answers if r.status_code == 200]
    assert ko["seed"] == started["seed"] and ko["started"]
