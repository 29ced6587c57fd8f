"""The alerts stay in view on the arbiter's laptop (an outside tester, Meishan, 1366×768).

At 1366×768 — the laptop docs/web.md names — the alerts list was squeezed under the knockout and
录谱 panels to 21–32 px: only its heading, or nothing, showed, and once only an alert's buttons
were in view with its title scrolled away (a ruling made without seeing which alert). At
1920×1080 the same happened once the action log had grown. Now, with the venue actions, their
log filled, the knockout panel (Meishan) and the 录谱 panel all shown, and a board's panel open:
the first three alerts are whole on the screen, each with its title and its buttons.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.web import WebStation, login, open_page, screenshot, served_station

from broker_config import Roster

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

BOARDS = [str(b) for b in range(1, 13)]
PAIRS = "round,board,red,black\n" + "".join(f"1,{b},红{b},黑{b}\n" for b in BOARDS)


@pytest_asyncio.fixture(loop_scope="session")
async def venue(broker_factory: Callable[..., Any], tmp_path: Path) -> AsyncIterator[WebStation]:
    broker = broker_factory(Roster.build(venue="test", nodes={"node-a": BOARDS}, arbiters=["arb"]))
    async with served_station(broker, tmp_path, regulation="meishan-2016") as web:
        await web.station.import_pairings(PAIRS, send=False)
        fake = await web.fake_node("node-a", BOARDS)
        for b in BOARDS:
            await web.publish_status(fake, b, "online")
            await web.publish_state(fake, b, game=f"r1-b{b}", red=f"红{b}", black=f"黑{b}")
        for b in ("3", "7", "11"):
            await fake.emit(b, type="flag", data={"side": "red"}, game=f"r1-b{b}")
        await web.wait_board("12", lambda v: v["state"] is not None)
        yield web


WHOLE = """(n) => {
    const vh = innerHeight, vw = innerWidth;
    const panel = document.querySelector('.alerts-panel').getBoundingClientRect();
    const rows = [...document.querySelectorAll('#alerts li')].slice(0, n);
    return rows.length === n && rows.every((li) => {
        const r = li.getBoundingClientRect();
        const buttons = [...li.querySelectorAll('button')];
        return r.top >= Math.max(0, panel.top) && r.bottom <= Math.min(vh, panel.bottom)
            && r.right <= vw && buttons.length > 0;
    });
}"""


@pytest.mark.parametrize(("width", "height", "lang"), [(1366, 768, "zh"), (1920, 1080, "en")])
async def test_three_alerts_are_whole_on_the_screen(
    browser: Any, venue: WebStation, width: int, height: int, lang: str
) -> None:
    async with open_page(browser, width=width, height=height, timeout_ms=8000) as page:
        await login(page, venue, lang=lang)
        await page.wait_for_selector("#alerts li:nth-child(3)")
        await page.wait_for_selector("#ko:not([hidden])")
        for _ in range(12):  # the venue's action log grows (each pause answered or refused)
            await page.click("#pause-all")
            await page.click("#pause-all")
        await page.wait_for_function("document.querySelectorAll('#log li').length >= 12")
        await page.click('#boards .card[data-board="5"]')
        await page.wait_for_selector("#board-panel:not([hidden])")
        await screenshot(page, f"arbiter-alerts-{width}x{height}")
        assert await page.evaluate(WHOLE, 3), await page.evaluate(
            "JSON.stringify(document.querySelector('.alerts-panel').getBoundingClientRect())"
        )
