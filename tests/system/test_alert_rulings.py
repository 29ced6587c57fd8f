"""Issue 25, "one decision, one click": an alert that carries a proposal is ruled by its own
confirm / dismiss through the HTTP API (as the arbiter page does), the board is told (a
``resolve`` with the station's txn) and the decision shows in every view at once.

A real broker, a real node with simulated clock faces, a real station with its web (SQLite).
The arbiter never sends a raw command here: only ``POST /api/alerts/{id}``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from support.node import node_config, running_node
from support.station import ARBITER, ARBITER_PASSWORD, station_config

from firmware_bridge.simulated import SimulatedFace

pytestmark = pytest.mark.broker

PLAYERS = "name\n甲一\n乙二\n丙三\n丁四\n戊五\n己六\n"
PAIRINGS = "round,board,red,black\n1,5,甲一,乙二\n1,6,丙三,丁四\n1,7,戊五,己六\n"
MIN = 60_000


async def _wait(predicate: Callable[[], Any], what: str, timeout: float = 10.0) -> None:
    try:
        async with asyncio.timeout(timeout):
            while True:
                value = predicate()
                if asyncio.iscoroutine(value):
                    value = await value
                if value:
                    return
                await asyncio.sleep(0.03)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


async def _login(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


async def _open_alert(client: httpx.AsyncClient, board: str, kind: str, **match: Any) -> Any:
    async def found() -> Any:
        alerts = (await client.get("/api/alerts", params={"status": "open"})).json()["alerts"]
        hits = [
            a
            for a in alerts
            if a["board"] == board
            and a["kind"] == kind
            and all(a.get(k) == v for k, v in match.items())
        ]
        return hits[0] if hits else None

    await _wait(found, f"an open {kind} alert on board {board}")
    return await found()


async def _game(client: httpx.AsyncClient, game: str) -> dict[str, Any]:
    games = (await client.get("/api/games", params={"round": 1})).json()["games"]
    return next(g for g in games if g["game"] == game)


async def _points(client: httpx.AsyncClient) -> dict[str, float]:
    r = await client.get("/api/standings")
    assert r.status_code == 200, r.text
    return {row["player"]: row["points"] for row in r.json()["standings"]}


async def test_confirming_a_flag_alert_decides_the_game_everywhere(
    broker_factory: Callable[..., Any], start_station: Callable[..., Any], tmp_path: Any
) -> None:
    broker = broker_factory()
    faces = {b: SimulatedFace(mode="idle") for b in ("5", "6", "7")}
    config = node_config(broker, "node-c", list(faces), tmp_path / "node")
    station = await start_station(station_config(tmp_path, broker, command_timeout_s=3.0))

    async with (
        running_node(config, faces) as node,
        httpx.AsyncClient(base_url=station.http_url, timeout=10) as client,
    ):
        h = await _login(client)
        await station.import_players(PLAYERS)
        await station.import_pairings(PAIRINGS, send=False)
        # Board 5 plays a one-second game: red's flag falls.
        args = {"game": "r1-b5", "tc": "1+0", "red": "甲一", "black": "乙二"}
        assert (await station.send_command("5", "set_game", args)).ok
        assert (await station.send_command("5", "start")).ok
        flag = await _open_alert(client, "5", "flag")
        # Not decided before the ruling: a proposal counts nowhere.
        assert (await _game(client, "r1-b5"))["result"] is None

        r = await client.post(f"/api/alerts/{flag['id']}", json={"action": "confirm"}, headers=h)
        assert r.status_code == 200, r.text
        assert r.json()["alert"]["status"] == "confirmed"
        assert r.json()["command"]["cmd"] == "resolve" and r.json()["command"]["ok"]

        async def decided() -> bool:
            return (await _game(client, "r1-b5"))["result"] == "0-1"

        await _wait(decided, "the flag's loss in /api/games")
        game = await _game(client, "r1-b5")
        assert (game["winner"], game["reason"]) == ("black", "flag")
        points = await _points(client)
        assert points["乙二"] == 2 and points["甲一"] == 0  # Meishan: a win is 2 points
        csv = (await client.get("/api/export/rounds/1/results.csv")).text
        assert "r1-b5,甲一,乙二,0-1,0,2,flag" in csv, csv
        pgn = (await client.get("/api/export/games/r1-b5/clock.pgn")).text
        assert '[Result "0-1"]' in pgn, pgn
        trf = await client.get("/api/export/tournament.trf")
        assert trf.status_code == 200, trf.text

        # Ruling it again is refused with a reason, not a silent success.
        again = await client.post(
            f"/api/alerts/{flag['id']}", json={"action": "dismiss"}, headers=h
        )
        assert again.status_code == 409, again.text
        assert again.json()["code"] == "already_ruled"
        assert (await _game(client, "r1-b5"))["result"] == "0-1"

        # Entering a result over a decided game is refused too (unless it says it replaces).
        enter = {"cmd": "result", "args": {"winner": "red", "reason": "resignation"}}
        twice = await client.post("/api/boards/5/cmd", json=enter, headers=h)
        assert twice.status_code == 409 and twice.json()["code"] == "already_decided", twice.text
        assert (await _game(client, "r1-b5"))["result"] == "0-1"
        assert node.boards["5"].result == {"winner": "black", "reason": "flag"}


async def test_a_double_no_show_waits_for_both_rulings(
    broker_factory: Callable[..., Any], start_station: Callable[..., Any], tmp_path: Any
) -> None:
    broker = broker_factory()
    faces = {b: SimulatedFace(mode="idle") for b in ("5", "6", "7")}
    config = node_config(broker, "node-c", list(faces), tmp_path / "node")
    station = await start_station(station_config(tmp_path, broker, command_timeout_s=3.0))

    async with (
        running_node(config, faces),
        httpx.AsyncClient(base_url=station.http_url, timeout=10) as client,
    ):
        h = await _login(client)
        await station.import_players(PLAYERS)
        replies = (await station.import_pairings(PAIRINGS, send=True))["set_game"]
        assert all(r["ok"] for r in replies.values()), replies
        now = int(time.time() * 1000)
        # Board 6: the round was started 16 minutes ago and nobody has pressed.
        assert (await station.send_command("6", "start", {"at": now - 16 * MIN})).ok
        red = await _open_alert(client, "6", "late", side="red")
        black = await _open_alert(client, "6", "late", side="black")
        # The lateness is one decision per side: no second alert for the same forfeit.
        await asyncio.sleep(0.3)
        alerts = (await client.get("/api/alerts", params={"status": "open"})).json()["alerts"]
        assert sorted(a["kind"] for a in alerts if a["board"] == "6") == ["late", "late"]

        r = await client.post(f"/api/alerts/{red['id']}", json={"action": "confirm"}, headers=h)
        assert r.status_code == 200, r.text
        await asyncio.sleep(0.5)  # whatever the first ruling leads to is stored by now
        game = await _game(client, "r1-b6")
        assert game["result"] is None, game  # not 0-1 for a moment: black is still to rule
        assert (await _points(client)).get("丁四", 0) == 0

        r = await client.post(f"/api/alerts/{black['id']}", json={"action": "confirm"}, headers=h)
        assert r.status_code == 200, r.text

        async def double() -> bool:
            return (await _game(client, "r1-b6"))["result"] == "0-0"

        await _wait(double, "the 0:0 of a double no-show")
        assert (await _game(client, "r1-b6"))["reason"] == "double_forfeit"
        csv = (await client.get("/api/export/rounds/1/results.csv")).text
        assert "r1-b6,丙三,丁四,0-0,0,0,double_forfeit" in csv, csv


async def test_an_early_draw_warning_is_ruled_at_the_first_tap(
    broker_factory: Callable[..., Any], start_station: Callable[..., Any], tmp_path: Any
) -> None:
    """Wulong 三、1: a draw agreed before move 20 raises a pending warning. Its 确认 / 驳回 used to
    time out at the first tap (the node could not publish a warning carrying ``ref``, and its
    reply was too long to send); the ruling was lost (an outsider, 4 boards of 4)."""
    broker = broker_factory()
    faces = {b: SimulatedFace(mode="idle") for b in ("5", "6")}
    config = node_config(broker, "node-c", list(faces), tmp_path / "node", regulation="wulong-2015")
    station = await start_station(
        station_config(tmp_path, broker, command_timeout_s=3.0, regulation="wulong-2015")
    )
    async with (
        running_node(config, faces),
        httpx.AsyncClient(base_url=station.http_url, timeout=10) as client,
    ):
        h = await _login(client)
        await station.import_players(PLAYERS)
        await station.import_pairings(PAIRINGS, send=False)
        for board, action in (("5", "confirm"), ("6", "dismiss")):
            game = f"r1-b{board}"
            args = {"game": game, "tc": "35m+5s", "red": "甲一", "black": "乙二"}
            assert (await station.send_command(board, "set_game", args)).ok
            assert (await station.send_command(board, "start")).ok
            draw = {"winner": None, "reason": "agreed_draw"}
            assert (await station.send_command(board, "result", draw)).ok
            warning = await _open_alert(client, board, "warning")
            assert warning["detail"]["reason"] == "draw_too_early"
            r = await client.post(
                f"/api/alerts/{warning['id']}", json={"action": action}, headers=h
            )
            assert r.status_code == 200, r.text
            assert r.json()["command"]["ok"], r.json()

            async def ruled(
                board: str = board, status: str = f"{action}ed", seq: int = warning["seq"]
            ) -> bool:
                events = (await client.get("/api/events", params={"board": board})).json()
                return any(
                    e["type"] == "warning"
                    and e["data"].get("ref") == seq
                    and e["data"]["status"] == status
                    for e in events["events"]
                )

            await _wait(ruled, f"board {board}'s ruling on its warning, stored")
