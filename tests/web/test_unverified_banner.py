"""Decisions stored unverified are on every page until the arbiter has looked at each (issue 28).

A new station (its predecessor's disk lost) is replayed the nodes' journals: the confirmed
results in them answer commands this station never sent, so they are stored as proposals
(``pending, unverified``). The arbiter must know: one ``unverified_decision`` alert per such
decision, and a banner on every page saying how many and where to look (both languages),
gone once each alert is ruled. A real station, a real Mosquitto, chromium.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD
from support.web import WebStation

from venue_station.web.api_models import StationAlarm

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

PAGES = ("/", "/board/1", "/arbiter", "/standings", "/pairing")


async def test_unverified_decisions_are_counted_on_every_page(
    web_station: WebStation, page: Any
) -> None:
    fake = await web_station.fake_node("node-a", ["1", "2"])
    await web_station.publish_status(fake, "1", "online")
    for board in ("1", "2"):
        await fake.emit(board, type="started", data={"side_on_move": "red"})
        won = {"winner": "red", "reason": "resignation", "status": "confirmed"}
        await fake.emit(board, type="result", data=won, txn="st-of-a-station-gone")
    sent = time.monotonic()
    await page.goto(web_station.url + "/")
    # counted every 2 s: the first banner may have seen one of the two
    await page.wait_for_selector('#qz-alarm:has-text("2 项判决未经本站核实")', timeout=5000)
    assert time.monotonic() - sent < 5
    for path in PAGES:
        for lang, word in (("zh-CN", "裁判台的提醒"), ("en", "2 decision(s) not verified")):
            await page.goto(f"{web_station.url}{path}?lang={lang}")
            await page.wait_for_selector("#qz-alarm", timeout=5000)
            assert word in (await page.text_content("#qz-alarm") or ""), (path, lang)
    station = web_station.station
    assert station.store is not None and station.ingest is not None
    await station.ingest.flush()
    (alarm,) = station.info()["alarms"]
    assert StationAlarm.model_validate(alarm).count == 2
    alerts = [a for a in await station.store.alerts() if a["kind"] == "unverified_decision"]
    assert sorted(a["board"] for a in alerts) == ["1", "2"]
    assert all(a["detail"]["type"] == "result" and a["detail"]["winner"] == "red" for a in alerts)
    # stored as proposals, deciding nothing
    for board in ("1", "2"):
        (result,) = [
            e for e in await station.store.game_events(f"r1-b{board}") if e["type"] == "result"
        ]
        assert result["data"]["status"] == "pending" and result["data"]["unverified"]

    async with httpx.AsyncClient(base_url=web_station.url) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        headers = {"X-CSRF-Token": r.json()["csrf"]}
        for alert in alerts:
            r = await client.post(
                f"/api/alerts/{alert['id']}", json={"action": "ack"}, headers=headers
            )
            assert r.status_code == 200, r.text
    await page.goto(web_station.url + "/")
    await page.wait_for_selector("#qz-alarm", state="detached", timeout=8000)
    assert [a["code"] for a in station.info()["alarms"]] == []
