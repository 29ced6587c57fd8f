"""The hall screen shows the top boards' game records (issue 29, Build 5): for the first boards of
the screen that have a recorded move (2 by default, ``?positions=N``), a compact position diagram
(Chinese glyphs, red at the bottom, the last move marked) and the last move in Chinese notation,
beside the 40-board grid, updated on each SSE ``record`` event; the cards are not touched.
In Debian's chromium at 1920×1080 against a real station and Mosquitto; the moves are entered
through ``POST /api/records/{board}/moves`` as a recorder's page does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from support.station import ARBITER, ARBITER_PASSWORD
from support.web import WebStation, open_page, screenshot, served_station

from broker_config import Roster

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

BOARDS = 40
PAIRS = "round,board,red,black\n" + "".join(f"1,{b},红{b},黑{b}\n" for b in range(1, BOARDS + 1))
MOVES = [("炮二平五", "h2e2"), ("马８进７", "h9g7"), ("马二进三", "h0g2")]
WXF_LAST = "H2+3"


@pytest_asyncio.fixture(loop_scope="session")
async def hall(broker_factory: Callable[..., Any], tmp_path: Path) -> AsyncIterator[WebStation]:
    """40 boards on one node, each with a game of round 1 on its clock (not running); Wulong:
    boards 1..10 must be recorded."""
    boards = [str(b) for b in range(1, BOARDS + 1)]
    broker = broker_factory(Roster.build(venue="test", nodes={"node-0": boards}, arbiters=["arb"]))
    async with served_station(broker, tmp_path, regulation="wulong-2015") as web:
        await web.station.import_pairings(PAIRS, send=False)
        fake = await web.fake_node("node-0", boards)
        for b in boards:
            await web.publish_status(fake, b, "online")
            await web.publish_state(
                fake, b, red=f"红{b}", black=f"黑{b}", running=None, phase="ready"
            )
        await web.wait_board(boards[-1], lambda v: v["state"] is not None)
        yield web


@pytest_asyncio.fixture(loop_scope="session")
async def chief(hall: WebStation) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=hall.url, timeout=10) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        client.headers["X-CSRF-Token"] = r.json()["csrf"]
        yield client


@pytest_asyncio.fixture(loop_scope="session")
async def screen(browser: Any) -> AsyncIterator[Any]:
    async with open_page(browser, width=1920, height=1080, timeout_ms=8000) as page:
        yield page


def cell(board: str, square: str) -> str:
    r, c = 9 - int(square[1]), "abcdefghi".index(square[0])
    return f"#positions .pos[data-board='{board}'] .cell[data-r='{r}'][data-c='{c}']"


async def move(chief: httpx.AsyncClient, board: str, zh: str, ply: int) -> None:
    r = await chief.post(f"/api/records/{board}/moves", json={"move": zh, "ply": ply})
    assert r.status_code == 200, r.text


async def geometry(page: Any) -> dict[str, Any]:
    return await page.evaluate("""() => {
        const vw = innerWidth, vh = innerHeight, se = document.scrollingElement;
        const inside = (el) => { const r = el.getBoundingClientRect();
            return r.left >= 0 && r.top >= 0 && r.right <= vw && r.bottom <= vh && r.width > 0; };
        return {cards: [...document.querySelectorAll("#grid .card")].filter(inside).length,
                positions: [...document.querySelectorAll("#positions .pos:not([hidden])")]
                    .filter(inside).length,
                font: parseFloat(getComputedStyle(document.querySelector(".card .time")).fontSize),
                scrollH: se.scrollHeight, scrollW: se.scrollWidth, vw, vh};
    }""")


async def test_recorded_moves_appear_on_the_hall_screen_beside_forty_boards(
    screen: Any, hall: WebStation, chief: httpx.AsyncClient
) -> None:
    # Board 2 has a record before the screen opens: the page reads it on load.
    await move(chief, "2", "炮八平五", 0)
    await screen.goto(hall.url + "/?boards=1-40")
    await screen.wait_for_selector("#positions .pos[data-board='2']:not([hidden])")
    assert await screen.inner_text("#positions .pos[data-board='2'] .last-move") == "炮八平五"
    assert await screen.is_hidden("#positions .pos[data-board='1']")  # no move yet: no diagram
    # The cards are not written to by record events (they are not running: nothing ticks).
    await screen.evaluate("""() => {
        window.gridWrites = 0; window.pos2Writes = 0;
        new MutationObserver((l) => { window.gridWrites += l.length; }).observe(
            document.getElementById("grid"),
            {subtree: true, childList: true, characterData: true, attributes: true});
        new MutationObserver((l) => { window.pos2Writes += l.length; }).observe(
            document.querySelector("#positions .pos[data-board='2']"),
            {subtree: true, childList: true, characterData: true, attributes: true});
    }""")
    for ply, (zh, iccs) in enumerate(MOVES):
        started = time.monotonic()
        await move(chief, "1", zh, ply)
        await screen.wait_for_function(
            "document.querySelector(\"#positions .pos[data-board='1']\")?.dataset.ply === "
            f"'{ply + 1}'",
            timeout=1000,
        )
        took = time.monotonic() - started
        assert took < 1.0, took
        assert await screen.inner_text(cell("1", iccs[2:])) in ("炮", "马")
        assert (await screen.inner_text(cell("1", iccs[:2]))).strip() == ""
        assert "last" in (await screen.get_attribute(cell("1", iccs[2:]), "class") or "")
        assert "from" in (await screen.get_attribute(cell("1", iccs[:2]), "class") or "")
        assert await screen.inner_text("#positions .pos[data-board='1'] .last-move") == zh
    # Red at the bottom: 帅 on e0 (the bottom row), 将 on e9 (the top).
    assert await screen.inner_text(cell("1", "e0")) == "帅"
    assert "red" in (await screen.get_attribute(cell("1", "e0"), "class") or "")
    assert await screen.inner_text(cell("1", "e9")) == "将"
    assert await screen.evaluate("window.gridWrites") == 0
    assert await screen.evaluate("window.pos2Writes") == 0  # board 2 did not change
    # Board 3 is not among the top 2: no diagram for it.
    await move(chief, "3", "炮二平五", 0)
    await asyncio.sleep(0.5)
    assert await screen.query_selector("#positions .pos[data-board='3']") is None
    # The 40 cards and the two diagrams fit the screen without scrolling.
    geo = await geometry(screen)
    assert geo["cards"] == BOARDS and geo["positions"] == 2, geo
    assert geo["scrollH"] <= geo["vh"] and geo["scrollW"] <= geo["vw"], geo
    assert geo["font"] >= 40, geo  # docs/web.md states what it reaches
    print(f"40 boards + 2 positions at 1920x1080: time font {geo['font']:.1f} px")
    await screenshot(screen, "hall-40-positions")
    # English: the WXF letters and the move in WXF; the heading in both languages.
    head = "#positions .pos[data-board='1'] h3"
    assert "第1台" in await screen.inner_text(head)
    await screen.click("#lang")
    assert "Board 1" in await screen.inner_text(head)
    assert await screen.inner_text(cell("1", "e0")) == "K"
    assert await screen.inner_text("#positions .pos[data-board='1'] .last-move") == WXF_LAST
    await screen.click("#lang")


async def test_positions_asks_for_more_boards_and_a_bad_value_is_said(
    screen: Any, hall: WebStation, chief: httpx.AsyncClient
) -> None:
    for board in ("4", "5"):
        await move(chief, board, "炮二平五", 0)
    # ?boards=4-40: the screen's first boards are 4, 5 (6 has no record); ?positions=3 asks for 3.
    await screen.goto(hall.url + "/?boards=4-40&positions=3")
    await screen.wait_for_selector("#positions .pos[data-board='5']:not([hidden])")
    shown = await screen.eval_on_selector_all(
        "#positions .pos:not([hidden])", "els => els.map((e) => e.dataset.board)"
    )
    assert shown == ["4", "5"]
    await move(chief, "6", "炮二平五", 0)
    await screen.wait_for_selector("#positions .pos[data-board='6']:not([hidden])", timeout=1000)
    assert await screen.inner_text(cell("6", "e2")) == "炮"
    # ?positions=0: none; a bad value is said on the screen (and the default used).
    await screen.goto(hall.url + "/?boards=1-40&positions=0")
    await screen.wait_for_selector(".card[data-board='40']")
    await asyncio.sleep(0.5)
    assert await screen.is_hidden("#positions")
    await screen.goto(hall.url + "/?boards=4-40&positions=x")
    await screen.wait_for_selector("#problems:not([hidden])")
    assert "positions=x" in await screen.inner_text("#problems")
    await screen.wait_for_selector("#positions .pos[data-board='5']:not([hidden])")
    assert await screen.query_selector("#positions .pos[data-board='6']") is None  # 2 again
