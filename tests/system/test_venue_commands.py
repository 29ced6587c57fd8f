"""Issue 25, "venue commands report what happened": pause / start / resume for the whole venue
answer per board — done, not needed (a finished game, a spare board: NOT a refusal), refused
(with the board's code), no answer (named) — summed up, and the board's reply carries a code
and its arguments for the pages to translate.

A real broker, a real node with four simulated faces (three paired, one spare), a silent
second node, a real station with its web. Only the HTTP API, as the arbiter page calls it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from support.node import node_config, running_node
from support.station import ARBITER, ARBITER_PASSWORD, FakeNode, station_config

from firmware_bridge.simulated import SimulatedFace

pytestmark = pytest.mark.broker

PLAYERS = "name\n甲一\n乙二\n丙三\n丁四\n戊五\n己六\n"
PAIRINGS = "round,board,red,black\n1,5,甲一,乙二\n1,6,丙三,丁四\n1,7,戊五,己六\n"


async def _login(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


def _outcomes(body: dict[str, Any]) -> dict[str, str]:
    return {row["board"]: row["outcome"] for row in body["boards"]}


async def _phase(client: httpx.AsyncClient, board: str, phase: str) -> None:
    async with asyncio.timeout(10):
        while True:
            view = (await client.get(f"/api/boards/{board}")).json()
            if (view.get("state") or {}).get("phase") == phase:
                return
            await asyncio.sleep(0.05)


async def test_venue_commands_sum_up_each_boards_outcome(
    broker_factory: Callable[..., Any], start_station: Callable[..., Any], tmp_path: Any
) -> None:
    broker = broker_factory()
    faces = {b: SimulatedFace(mode="idle") for b in ("5", "6", "7", "8")}  # 8: the spare
    config = node_config(broker, "node-c", list(faces), tmp_path / "node")
    station = await start_station(station_config(tmp_path, broker, command_timeout_s=2.0))

    async with (
        running_node(config, faces),
        httpx.AsyncClient(base_url=station.http_url, timeout=15) as client,
    ):
        h = await _login(client)
        await station.import_players(PLAYERS)
        replies = (await station.import_pairings(PAIRINGS, send=True))["set_game"]
        assert all(r["ok"] for r in replies.values()), replies
        assert station.ingest is not None

        async def four_online() -> None:
            async with asyncio.timeout(10):
                while True:
                    views = station.ingest.boards
                    if all(
                        views.get(b) and (views[b].status or {}).get("state") == "online"
                        for b in faces
                    ):
                        return
                    await asyncio.sleep(0.05)

        await four_online()

        # The venue start with a spare board: 3 started, the spare needed nothing. Not "rejected".
        r = await client.post("/api/venue/cmd", json={"cmd": "start"}, headers=h)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["ok"] and body["outcome"] == "ok", body
        assert body["summary"] == {"done": 3, "not_needed": 1, "refused": 0, "no_answer": 0}
        assert _outcomes(body) == {"5": "done", "6": "done", "7": "done", "8": "not_needed"}
        spare = next(row for row in body["boards"] if row["board"] == "8")
        assert spare["code"] == "no_game"

        # Board 7's game ends; pause all: 2 paused, 2 needed nothing; not a refusal.
        for board in ("5", "6", "7"):
            await _phase(client, board, "running")
        enter = {"cmd": "result", "args": {"winner": "red", "reason": "resignation"}}
        assert (await client.post("/api/boards/7/cmd", json=enter, headers=h)).json()["ok"]
        await _phase(client, "7", "finished")
        r = await client.post("/api/venue/cmd", json={"cmd": "pause"}, headers=h)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["ok"], body
        assert body["summary"] == {"done": 2, "not_needed": 2, "refused": 0, "no_answer": 0}
        finished = next(row for row in body["boards"] if row["board"] == "7")
        assert (finished["outcome"], finished["code"], finished["args"]) == (
            "not_needed",
            "finished",
            {"phase": "finished"},
        )

        # A board asked by name says what it did, with a code the page translates.
        r = await client.post("/api/boards/7/cmd", json={"cmd": "pause"}, headers=h)
        body = r.json()
        assert (body["outcome"], body["code"], body["args"]) == (
            "rejected",
            "finished",
            {"phase": "finished"},
        )
        r = await client.post("/api/boards/5/cmd", json={"cmd": "resume"}, headers=h)
        assert r.json()["ok"], r.text
        r = await client.post("/api/boards/5/cmd", json={"cmd": "start"}, headers=h)
        assert r.json()["code"] == "already_started", r.text

        # A board that does not answer is named, the others still counted.
        async with FakeNode(broker, "node-a", ["1"], answer=False) as silent:
            status = {"state": "online", "node": "node-a", "session": 1, "ts": 1}
            await silent.publish(silent.topics.status("1"), status, retain=True)
            async with asyncio.timeout(5):
                while (station.ingest.boards.get("1") is None) or (
                    (station.ingest.boards["1"].status or {}).get("state") != "online"
                ):
                    await asyncio.sleep(0.05)
            r = await client.post("/api/venue/cmd", json={"cmd": "resume"}, headers=h)
            assert r.status_code == 504, r.text
            body = r.json()
            assert body["code"] == "no_answer"
            assert body["summary"] == {"done": 1, "not_needed": 3, "refused": 0, "no_answer": 1}
            assert _outcomes(body)["1"] == "no_answer" and body["missing"] == ["1"]
