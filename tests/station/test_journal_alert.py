"""A node whose SD card refuses writes says so in its status; the station alerts (issue 28).

Its clocks run on and its events wait on the node (nothing unjournaled is published), so the
station's view of those boards is behind: the arbiter must hear of it at once, once per
connection, and see the board marked. Real Mosquitto, real station.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from support.station import FakeNode, station_config, wait_until

from venue_station.domain.station import Station
from wire_contract.messages import Topics

pytestmark = pytest.mark.broker
TOPICS = Topics("test")


def _now() -> int:
    return time.time_ns() // 1_000_000


async def _journal_alerts(station: Station) -> list[dict[str, Any]]:
    assert station.ingest is not None and station.store is not None
    await station.ingest.flush()
    return [a for a in await station.store.alerts() if a["kind"] == "journal_failing"]


async def test_a_failing_journal_is_one_alert_and_shows_on_the_board(
    venue_broker, tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path, venue_broker))
    conn = _now()
    base = {"state": "online", "node": "node-c", "session": 3, "conn": conn}
    async with FakeNode(venue_broker, "node-c", ["7"]) as node:
        await node.publish(TOPICS.status("7"), {**base, "ts": conn}, retain=True)
        await asyncio.sleep(0.3)
        assert await _journal_alerts(station) == []
        started = time.monotonic()
        for i in (1, 2):  # said again (a rebirth): still one alert for this connection
            status = {**base, "ts": conn + i, "journal": "failing"}
            await node.publish(TOPICS.status("7"), status, retain=True)
        alerts: list[dict[str, Any]] = []

        async def alerted() -> bool:
            alerts[:] = await _journal_alerts(station)
            return bool(alerts)

        async with asyncio.timeout(5):
            while not await alerted():
                await asyncio.sleep(0.05)
        assert time.monotonic() - started < 5
        await asyncio.sleep(0.3)
        assert [(a["board"], a["kind"]) for a in await _journal_alerts(station)] == [
            ("7", "journal_failing")
        ]
        view = next(v for v in station.board_views() if v["board"] == "7")
        assert view["status"]["journal"] == "failing"
        # the card has room again: the status says nothing of the journal
        await node.publish(TOPICS.status("7"), {**base, "ts": conn + 3}, retain=True)
        await wait_until(
            lambda: (
                "journal"
                not in next(v for v in station.board_views() if v["board"] == "7")["status"]
            ),
            timeout=5,
        )
