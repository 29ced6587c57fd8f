"""Statuses a fresh station finds retained on the broker (docs/station.md "Collector").

A board whose node stopped (``offline``) or died (``lost``) in an earlier event leaves that
status retained on the venue's broker for good. A station started after it shows the board
offline on the board list, but raises no alert for a board it has no business with (no
pairing, no game, no stored event): the arbiter would otherwise open the day with alerts for
every board nobody is using. A board that goes offline while the station runs, and a board of
this station's own games found offline when it restarts, still alert. Real Mosquitto.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from support.station import FakeNode, envelope, station_config, wait_until

from venue_station.domain.station import Station
from wire_contract.messages import Topics

TOPICS = Topics("test")
DAY_MS = 86_400_000


def _now() -> int:
    return time.time_ns() // 1_000_000


def _status(state: str, node: str, *, ts: int, session: int = 4) -> dict[str, Any]:
    return {"state": state, "node": node, "session": session, "ts": ts, "conn": ts}


async def _leave_retained(broker: Any, node: str, board: str, state: str, ts: int) -> None:
    """A node of an earlier event: says ``state`` retained and goes (the broker keeps it)."""
    async with FakeNode(broker, node, [board], keep_retained=True) as old:
        await old.publish(TOPICS.status(board), _status(state, node, ts=ts), retain=True)


async def _wait_until_async(predicate: Callable[[], Awaitable[bool]], timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not await predicate():
            await asyncio.sleep(0.05)


def _view(station: Station, board: str) -> dict[str, Any] | None:
    return next((v for v in station.board_views() if v["board"] == board), None)


async def _status_alerts(station: Station) -> list[dict[str, Any]]:
    assert station.ingest is not None and station.store is not None
    await station.ingest.flush()
    return [a for a in await station.store.alerts() if a["kind"] in ("board_offline", "board_lost")]


@pytest.mark.parametrize("state", ["offline", "lost"])
async def test_a_status_left_from_an_earlier_event_is_shown_but_not_alerted(
    broker_factory, tmp_path: Path, start_station, state: str
) -> None:
    broker = broker_factory()  # its own: the session broker holds other tests' statuses
    await _leave_retained(broker, "node-c", "5", state, _now() - 3 * DAY_MS)
    station = await start_station(station_config(tmp_path, broker))

    def shown() -> bool:
        view = _view(station, "5")
        return view is not None and view["status"] is not None

    await wait_until(shown, timeout=10)
    view = _view(station, "5")
    assert view is not None and view["online"] is False and view["status"]["state"] == state
    assert await _status_alerts(station) == []
    assert station.metrics.alerts_raised == 0

    # A board that goes offline while this station runs alerts as before.
    async with FakeNode(broker, "node-a", ["1"]) as node:
        await node.publish(TOPICS.status("1"), _status("online", "node-a", ts=_now()), retain=True)
        await node.publish(TOPICS.status("1"), _status("offline", "node-a", ts=_now() + 1))

        async def alerted() -> bool:
            return any(a["board"] == "1" for a in await _status_alerts(station))

        await _wait_until_async(alerted, timeout=10)
    assert [(a["board"], a["kind"]) for a in await _status_alerts(station)] == [
        ("1", "board_offline")
    ]


async def test_a_board_of_this_stations_games_found_offline_at_restart_alerts(
    broker_factory, tmp_path: Path, start_station
) -> None:
    broker = broker_factory()
    config = station_config(tmp_path, broker)
    first = await start_station(config)
    await first.import_pairings("round,board,red,black\n1,6,王天一,郑惟桐\n", send=False)
    await first.stop()
    # While the station was down the board's node stopped: today's board, today's news.
    await _leave_retained(broker, "node-c", "6", "offline", _now() - 60_000)
    second = await start_station(station_config(tmp_path, broker))
    await wait_until(lambda: _view(second, "6") is not None, timeout=10)

    async def alerted() -> bool:
        return bool(await _status_alerts(second))

    await _wait_until_async(alerted, timeout=10)
    assert [(a["board"], a["kind"]) for a in await _status_alerts(second)] == [
        ("6", "board_offline")
    ]


# -- which statuses count as leftovers (the rule, through the ingest) ------------------------
@pytest.fixture
async def station(tmp_path: Path, start_station) -> Station:
    return await start_station(station_config(tmp_path), connect=False, serve_http=False)


@pytest.mark.parametrize(
    ("case", "alerts"),
    [
        ("no business, retained, said before the start", False),
        ("paired today", True),
        ("a game bound to it (set_game to a spare clock)", True),
        ("an event stored from it", True),
        ("said after the start (a station reconnecting)", True),
        ("not retained: it arrived live", True),
    ],
)
async def test_which_offline_statuses_alert(station: Station, case: str, alerts: bool) -> None:
    ingest = station.ingest
    assert ingest is not None
    ts, retained = _now() - DAY_MS, True
    if case.startswith("paired"):
        ingest.add_paired_boards({"7"})
    elif case.startswith("a game"):
        ingest.authority.bind("r2-b7", "7")
    elif case.startswith("an event"):
        ingest.handle(TOPICS.event("7"), json.dumps(envelope("7", 1, game=None)).encode())
        await ingest.flush()
    elif case.startswith("said after"):
        ts = ingest.started_ms + 1
    elif case.startswith("not retained"):
        retained = False
    body = json.dumps(_status("offline", "node-c", ts=ts)).encode()
    ingest.handle(TOPICS.status("7"), body, retained=retained)
    assert [a["kind"] for a in await _status_alerts(station)] == (
        ["board_offline"] if alerts else []
    )
    view = _view(station, "7")
    assert view is not None and view["status"]["state"] == "offline"


async def test_a_lost_boards_stop_instant_outlives_a_reconnect(
    broker_factory: Any, tmp_path: Path, start_station: Any
) -> None:
    """A board's node died: its status says since when its clock stands (away_since_ms). The
    station's next connection gets the same retained ``lost`` again: the instant stays (a
    reviewer: it fell back to the state's ts, minutes older)."""
    station = await start_station(station_config(tmp_path, broker_factory()), serve_http=False)
    assert station.ingest is not None
    topic = TOPICS.status("1")
    now = _now()
    online = json.dumps(_status("online", "node-a", ts=now)).encode()
    lost = json.dumps({**_status("lost", "node-a", ts=now), "conn": now}).encode()
    station.ingest.handle(topic, online, received_ms=now + 10)
    station.ingest.handle(topic, lost, received_ms=now + 15_000)
    view = _view(station, "1")
    assert view is not None and view["status"]["away_since_ms"] == now + 10
    station.ingest.handle(topic, lost, received_ms=now + 60_000, retained=True)  # reconnected
    view = _view(station, "1")
    assert view is not None and view["status"]["away_since_ms"] == now + 10
