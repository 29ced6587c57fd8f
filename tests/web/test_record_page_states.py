"""The record page says what a recorder needs to know without asking (an outsider recorder on
a phone): a game with a confirmed result is over — it said 轮到红方走 after 1-0 — and a recorder
logged in on a board that is not its own is told at once, not after its first move.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.station import Feeder, station_config

from venue_station.auth import hash_password
from venue_station.web.web_server import StationWithWeb

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Any]:
    accounts = [
        {"username": "chief", "password_hash": hash_password("pw-chief"), "role": "chief"},
        {"username": "rec1", "password_hash": hash_password("pw-rec1"), "role": "recorder",
         "boards": ["1"]},
    ]  # fmt: skip
    started = StationWithWeb(station_config(tmp_path, account=accounts), connect=False)
    await started.start()
    try:
        await started.import_pairings("round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n", send=False)
        yield started
    finally:
        await started.stop()


async def log_in(page: Any, user: str, password: str) -> None:
    await page.locator("#login-box").wait_for()
    await page.fill("#username", user)
    await page.fill("#password", password)
    await page.click("#login-submit")


async def test_a_decided_game_reads_as_over(page: Any, station: Any) -> None:
    feed = Feeder(station)
    feed.result("1", "r1-b1", "red")
    await feed.flush()
    await page.goto(f"{station.http_url}/record/1")
    to_move = page.locator("#to-move")
    await to_move.filter(has_text="对局已结束：1-0").wait_for()
    await page.click("#lang")
    assert "The game is over: 1-0" in await to_move.inner_text()


async def test_a_recorder_on_another_boards_page_is_told_at_once(page: Any, station: Any) -> None:
    await page.goto(f"{station.http_url}/record/2")
    await log_in(page, "rec1", "pw-rec1")
    msg = page.locator("#msg")
    await msg.filter(has_text="只能为第1台录谱").wait_for()
    assert await page.locator("#back").is_hidden()  # its overview is closed to it
    assert await page.locator("#logout").is_visible()


async def test_a_phone_back_on_the_network_loses_the_cannot_reach_line(
    page: Any, station: Any
) -> None:
    """Off the network a move is kept on the phone, said in words; back on it, that line goes
    by itself (it stayed under the buttons until the next action: an outsider recorder) and
    the move reaches the station (tests/web/test_record_outbox.py has the whole story)."""
    await page.goto(f"{station.http_url}/record/2")
    await log_in(page, "chief", "pw-chief")
    await page.locator("#login-box").wait_for(state="hidden")
    await page.context.set_offline(True)
    await page.fill("#move-text", "炮二平五")
    await page.click("#move-send")
    msg = page.locator("#msg")
    await msg.filter(has_text="无法连接").wait_for()
    await page.context.set_offline(False)
    await page.wait_for_function("!document.getElementById('msg').textContent.includes('无法连接')",
                                 timeout=10_000)  # fmt: skip
    await page.wait_for_function("document.querySelectorAll('#moves li:not(.queued)').length === 1")
    assert await page.text_content("#msg") == "站点已恢复：本机保存的 1 着已送达"
