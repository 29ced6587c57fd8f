"""A board the round pairs whose clock never came online is a board, not "no such board".

Round 1 pairs boards 1 and 2; board 1's Pi is online, board 2's never answered (a dead Pi, a
recorder's phone after 退出录谱账号, a player scanning the table's code before the technician
got there). The player's page of board 2 said 无此台次 and the arbiter's grid had no card for
it: the board the technician must go to was the one the station did not show. Now it is a
card that says it was never seen (未连接), everywhere a board is shown; a board no round pairs
is still no board.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from support.web import WebStation, login, open_page, served_station

from broker_config import Roster

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]
FAKES: dict[str, Any] = {}  # the fixture's node, for what it was sent


@pytest_asyncio.fixture(loop_scope="session")
async def venue(broker_factory: Callable[..., Any], tmp_path: Path) -> AsyncIterator[WebStation]:
    broker = broker_factory(Roster.build(venue="test", nodes={"node-a": ["1"]}, arbiters=["arb"]))
    async with served_station(broker, tmp_path) as web:
        fake = FAKES["node-a"] = await web.fake_node("node-a", ["1"])
        await web.publish_status(fake, "1", "online")
        await web.publish_state(fake, "1", red="甲", black="乙")
        await web.wait_board("1", lambda v: v["state"] is not None)
        await web.station.import_pairings(
            "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n", send=False
        )
        yield web


async def test_a_paired_board_never_seen_is_shown_as_such_everywhere(
    browser: Any, venue: WebStation
) -> None:
    async with httpx.AsyncClient(base_url=venue.url, timeout=10) as api:
        r = await api.get("/api/boards/2")
        assert r.status_code == 200, r.text
        assert r.json()["board"] == "2" and r.json()["status"] is None
        assert (await api.get("/api/boards/99")).status_code == 404
        listed = [b["board"] for b in (await api.get("/api/boards")).json()["boards"]]
        assert listed == ["1", "2"]

    async with open_page(browser, width=390, height=844, timeout_ms=8000) as page:
        # the player's (or the recorder's) phone
        await page.goto(venue.url + "/board/2?lang=zh")
        badge = page.locator('.card[data-board="2"] .badge')
        await badge.wait_for()
        await page.wait_for_function(
            "document.querySelector('.card .badge').textContent === '未连接'"
        )
        assert await page.get_attribute("body", "data-missing") is None
        await page.click("#lang")
        assert await badge.text_content() == "Not seen"
        # a board no round pairs is still no board
        await page.goto(venue.url + "/board/99?lang=zh")
        await page.wait_for_selector("body[data-missing]")
        assert await page.text_content(".card .badge") == "无此台次"

        # the arbiter's grid has its card, and the board is reached by its number
        await login(page, venue, lang="zh")
        card = page.locator('#boards .card[data-board="2"]')
        await card.wait_for()
        assert "未连接" in await card.inner_text()
        await page.fill("#goto-board", "2")
        await page.press("#goto-board", "Enter")
        await page.wait_for_selector('#board-detail[data-board="2"]')
        assert await page.locator("#goto-none").is_hidden()

        # and 只看需处理 keeps it: the technician has to go there (a reviewer); its card names
        # the round's players (an outsider chief saw 红方 --:-- / 黑方 --:--)
        assert await card.get_attribute("data-needs") == "1"
        assert "丙" in await card.inner_text() and "丁" in await card.inner_text()

        # a command to the whole venue names it: it did not reach it (全场开钟 said "7 started"
        # of 8, board 12 neither counted nor named: an outsider chief)
        await page.click("#pause-all")
        await page.click("#pause-all")
        said = page.locator("#log li >> text=未收到")
        await said.wait_for()
        assert "1台本轮棋钟从未连接，未收到：第2台" in await said.inner_text()

        # its game goes to the spare clock (换用备用钟), from the start: 没有对局 before
        await page.select_option("#spare-board", "1")
        spare = page.locator("#f-spare button")
        await spare.click()
        await spare.click()
        await page.wait_for_selector("#log li[data-outcome=ok] >> text=2 → 1")
        sent = [c for b, c in FAKES["node-a"].commands if b == "1" and c.cmd == "set_game"]
        assert [(c.args["game"], c.args["red"], c.args["black"]) for c in sent] == [
            ("r1-b2", "丙", "丁")
        ]

        # the hall screen shows it too, its round's filter as well (the technician's round)
        await page.goto(venue.url + "/?lang=zh&round=1")
        hall = page.locator('.card[data-board="2"] .badge')
        await hall.wait_for()
        assert await hall.text_content() == "未连接"


async def test_a_board_no_longer_paired_is_no_longer_shown(venue: WebStation) -> None:
    """Round 1 imported again with board 2's game on board 3; then round 2 on board 1 alone:
    the boards never seen follow the latest round (a reviewer: they stayed until a restart)."""
    station = venue.station

    async def listed() -> list[str]:
        async with httpx.AsyncClient(base_url=venue.url, timeout=10) as api:
            return [b["board"] for b in (await api.get("/api/boards")).json()["boards"]]

    await station.import_pairings(
        "round,board,red,black\n1,1,甲,乙\n1,3,丙,丁\n", send=False, replace=1
    )
    assert await listed() == ["1", "3"]
    await station.import_pairings("round,board,red,black\n2,1,甲,丙\n", send=False)
    assert await listed() == ["1"]
