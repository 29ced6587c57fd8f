"""A round started at an announced time already past: the hall screen and the boards agree.

The chief gives 开赛时间 as the round's announced start (docs/station.md step 4: "the 15 minutes
of 迟到 count from it") and starts the clocks 14 minutes after it. An outside tester did so and
the two disagreed: the boards proposed both players of a game lost for lateness 58 s later (15
minutes from the announced time), while the hall screen showed 已进行 1:14 and 迟到判负倒计时
13:45, counting from the clocks' start — players told one deadline, the station applying
another. Now the hall screen counts from the announced start too: 已进行 14:xx, the deadline
under a minute away, and ``GET /api/round`` says so. The start field is emptied once the start
is sent (the tester found it still holding the old time, ready for the next round).

In Debian's chromium against a real station, Mosquitto and a fake node whose boards start
when told (the station's view of a start: the boards' ``started`` events).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from support.web import WebStation, login, open_page, wall_ms

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

LOCAL = """(minutes) => {
    const d = new Date(Date.now() + minutes * 60000);
    const p = (n) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:` +
        `${p(d.getMinutes())}:${p(d.getSeconds())}`;
}"""


async def test_a_start_announced_14_minutes_ago_counts_from_then_everywhere(
    browser: Any, page: Any, web_station: WebStation
) -> None:
    await web_station.station.import_pairings(
        "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n", send=False
    )
    fake = await web_station.fake_node("node-a", ["1", "2"])
    for board in ("1", "2"):
        await web_station.publish_status(fake, board, "online")
        await web_station.publish_state(
            fake, board, game=f"r1-b{board}", running=None, phase="ready"
        )
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')
    announced = await page.evaluate(LOCAL, -14)
    await page.fill("#start-at", announced)
    await page.click("#start-round")
    await page.click("#start-round")  # two taps
    await page.locator("#log li[data-outcome=ok]").wait_for(timeout=5000)
    assert await page.input_value("#start-at") == ""  # not the next round's start too
    starts = [c for _, c in fake.commands if c.cmd == "start"]
    at = starts[-1].args["at"]
    assert wall_ms() - at > 13 * 60_000
    for board in ("1", "2"):  # the boards start now (the time is past): their started events
        await fake.emit(board, type="started", game=f"r1-b{board}", data={"side_on_move": "red"})

    async with open_page(browser, width=1920, height=1080, timeout_ms=8000) as screen:
        await screen.goto(web_station.url + "/?boards=1-2")
        await screen.wait_for_function(
            "(document.getElementById('elapsed').textContent || '').startsWith('已进行 14:')",
            timeout=8000,
        )
        late = await screen.text_content("#late") or ""
        m = re.match(r"迟到判负倒计时 0:(\d\d)", late)
        assert m, late  # under a minute left: 15 minutes from the announced start
    body = await page.evaluate("fetch('/api/round').then((r) => r.json())")
    assert body["started_ms"] == at, body
    assert body["late_deadline_ms"] == at + 15 * 60_000, body
