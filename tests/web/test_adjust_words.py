"""The time adjustment says what is wrong, in words (an outside tester: −62 s with 59.6 s left
was refused as "the command's arguments are wrong"; an empty field or 0 did nothing at all, and
99999999 said "the command is wrong").

Now, on a real node's running game: taking more than a side has is refused with what it has
left (the node's reply code ``no_time_left``, its ``left_s``), in Chinese and in English; an
empty field, 0 or more than ±36000 s is said on the page, and nothing is sent.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.web import WebStation, login

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


async def adjust(page: Any, seconds: str) -> str:
    before = await page.locator("#log li:not([data-outcome=sent])").count()
    await page.fill("#f-adjust input[name=seconds]", seconds)
    await page.click("#f-adjust button")
    await page.wait_for_function(
        f"document.querySelectorAll('#log li:not([data-outcome=sent])').length > {before}"
    )
    return await page.locator("#log li").first.text_content() or ""


async def test_an_adjustment_the_clock_cannot_take_is_said_in_words(
    page: Any, web_station: WebStation
) -> None:
    await web_station.node(["1"], mode="idle")
    station = web_station.station
    game = {
        "game": "r1-b1",
        "tc": "30m+5s",
        "red": "甲",
        "black": "乙",
        "red_ms": 59_600,
        "black_ms": 600_000,
    }
    assert (await station.send_command("1", "set_game", game)).ok
    assert (await station.send_command("1", "start")).ok
    assert (await station.send_command("1", "pause")).ok
    await login(page, web_station)
    await page.click('#boards .card[data-board="1"]')
    await page.wait_for_selector("#board-panel:not([hidden])")
    await page.select_option("#f-adjust select[name=side]", "red")
    text = await adjust(page, "-62")
    assert "减时后红方将没有时间（现余 59 秒）" in text, text
    for bad in ("", "0", "99999999"):
        text = await adjust(page, bad)
        assert "请输入要调整的秒数" in text, (bad, text)
    sent = [c for c in await station.require_store().commands(50) if c["cmd"] == "adjust"]
    assert len(sent) == 1  # the refused −62 s only: the bad values were never sent
    await page.click("#lang")
    text = await page.locator("#log li").nth(3).text_content() or ""
    assert "that would leave Red no time (59 s left)" in text, text
