"""The time adjustment says what is wrong, in words (an outside tester: −62 s with 59.6 s left
was refused as "the command's arguments are wrong"; an empty field or 0 did nothing at all, and
99999999 said "the command is wrong").

Now, on a real node's running game: taking more than a side has is refused with what it has
left (the node's reply code ``no_time_left``, its ``left_s``), in Chinese and in English; an
empty field, 0 or more than ±36000 s is said on the page, and nothing is sent.
"""

from __future__ import annotations

import asyncio
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


async def test_a_large_adjustment_takes_a_second_tap_that_says_it(
    page: Any, web_station: WebStation
) -> None:
    """−32 minutes on a running clock went through on one tap (an outsider deputy): five
    minutes or more either way arms the button, which says what the next tap does; a double
    click is not that tap; the next tap sends it once."""
    await web_station.node(["1"], mode="idle")
    station = web_station.station
    game = {"game": "r1-b1", "tc": "35m+5s", "red": "甲", "black": "乙"}
    assert (await station.send_command("1", "set_game", game)).ok
    assert (await station.send_command("1", "start")).ok
    await login(page, web_station)
    await page.click('#boards .card[data-board="1"]')
    await page.wait_for_selector("#board-panel:not([hidden])")
    await page.select_option("#f-adjust select[name=side]", "black")
    await page.fill("#f-adjust input[name=seconds]", "-1920")
    await page.dblclick("#f-adjust button")  # one gesture: arms, sends nothing
    button = page.locator("#f-adjust button")
    await page.wait_for_selector("#f-adjust button[data-armed]")
    assert "再按一次确认" in (await button.text_content() or "")
    assert "黑方" in (await button.text_content() or "")
    await asyncio.sleep(0.6)

    async def adjusts() -> int:
        return len([c for c in await station.require_store().commands(50) if c["cmd"] == "adjust"])

    assert await adjusts() == 0
    await button.click()  # the second tap
    await page.wait_for_function("!document.querySelector('#f-adjust button[data-armed]')")
    async with asyncio.timeout(5):
        while await adjusts() != 1:
            await asyncio.sleep(0.05)
    assert (await button.text_content() or "") == "调整时间"
    await page.fill("#f-adjust input[name=seconds]", "30")  # a small one: one tap
    await button.click()
    async with asyncio.timeout(5):
        while await adjusts() != 2:
            await asyncio.sleep(0.05)
