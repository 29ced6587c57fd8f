"""The standings say which games they do not count yet (an outsider: "第2轮后" looked final
while a flag in round 2 waited for its ruling, and its two players were simply not counted)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.station import decision_txn, envelope
from support.web import station_without_broker

from venue_station.domain.station import Station

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Station]:
    async with station_without_broker(tmp_path) as started:
        yield started


async def test_the_table_names_the_games_it_does_not_count(page: Any, station: Station) -> None:
    await station.import_players("name\n甲一\n乙二\n丙三\n丁四\n")
    await station.import_pairings(
        "round,board,red,black\n1,1,甲一,乙二\n1,2,丙三,丁四\n", send=False
    )
    assert station.ingest is not None
    won = {"winner": "red", "reason": "resignation"}
    facts = [
        envelope("1", 1, type="result", data=won, txn=decision_txn(station, "1", "result", won)),
        envelope("2", 1, type="flag", data={"side": "red"}, game="r1-b2"),
        envelope("2", 2, type="result", game="r1-b2",
                 data={"winner": "black", "reason": "flag", "status": "pending"}),
    ]  # fmt: skip
    for ev in facts:
        station.ingest.handle(f"qz/v1/test/board/{ev['board']}/event", json.dumps(ev).encode())
    await station.ingest.flush()

    await page.goto(f"{station.http_url}/standings?round=1&lang=zh")
    note = page.locator("#undecided")
    await note.wait_for()
    assert (
        await note.text_content() == "尚有 1 局未出结果（第1轮第2台），本表未计入：裁定后自动更新。"
    )
    await page.click("#lang")
    assert "1 game(s) without a result yet (round 1 board 2)" in (await note.text_content() or "")
    body = await page.evaluate("fetch('/api/standings?round=1').then(r => r.json())")
    assert body["undecided"] == [{"round": 1, "board": "2", "status": "pending"}]
    assert {r["player"]: r["points"] for r in body["standings"]}["甲一"] == 2


async def test_the_rounds_say_when_they_started(page: Any, station: Station) -> None:
    """GET /api/rounds: started_ms was null for every started round (an outsider)."""
    await station.import_players("name\n甲一\n乙二\n")
    await station.import_pairings("round,board,red,black\n1,1,甲一,乙二\n", send=False)
    assert station.ingest is not None
    started = 1_796_000_000_000
    ev = envelope("1", 1, type="started", data={}, ts=started, game="r1-b1")
    station.ingest.handle("qz/v1/test/board/1/event", json.dumps(ev).encode())
    await station.ingest.flush()
    await page.goto(f"{station.http_url}/standings")
    body = await page.evaluate("fetch('/api/rounds').then(r => r.json())")
    stored = await page.evaluate("fetch('/api/events?type=started').then(r => r.json())")
    ts = stored["events"][0]["ts"]
    assert abs(ts - started) < 1_000  # the event's ts as stored
    assert [(r["round"], r["started_ms"]) for r in body["rounds"]] == [(1, ts)]
