"""The alert list in words: who settled an alert is a person or, in words, the board's own
ruling — never a raw code (an outsider read "已确认 · board" as the board having ruled)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.station import Feeder
from support.web import station_without_broker

from venue_station.domain.station import Station

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


async def as_chief(page: Any, station: Station) -> None:
    """The arbiter page in Chinese, logged in as the chief."""
    await page.goto(f"{station.http_url}/arbiter?lang=zh")
    await page.fill("#username", "chief")
    await page.fill("#password", "pw-chief")
    await page.click("#login-submit")
    await page.wait_for_selector("#station:not([hidden])")


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Station]:
    async with station_without_broker(tmp_path) as started:
        yield started


async def test_an_alert_settled_by_its_boards_ruling_says_so_in_words(
    page: Any, station: Station
) -> None:
    """A pending foul's alert settled by the board's ruling event said "已确认 · board" (an
    outsider: an English code on the Chinese page, read as who ruled)."""
    await station.import_pairings("round,board,red,black\n1,1,甲一,乙二\n", send=False)
    feed = Feeder(station)
    pending = {"side": "red", "reason": "board_pause", "status": "pending", "count": 0}
    first = feed("1", "r1-b1", "foul", pending)
    feed("1", "r1-b1", "foul", {**pending, "status": "confirmed", "count": 1, "ref": first})
    await feed.flush()
    await as_chief(page, station)
    await page.check("#show-all")  # 显示已处理
    state = page.locator('#alerts li[data-kind="foul_pending"] .state')
    await state.wait_for(state="attached")
    assert await state.text_content() == "已确认 · 随台上裁定"
    await page.evaluate("QZ.setLang('en')")
    assert await state.text_content() == "confirmed · with the board's ruling"


async def test_two_nodes_with_one_identity_are_named_on_the_page(
    page: Any, station: Station
) -> None:
    """A node that hears another process connected as its boards says so in its status; the
    arbiter's page says it in words with the node's name (a technician to find the second Pi)."""
    from wire_contract.messages import BoardStatus

    assert station.ingest is not None
    status = BoardStatus(state="online", node="pi-07", session=2, ts=1, conn=1, clash=True)
    station.ingest._on_status("25", status, received_ms=station.ingest.started_ms + 1)
    await as_chief(page, station)
    row = page.locator('#alerts li[data-kind="identity_clash"]')
    await row.wait_for()
    text = await row.locator(".alert-head").inner_text()
    assert "两台计时节点使用同一身份" in text and "pi-07" in text and "25" in text
    # the same status again (every reconnect says it): still one alert
    station.ingest._on_status("26", status, received_ms=station.ingest.started_ms + 2)
    await station.ingest.flush()
    await page.evaluate("QZ.setLang('en')")
    assert "Two nodes use one identity" in await row.locator(".alert-head").inner_text()
    assert await page.locator('#alerts li[data-kind="identity_clash"]').count() == 1


async def test_a_station_wide_alert_names_no_board(page: Any, station: Station) -> None:
    """The station's own alerts (the broker gone, the store refusing) said 第*台 (an outsider
    organiser): they say 全场 / whole venue."""
    from venue_station.live.alerts import store_failing_alert

    assert station.ingest is not None
    station.ingest.raise_alert(store_failing_alert("test", station.ingest.started_ms + 5, "full"))
    await as_chief(page, station)
    head = page.locator('#alerts li[data-kind="store_failing"] .alert-head')
    await head.wait_for()
    text = await head.inner_text()
    assert "全场" in text and "*" not in text, text


async def test_a_double_forfeit_is_not_said_twice(page: Any, station: Station) -> None:
    """The board's event list said 结果已驳回：双方判负（双方判负） (an outsider organiser)."""
    await page.goto(f"{station.http_url}/arbiter?lang=zh")
    await page.wait_for_function("typeof QZ !== 'undefined' && !!QZ.describeEvent")
    ev = {"type": "result", "data": {"winner": None, "reason": "double_forfeit",
                                     "status": "dismissed"}}  # fmt: skip
    assert await page.evaluate("(ev) => QZ.describeEvent(ev)", ev) == "结果已驳回：双方判负"
    flag = {"type": "result", "data": {"winner": "black", "reason": "flag", "status": "confirmed"}}
    assert "（超时）" in await page.evaluate("(ev) => QZ.describeEvent(ev)", flag)
