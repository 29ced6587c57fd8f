"""Issue 25: one node's outage is ONE alert, and an alert that only informs closes by itself,
saying so, when its cause is gone (the boards are back online).

A real broker; the node's side is its real broker account publishing the boards' statuses as
a node does (online, then the wills: lost); a real station with its web, read over HTTP.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, FakeNode, station_config

pytestmark = pytest.mark.broker

BOARDS = ["5", "6", "7", "8"]


async def _alerts(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    return [
        a
        for a in (await client.get("/api/alerts")).json()["alerts"]
        if a["kind"] in ("board_lost", "board_offline")
    ]


async def _until(predicate: Callable[[], Any], what: str, timeout: float = 8.0) -> Any:
    async with asyncio.timeout(timeout):
        while True:
            value = await predicate()
            if value:
                return value
            await asyncio.sleep(0.05)
    raise AssertionError(what)  # pragma: no cover


async def test_a_nodes_power_cut_is_one_alert_cleared_when_its_boards_are_back(
    broker_factory: Callable[..., Any], start_station: Callable[..., Any], tmp_path: Any
) -> None:
    broker = broker_factory()
    station = await start_station(station_config(tmp_path, broker))
    async with (
        FakeNode(broker, "node-c", BOARDS) as node,
        httpx.AsyncClient(base_url=station.http_url, timeout=10) as client,
    ):
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        assert r.status_code == 200

        async def say(state: str) -> None:
            for board in BOARDS:
                body = {
                    "state": state,
                    "node": "node-c",
                    "session": 1,
                    "ts": int(time.time() * 1000),
                }
                await node.publish(node.topics.status(board), body, retain=True)

        def all_in(state: str) -> bool:
            assert station.ingest is not None
            views = station.ingest.boards
            return all(
                views.get(b) is not None and (views[b].status or {}).get("state") == state
                for b in BOARDS
            )

        async def in_state(state: str) -> bool:
            return all_in(state)

        await say("online")
        await _until(lambda: in_state("online"), "the boards online")
        await say("lost")  # the node's power is cut: every board's will
        await _until(lambda: in_state("lost"), "the boards lost")
        assert station.ingest is not None
        await station.ingest.flush()
        await asyncio.sleep(0.2)
        await station.ingest.flush()
        alerts = await _alerts(client)
        assert len(alerts) == 1, alerts  # one outage, one alert
        [outage] = alerts
        assert outage["kind"] == "board_lost" and outage["status"] == "open"
        assert outage["detail"]["boards"] == BOARDS and outage["detail"]["node"] == "node-c"

        await say("online")  # power back
        await _until(lambda: in_state("online"), "the boards back")

        async def cleared() -> Any:
            await station.ingest.flush()
            [row] = await _alerts(client)
            return row if row["status"] == "cleared" else None

        row = await _until(cleared, "the outage alert cleared by itself")
        assert (row["by"], row["detail"]["cleared"]) == ("station", "back_online")
        active = (await client.get("/api/alerts", params={"status": "active"})).json()["alerts"]
        assert not [a for a in active if a["kind"] == "board_lost"]
        settled = (await client.get("/api/alerts", params={"status": "cleared"})).json()["alerts"]
        assert [a["id"] for a in settled] == [row["id"]]
