"""A round's start time already past is refused, in words (an outside tester, Meishan).

The chief typed a start time 14 minutes in the past and started the round: it was accepted
with no warning, the clocks were not charged for the 14 minutes, and 58 s later the boards
proposed both players of a game lost for lateness (15 minutes from the time typed), while the
hall screen counted the lateness deadline from the clocks' real start (13:45 left): players
told one deadline, the station applying another (the regulation counts from the chief
arbiter's announced start). Now the station refuses a start more than a minute in the past
(``start_in_past``), the page says so in the user's language, and no board is sent anything.
A start a few seconds in the past (the time typed a moment ago) still starts.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.web import WebStation, login

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

LOCAL = """(minutes) => {
    const d = new Date(Date.now() + minutes * 60000);
    const p = (n) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:` +
        `${p(d.getMinutes())}:${p(d.getSeconds())}`;
}"""


async def start_at(page: Any, minutes: float) -> None:
    await page.fill("#start-at", await page.evaluate(LOCAL, minutes))
    await page.click("#start-round")
    await page.click("#start-round")  # two taps


async def test_a_start_time_in_the_past_is_refused_in_words(
    page: Any, web_station: WebStation
) -> None:
    fake = await web_station.fake_node("node-a", ["1", "2"])
    for board in ("1", "2"):
        await web_station.publish_status(fake, board, "online")
        await web_station.publish_state(fake, board, running=None, phase="ready")
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')
    await start_at(page, -14)
    refused = page.locator("#log li[data-outcome=refused], #log li[data-outcome=error]")
    await refused.first.wait_for(timeout=5000)
    text = await refused.first.text_content() or ""
    assert "开赛时间已过" in text and "14" in text, text
    assert not [c for _, c in fake.commands if c.cmd == "start"]
    await page.click("#lang")
    text = await refused.first.text_content() or ""
    assert "start time is 14 min in the past" in text, text
    # Typed a moment ago: it starts.
    await start_at(page, -0.2)
    await page.locator("#log li[data-outcome=ok]").wait_for(timeout=5000)
    starts = [c for _, c in fake.commands if c.cmd == "start"]
    assert len(starts) >= 1
