"""An alert that waits for a ruling is hard to miss in a noisy hall (an outsider deputy: a flag
looked like the node restarts around it and beeped once): it stands out from the alerts that
only inform, the tab's title counts the open ones, and it beeps again every 30 s until someone
acknowledges or rules it. Chromium's clock is run forward (Playwright's clock), not waited."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.station import Feeder
from support.web import station_without_broker

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Any]:
    async with station_without_broker(tmp_path) as started:
        await started.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=False)
        yield started


async def test_a_flag_stands_out_counts_in_the_title_and_beeps_until_acknowledged(
    page: Any, station: Any
) -> None:
    await page.clock.install()
    await page.goto(f"{station.http_url}/arbiter?lang=zh")
    await page.fill("#username", "chief")
    await page.fill("#password", "pw-chief")
    await page.click("#login-submit")
    await page.wait_for_selector("#station:not([hidden])")
    feed = Feeder(station)
    feed("1", "r1-b1", "flag", {"side": "red"})
    feed("1", "r1-b1", "warning", {"reason": "power_restored"})
    await feed.flush()
    flag = page.locator('#alerts li[data-kind="flag"]')
    await flag.wait_for()
    assert "decides" in str(await flag.get_attribute("class"))
    informing = page.locator('#alerts li[data-kind="warning"]')
    await informing.wait_for()
    assert "informs" in str(await informing.get_attribute("class"))
    assert (await page.title()).startswith("(2) ")
    beeps = await page.evaluate("QZ.beeps")
    await page.clock.run_for(31_000)
    assert await page.evaluate("QZ.beeps") == beeps + 1  # reminded: the flag waits
    await flag.locator('button[data-action="ack"]').click()  # 知悉: heard, ruling later
    await page.wait_for_selector('#alerts li[data-kind="flag"][data-status="acked"]')
    # the answer shows where the thumb is (the log sits below the list, off a phone's screen)
    toast = page.locator("#toast")
    await toast.wait_for()
    assert "第1台" in await toast.inner_text() and await toast.get_attribute("data-outcome") == "ok"
    beeps = await page.evaluate("QZ.beeps")
    await page.clock.run_for(31_000)
    assert await page.evaluate("QZ.beeps") == beeps
