"""A Swiss round imported while the knockout's games are on their boards (Meishan:
七轮后前4名进入淘汰赛 … 其余棋手继续完成剩余轮次的比赛): an outsider chief confirmed the semi-finals
on boards 1 and 2 and imported round 8's pairs list numbered from board 1 — its first two
games took the semi-finals' boards without a word. The round is now placed, in its own order, on
the boards the knockout leaves free, and the answer says so; a round before the knockout never
moves.

A real broker and station; the boards a FakeNode that answers the commands."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import (
    ARBITER,
    ARBITER_PASSWORD,
    FakeNode,
    decision_txn,
    envelope,
    station_config,
)

from venue_station.domain.knockout_boards import placed
from venue_station.domain.station import Station
from venue_station.errors import ImportRefused

PLAYERS = "name\n" + "".join(f"{n}\n" for n in "甲乙丙丁戊己庚辛")
# round 1: 甲>乙, 丙>丁, 戊>己, 庚>辛; round 2: 甲>丙, 戊>庚, 丁>乙, 辛>己 -> top four 甲 戊 丙 庚
SWISS = (
    "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n1,3,戊,己\n1,4,庚,辛\n"
    "2,1,甲,丙\n2,2,戊,庚\n2,3,丁,乙\n2,4,辛,己\n"
)


def test_a_round_takes_the_boards_the_knockout_leaves_free() -> None:
    rows = [{"board": str(b), "red": f"r{b}", "black": f"b{b}"} for b in (1, 2, 3, 4)]
    assert placed(8, rows, {"1": "ko-sf1", "2": "ko-sf2"}) == {
        "1": "3",
        "2": "4",
        "3": "5",
        "4": "6",
    }
    assert [(r["board"], r["red"]) for r in rows] == [
        ("3", "r1"),
        ("4", "r2"),
        ("5", "r3"),
        ("6", "r4"),
    ]
    rows = [{"board": "5", "red": "x", "black": "y"}]
    assert placed(9, rows, {"1": "ko-f"}) == {} and rows[0]["board"] == "5"  # no clash: kept
    with pytest.raises(ImportRefused) as refused:
        mixed = [{"board": "A", "red": "x", "black": "y"}, {"board": "1", "red": "p", "black": "q"}]
        placed(8, mixed, {"1": "ko-sf1"})
    assert refused.value.code == "board_held" and refused.value.args_["games"] == ["ko-sf1"]


async def _after_two_rounds(station: Station) -> None:
    await station.import_players(PLAYERS)
    await station.import_pairings(SWISS, send=False)
    seqs: dict[str, int] = {}
    assert station.ingest is not None
    for game in ("r1-b1", "r1-b2", "r1-b3", "r1-b4", "r2-b1", "r2-b2", "r2-b3", "r2-b4"):
        board = game[-1]
        seqs[board] = seqs.get(board, 0) + 1
        data = {"winner": "red", "reason": "resign"}
        txn = decision_txn(station, board, "result", data)
        ev = envelope(board, seqs[board], game=game, type="result", data=data, txn=txn)
        station.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())
    await station.ingest.flush()


async def _chief(client: httpx.AsyncClient) -> dict[str, str]:
    login = {"username": ARBITER, "password": ARBITER_PASSWORD}
    return {"X-CSRF-Token": (await client.post("/api/auth/login", json=login)).json()["csrf"]}


@pytest.mark.broker
async def test_a_semi_final_is_not_put_on_a_board_a_swiss_game_waits_on(
    venue_broker: Any, tmp_path: Path, start_station: Any
) -> None:
    """The other order: round 3 imported and sent first (boards 1 and 2), then a semi-final
    confirmed onto board 1 — its set_game would take the board from the round's game, not
    started yet, without a word (a reviewer). Refused, board_held; another board takes it."""
    config = station_config(tmp_path, venue_broker, command_timeout_s=2.0)
    station: Station = await start_station(config)
    await _after_two_rounds(station)
    async with (
        FakeNode(venue_broker, "node-a", ["1", "2"]) as node,
        FakeNode(venue_broker, "node-b", ["3", "4"]) as other,
        httpx.AsyncClient(base_url=station.http_url) as client,
    ):
        node.seq.update({"1": 2, "2": 2})
        other.seq.update({"3": 2, "4": 2})
        csrf = await _chief(client)
        r = await client.post("/api/knockout/start", json={"seed": 1, "after_round": 2},
                              headers=csrf)  # fmt: skip
        assert r.status_code == 200, r.text
        third = "round,board,red,black\n3,1,丁,辛\n3,2,乙,己\n"
        r = await client.post("/api/pairings?send=1", content=third.encode(), headers=csrf)
        assert r.status_code == 200 and "moved_boards" not in r.json(), r.text
        r = await client.post("/api/knockout/games/ko-sf1/confirm", json={"board": "1"},
                              headers=csrf)  # fmt: skip
        assert r.status_code == 409 and r.json()["code"] == "board_held", r.text
        assert r.json()["args"] == {"board": "1", "game": "r3-b1"}
        r = await client.post("/api/knockout/games/ko-sf1/confirm", json={"board": "3"},
                              headers=csrf)  # fmt: skip
        assert r.status_code == 200 and r.json()["command"]["ok"], r.text
    sent = [(b, c.args["game"]) for b, c in node.commands + other.commands if c.cmd == "set_game"]
    assert ("1", "ko-sf1") not in sent and ("1", "r3-b1") in sent and ("3", "ko-sf1") in sent


@pytest.mark.broker
async def test_round_three_keeps_off_the_semi_finals_boards(
    venue_broker: Any, tmp_path: Path, start_station: Any
) -> None:
    config = station_config(tmp_path, venue_broker, command_timeout_s=2.0)
    station: Station = await start_station(config)
    await _after_two_rounds(station)
    async with (
        FakeNode(venue_broker, "node-a", ["1", "2"]) as node,
        FakeNode(venue_broker, "node-b", ["3", "4"]) as other,
        httpx.AsyncClient(base_url=station.http_url) as client,
    ):
        node.seq.update({"1": 2, "2": 2})
        other.seq.update({"3": 2, "4": 2})
        csrf = await _chief(client)
        r = await client.post(
            "/api/knockout/start", json={"seed": 1, "after_round": 2}, headers=csrf
        )
        assert r.status_code == 200, r.text
        top = r.json()["top"]
        assert sorted(top) == sorted("甲戊丙庚"), top
        for gid, board in (("ko-sf1", "1"), ("ko-sf2", "2")):
            r = await client.post(f"/api/knockout/games/{gid}/confirm", json={"board": board},
                                  headers=csrf)  # fmt: skip
            assert r.status_code == 200 and r.json()["command"]["ok"], r.text
        # round 3 for the other four, as a pairing program numbers it: boards 1 and 2
        third = "round,board,red,black\n3,1,丁,辛\n3,2,乙,己\n"
        r = await client.post("/api/pairings?send=1", content=third.encode(), headers=csrf)
        assert r.status_code == 200, r.text
        answer = r.json()
        # 录谱: Meishan's top two boards are the semi-finals' now, and their records are due
        # with round 3's (they were in no round's duties: an outsider chief found no card)
        duties = (await client.get("/api/record-duties?round=3")).json()["duties"]
        # the round's PGN file holds the knockout's games played beside it, first
        pgn = (await client.get("/api/export/rounds/3/games.pgn")).text
        # the semi-finals decided, the final not yet confirmed: round 4 still keeps off the
        # knockout's boards, where its final and third-place game will go (an outsider chief:
        # round 9 took boards 1–6 and the final went to board 7)
        for gid in ("ko-sf1", "ko-sf2"):
            r = await client.post(f"/api/knockout/games/{gid}/result", json={"result": "red"},
                                  headers=csrf)  # fmt: skip
            assert r.status_code == 200, r.text
        fourth = "round,board,red,black\n4,1,丁,乙\n4,2,辛,己\n"
        r = await client.post("/api/pairings?send=0", content=fourth.encode(), headers=csrf)
        assert r.status_code == 200 and r.json()["moved_boards"] == {"4": {"1": "3", "2": "4"}}
    assert answer["moved_boards"] == {"3": {"1": "3", "2": "4"}}, answer
    games = {
        g["game"]: (g["board"], g["red"], g["black"])
        for g in await station.require_store().games(3)
    }
    assert games == {"r3-b3": ("3", "丁", "辛"), "r3-b4": ("4", "乙", "己")}
    assert all(answer["set_game"][b]["ok"] for b in ("3", "4")), answer
    sent = {b: c.args["game"] for b, c in node.commands + other.commands if c.cmd == "set_game"}
    assert sent["1"] == "ko-sf1" and sent["2"] == "ko-sf2"  # the semi-finals stay
    assert sent["3"] == "r3-b3" and sent["4"] == "r3-b4"
    assert [(d["game"], d["board"], d["because"]) for d in duties] == [
        ("ko-sf1", "1", "top"),
        ("ko-sf2", "2", "top"),
    ], duties
    ids = [line.split('"')[1] for line in pgn.splitlines() if line.startswith("[GameId ")]
    assert ids == ["ko-sf1", "ko-sf2", "r3-b3", "r3-b4"], pgn
    # each game says what it is: the semi-finals their stage (their Round alone is round 3's)
    stages = [re.findall(r'\[Stage "([^"]*)"\]', g) for g in pgn.split("[Event ")[1:]]
    assert stages == [["Semi-final"], ["Semi-final"], [], []], pgn


@pytest.mark.browser
@pytest.mark.broker
@pytest.mark.asyncio(loop_scope="session")
async def test_the_round_sheet_shows_the_knockout_games_beside_the_round(
    venue_broker: Any, tmp_path: Path, start_station: Any, page: Any
) -> None:
    """The wall's 对阵表 of round 3 lists the semi-finals on boards 1 and 2 with what they are,
    then the round's own games on 3 and 4 (a reviewer: the sheet left the knockout out)."""
    station: Station = await start_station(
        station_config(tmp_path, venue_broker, command_timeout_s=2.0)
    )
    await _after_two_rounds(station)
    async with (
        FakeNode(venue_broker, "node-a", ["1", "2"]) as node,
        FakeNode(venue_broker, "node-b", ["3", "4"]) as other,
        httpx.AsyncClient(base_url=station.http_url) as client,
    ):
        node.seq.update({"1": 2, "2": 2})
        other.seq.update({"3": 2, "4": 2})
        csrf = await _chief(client)
        r = await client.post("/api/knockout/start", json={"seed": 1, "after_round": 2},
                              headers=csrf)  # fmt: skip
        semis = {p["id"]: (p["red"], p["black"]) for p in r.json()["proposed"]}
        for gid, board in (("ko-sf1", "1"), ("ko-sf2", "2")):
            r = await client.post(f"/api/knockout/games/{gid}/confirm", json={"board": board},
                                  headers=csrf)  # fmt: skip
            assert r.status_code == 200, r.text
        third = "round,board,red,black\n3,1,丁,辛\n3,2,乙,己\n"
        assert (await client.post("/api/pairings?send=0", content=third.encode(),
                                  headers=csrf)).status_code == 200  # fmt: skip
        await page.goto(f"{station.http_url}/round-sheet?round=3&lang=zh")
        await page.wait_for_function("document.querySelectorAll('#rows tr').length === 4")
        rows = await page.eval_on_selector_all(
            "#rows tr", "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))"
        )
    assert [(r[0], r[1], r[5]) for r in rows] == [
        ("1 · 半决赛", *semis["ko-sf1"]),
        ("2 · 半决赛", *semis["ko-sf2"]),
        ("3", "丁", "辛"),
        ("4", "乙", "己"),
    ], rows
