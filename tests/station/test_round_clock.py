"""GET /api/round (issue 20): what the hall screens show of the round, from the stored
``started`` events and the regulation's late rule and schedule (DESIGN.md §2)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import envelope, station_config

from clock_service.regulation import Regulation
from venue_station.domain.station import Station
from venue_station.web.round_clock import next_session


def feed(station: Station, ev: dict[str, Any]) -> None:
    assert station.ingest is not None
    station.ingest.handle(f"qz/v1/test/board/{ev['board']}/event", json.dumps(ev).encode())


async def get_round(station: Station) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.get("/api/round")
    assert r.status_code == 200, r.text
    return dict(r.json())


@pytest.fixture
async def wulong(tmp_path: Path, start_station: Any) -> Station:
    config = station_config(tmp_path, regulation="wulong-2015")
    return await start_station(config, connect=False)


async def test_before_any_round_the_first_session_is_next(wulong: Station) -> None:
    body = await get_round(wulong)
    assert body["round"] is None and body["started_ms"] is None
    assert body["late_ms"] == 15 * 60_000 and body["rounds"] == 9
    nxt = body["next"]
    assert (nxt["round"], nxt["date"], nxt["time"]) == (1, "2015-09-19", "09:00")
    local = datetime.datetime(2015, 9, 19, 9, 0).astimezone()
    assert nxt["start_ms"] == int(local.timestamp() * 1000)


async def test_the_highest_started_round_and_its_first_start(wulong: Station) -> None:
    t0 = 1_700_000_000_000
    feed(wulong, envelope("1", 1, game="r1-b1", type="started", data={}, ts=t0))
    feed(wulong, envelope("2", 1, game="r2-b2", type="started", data={}, ts=t0 + 9_000_000))
    # A board started late (a spare clock): the round's start stays its first board's.
    feed(wulong, envelope("1", 2, game="r2-b1", type="started", data={}, ts=t0 + 9_400_000))
    feed(wulong, envelope("3", 1, game=None, type="started", data={}, ts=t0 + 9_900_000))
    assert wulong.ingest is not None
    await wulong.ingest.flush()
    body = await get_round(wulong)
    start = t0 + 9_000_000 + 1  # envelope() adds the seq to ts
    assert (body["round"], body["started_ms"]) == (2, start)
    assert body["late_deadline_ms"] == start + 15 * 60_000
    # Day 1: 09:00 two rounds, 13:30 three: after round 2 the next announced start is 13:30.
    assert (body["next"]["round"], body["next"]["time"]) == (3, "13:30")


def test_next_session_across_the_schedule() -> None:
    t = Regulation.load("wulong-2015").tournament
    got = [(n, s and (s["round"], s["date"], s["time"])) for n in (0, 1, 2, 4, 5, 7, 9)
           for s in [next_session(t, n)]]  # fmt: skip
    assert got == [
        (0, (1, "2015-09-19", "09:00")),
        (1, (3, "2015-09-19", "13:30")),  # round 2 follows round 1: no announced time
        (2, (3, "2015-09-19", "13:30")),
        (4, (6, "2015-09-20", "09:00")),
        (5, (6, "2015-09-20", "09:00")),
        (7, (8, "2015-09-20", "13:30")),
        (9, None),  # the last round: nothing after it
    ]
    # Meishan's seed leaves its schedule blank: no next start to show.
    assert next_session(Regulation.load("meishan-2016").tournament, 0) is None
