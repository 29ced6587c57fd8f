"""The station's board page shows the game record (issue 29): the position after each recorded
move (pieces in Chinese glyphs, WXF letters in English) and the moves in Chinese notation (WXF in
English), live over the SSE stream, in
chromium against a real station and Mosquitto."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD
from support.web import WebStation

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
PAIRS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n"
MOVES = [("炮二平五", "h2e2"), ("马８进７", "h9g7"), ("马二进三", "h0g2")]


def cell(square: str) -> str:
    return f"#xq .cell[data-r='{9 - int(square[1])}'][data-c='{'abcdefghi'.index(square[0])}']"


async def test_the_board_page_draws_each_recorded_move(page: Any, web_station: WebStation) -> None:
    station = web_station.station
    await station.import_pairings(PAIRS, send=False)
    async with httpx.AsyncClient(base_url=web_station.url, timeout=10) as chief:
        r = await chief.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        chief.headers["X-CSRF-Token"] = r.json()["csrf"]
        await page.goto(web_station.url + "/board/1")
        await page.wait_for_function("document.querySelectorAll('#xq .cell').length === 90")
        for ply, (zh, iccs) in enumerate(MOVES):
            r = await chief.post("/api/records/1/moves", json={"move": zh, "ply": ply})
            assert r.status_code == 200, r.text
            await page.wait_for_function(
                f"document.getElementById('record-box').dataset.ply === '{ply + 1}'"
            )
            assert await page.inner_text(cell(iccs[2:])) in ("炮", "马")
            assert (await page.inner_text(cell(iccs[:2]))).strip() == ""
            assert await page.inner_text("#record-moves li:last-child") == zh
        assert await page.inner_text(cell("e9")) == "将"
        assert await page.get_attribute(cell("e0"), "class") == "cell red"
        assert await page.inner_text("#record-box h2") == "棋谱"
        await page.click("#lang")  # English: the WXF letters and the moves in WXF
        assert await page.inner_text("#record-box h2") == "Game record"
        assert await page.inner_text(cell("e9")) == "K"
        assert await page.inner_text(cell("g2")) == "H"
        assert await page.inner_text("#record-moves li:last-child") == "H2+3"
