"""Issue 13: a board online whose clock face fails shows it on the hall display (zh-CN and
English), with the reason; it clears when the clock is back."""

from __future__ import annotations

from typing import Any

import pytest
from support.web import WebStation

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

BADGE = '.card[data-board="1"] .badge'


async def test_a_clock_fault_is_shown_on_the_card(page: Any, web_station: WebStation) -> None:
    fake = await web_station.fake_node("node-a", ["1"])
    await web_station.publish_status(fake, "1", "online")
    reason = "ProtocolVersionError: device speaks protocol version 2"
    await web_station.publish_state(fake, "1", clock_fault=reason)
    await web_station.wait_board("1", lambda v: (v["state"] or {}).get("clock_fault"))
    await page.goto(web_station.url + "/")
    await page.wait_for_selector(BADGE + ".off")
    assert await page.text_content(BADGE) == "计时钟故障"
    assert await page.get_attribute(BADGE, "title") == reason
    await page.click("#lang")
    assert await page.text_content(BADGE) == "Clock fault"
    await web_station.publish_state(fake, "1", clock_fault=None)
    await page.wait_for_selector(BADGE + ":not(.off)", state="attached")
    assert await page.text_content(BADGE) == ""
