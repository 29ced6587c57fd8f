"""Where to go, at a glance, and the results where people look (issue 25, Build 4 and 6).

A station with 40 boards (one fake node), in Debian's chromium: the arbiter's grid of 40 fits
a 1366×768 laptop with no scrolling and no empty board panel; a board with an open alert is
marked and the "needs attention" filter leaves only it; on a phone (390×844) the alerts come
first and a board is reached by its number; a finished card shows its result on the arbiter's
grid and the hall screen; the exports are linked and the CSVs open in Excel (a UTF-8 BOM);
``/board/999`` says there is no such board; the late countdown stops once everyone pressed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from support.web import WebStation, login, open_page, served_station, wall_ms

from broker_config import Roster

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

BOARDS = [str(b) for b in range(1, 41)]
NAMES = "王郑许吕赵蒋洪汪孙谢申李陈张刘黄徐党孟武"


@pytest_asyncio.fixture(loop_scope="session")
async def venue(broker_factory: Callable[..., Any], tmp_path: Path) -> AsyncIterator[WebStation]:
    broker = broker_factory(Roster.build(venue="test", nodes={"node-a": BOARDS}, arbiters=["arb"]))
    async with served_station(broker, tmp_path) as web:
        yield web


async def fill(web: WebStation) -> Any:
    """40 running games of round 1; board 7 finished 1-0 by resignation."""
    fake = await web.fake_node("node-a", BOARDS)
    for b in BOARDS:
        n = int(b)
        await web.publish_status(fake, b, "online")
        await web.publish_state(
            fake, b, red=NAMES[n % 20] + "甲", black=NAMES[(n + 7) % 20] + "乙",
            red_ms=600_000 + 7_919 * n, black_ms=900_000 - 3_571 * n,
            moves={"red": n % 9 + 1, "black": n % 9 + 1},
        )  # fmt: skip
    await web.publish_state(
        fake, "7", phase="finished", running=None, result={"winner": "red", "reason": "resigned"}
    )
    await web.wait_board("7", lambda v: v["state"]["phase"] == "finished")
    await web.wait_board("40", lambda v: v["state"] is not None)
    return fake


async def test_forty_boards_fit_a_laptop_and_the_marked_ones_filter(
    browser: Any, venue: WebStation
) -> None:
    fake = await fill(venue)
    async with open_page(browser, width=1366, height=768, timeout_ms=8000) as page:
        await login(page, venue)
        await page.wait_for_selector('#boards .card[data-board="40"]')
        await asyncio.sleep(0.3)
        assert await page.is_hidden("#board-panel")  # no empty "choose a board" panel
        geo = await page.evaluate("""() => {
            const se = document.scrollingElement;
            const out = [...document.querySelectorAll("#boards .card")].filter((c) => {
                const r = c.getBoundingClientRect();
                return r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth;
            }).map((c) => c.dataset.board);
            const grid = document.getElementById("boards");
            return {out, scrollH: se.scrollHeight, vh: innerHeight,
                    gridScroll: grid.parentElement.scrollHeight - grid.parentElement.clientHeight};
        }""")
        assert geo["out"] == [] and geo["scrollH"] <= geo["vh"] and geo["gridScroll"] <= 1, geo

        # The finished card shows its result; choosing a board opens its panel beside the grid.
        result = page.locator('#boards .card[data-board="7"] .result')
        assert await result.text_content() == "1-0 · 认输"
        await page.click('#boards .card[data-board="12"]')
        await page.wait_for_selector("#board-panel:not([hidden])")
        await page.click("#board-close")
        assert await page.is_hidden("#board-panel")

        # A flag on board 23: its card is marked, and the filter leaves only the marked cards.
        await fake.emit("23", type="flag", data={"side": "red"}, game="r1-b23")
        await page.wait_for_selector('#alerts li[data-board="23"]')
        marked = page.locator('#boards .card[data-board="23"][data-attention]')
        await marked.wait_for()
        assert (await marked.locator(".attn").text_content() or "").startswith("⚠")
        await page.check("#attention-only")
        shown = await page.eval_on_selector_all(
            "#boards .card",
            "cs => cs.filter((c) => c.checkVisibility()).map((c) => c.dataset.board)",
        )
        assert shown == ["23"]
        # A game held paused waits for the arbiter though nothing is to be ruled (a node
        # restarted, its alert acknowledged): the filter keeps it (an outsider's filter left
        # no board at all).
        await venue.publish_state(fake, "24", game="r1-b24", phase="paused", running=None)
        await page.wait_for_selector('#boards .card[data-board="24"][data-phase="paused"]')
        shown = await page.eval_on_selector_all(
            "#boards .card",
            "cs => cs.filter((c) => c.checkVisibility()).map((c) => c.dataset.board)",
        )
        assert shown == ["23", "24"]

        # The exports are linked: the round's results (a BOM for Excel), its PGN, standings, TRF.
        links = await page.eval_on_selector_all(
            ".exports a", "as => as.map((a) => a.getAttribute('href'))"
        )
        assert links == [
            "/api/export/rounds/1/results.csv",
            "/api/export/rounds/1/games.pgn",
            "/api/export/standings.csv",
            "/api/export/tournament.trf",
        ]


async def test_a_phone_has_the_alerts_first_and_a_board_by_its_number(
    browser: Any, venue: WebStation
) -> None:
    fake = await fill(venue)
    await fake.emit("5", type="flag", data={"side": "black"}, game="r1-b5")
    async with open_page(browser, width=390, height=844, timeout_ms=8000) as page:
        await login(page, venue)
        await page.wait_for_selector('#alerts li[data-board="5"]')
        await page.wait_for_selector('#boards .card[data-board="40"]')
        tops = await page.evaluate("""() => Object.fromEntries(
            ["alerts-panel", "venue-panel", "boards-panel"].map((c) =>
                [c, document.querySelector("." + c).getBoundingClientRect().top]))""")
        assert tops["alerts-panel"] < tops["venue-panel"] < tops["boards-panel"], tops
        assert tops["alerts-panel"] < 200, tops  # the first thing under the bar
        width = await page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= 390
        await page.fill("#goto-board", "33")
        await page.press("#goto-board", "Enter")
        await page.wait_for_selector('#board-detail[data-board="33"]')
        top, bottom = await page.eval_on_selector(
            "#board-panel",
            "el => [el.getBoundingClientRect().top, el.getBoundingClientRect().bottom]",
        )
        assert top < 844 and bottom > 0, (top, bottom)  # brought into view
        await page.fill("#goto-board", "99")
        await page.press("#goto-board", "Enter")
        assert await page.text_content("#goto-none") == "无此台次：99"


async def test_results_where_people_look(browser: Any, venue: WebStation) -> None:
    await fill(venue)
    station = venue.station
    await station.import_players("name\n甲\n乙\n")
    await station.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=False)
    async with open_page(browser, width=1920, height=1080, timeout_ms=8000) as page:
        await page.goto(venue.url + "/?boards=1-40")
        card = page.locator('.card[data-board="7"] .result')
        await card.wait_for()
        assert await card.text_content() == "1-0 · 认输"
        await page.click("#lang")
        assert await card.text_content() == "1-0 · resigned"

        await page.goto(venue.url + "/board/999?lang=zh")
        await page.wait_for_selector("body[data-missing]")
        assert await page.text_content(".card .badge") == "无此台次"

        await page.goto(venue.url + "/standings")
        await page.wait_for_selector("body[data-loaded]")
        hrefs = await page.eval_on_selector_all(
            ".bar a[download]", "as => as.map((a) => a.getAttribute('href'))"
        )
        # (the standings CSV in the page's language: its header row is the organiser's words)
        assert "/api/export/standings.csv?lang=zh" in hrefs
        assert "/api/export/tournament.trf" in hrefs
        await page.wait_for_selector("#x-results:not([hidden])")
        results = await page.get_attribute("#x-results", "href")
        assert results == "/api/export/rounds/1/results.csv?lang=zh"  # for people: in words
        assert await page.get_attribute("#x-pgn", "href") == "/api/export/rounds/1/games.pgn"
    async with httpx.AsyncClient(base_url=venue.url) as client:
        for url in ("/api/export/rounds/1/results.csv", "/api/export/standings.csv"):
            body = (await client.get(url)).content
            assert body.startswith(b"\xef\xbb\xbf") and "甲".encode() in body, url
        # in words for a wall or a spreadsheet: the header and the reasons (an outsider)
        words = (await client.get("/api/export/rounds/1/results.csv?lang=zh")).content
        assert words.decode("utf-8-sig").startswith("轮次,台次,对局号,红方,黑方,结果")
        pgn = await client.get("/api/export/rounds/1/games.pgn")
        assert pgn.status_code == 200 and '[Red "甲"]' in pgn.text
        # the event by its name (the seed's title), not the venue's id (an outsider organiser)
        title = "2016年眉山市第二届“博达杯”中国象棋公开赛"
        assert f'[Event "{title}"]' in pgn.text, pgn.text[:300]
        trf = (await client.get("/api/export/tournament.trf")).text
        assert f"012 {title}" in trf.splitlines(), trf[:200]


async def test_the_late_countdown_stops_once_everyone_pressed(
    browser: Any, venue: WebStation
) -> None:
    fake = await venue.fake_node("node-a", ["1", "2"])
    started = wall_ms() - 60_000
    for b in ("1", "2"):
        await venue.publish_status(fake, b, "online")
        await venue.publish_state(fake, b, game=f"r1-b{b}", moves={"red": 1, "black": 0})
        await fake.emit(b, type="started", game=f"r1-b{b}", ts=started, data={})
    assert venue.station.ingest is not None
    await venue.station.ingest.flush()
    async with open_page(browser, width=1920, height=1080, timeout_ms=8000) as page:
        await page.goto(venue.url + "/?boards=1-2")
        await page.wait_for_selector("#late:not([hidden])")
        assert (await page.text_content("#late") or "").endswith("未按钟 2: 1台黑 2台黑")
        for b in ("1", "2"):  # black presses on both boards: nobody can be late any more
            await venue.publish_state(fake, b, game=f"r1-b{b}", moves={"red": 1, "black": 1})
        await page.wait_for_selector("#late", state="hidden", timeout=4000)
