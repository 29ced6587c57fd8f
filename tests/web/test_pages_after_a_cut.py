"""A page cut off from the station shows, once it is back, what happened meanwhile.

The pages live on the hall's network for hours: a phone walks out of the wifi, the hall
screen's switch is bumped, the arbiter's laptop sleeps a moment. Each page's stream
(EventSource) reconnects by itself and the station greets it with ``hello`` (every board's
state and status); what ``hello`` does not carry, the page must read again, or it shows a
stale record, or misses an alert, until something else happens.

Each test puts a real TCP pipe between chromium and the station (``support.chaos.TcpProxy``)
and cuts it: every connection dropped, new ones refused for 1 s, while something happens.
After the page says it is connected again, what happened must be on it within 3 s:
- the board page: the moves the recorder entered meanwhile;
- the hall screen: the moves on its top boards' diagrams;
- the arbiter's page: a flag alert raised meanwhile, its board marked, and one beep.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from support.chaos import TcpProxy
from support.station import ARBITER, ARBITER_PASSWORD
from support.web import WebStation

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

PAIRS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n"
MOVES = ["炮二平五", "马８进７", "马二进三"]
CUT_S = 1.0
BACK_S = 3.0  # after the page says it is connected again


@pytest_asyncio.fixture(loop_scope="session")
async def pipe(web_station: WebStation) -> AsyncIterator[TcpProxy]:
    """A TCP pipe from chromium to the station that the test can cut."""
    host, port = web_station.url.removeprefix("http://").rsplit(":", 1)
    proxy = await TcpProxy(lambda: (host, int(port))).start()
    try:
        yield proxy
    finally:
        await proxy.close()


@pytest_asyncio.fixture(loop_scope="session")
async def recorder(web_station: WebStation) -> AsyncIterator[httpx.AsyncClient]:
    """The chief arbiter's client, straight to the station (not through the pipe)."""
    await web_station.station.import_pairings(PAIRS, send=False)
    async with httpx.AsyncClient(base_url=web_station.url, timeout=10) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        client.headers["X-CSRF-Token"] = r.json()["csrf"]
        yield client


async def record(client: httpx.AsyncClient, board: str, ply: int) -> None:
    r = await client.post(f"/api/records/{board}/moves", json={"move": MOVES[ply], "ply": ply})
    assert r.status_code == 200, r.text


async def cut_and_back(page: Any, pipe: TcpProxy, meanwhile: Any) -> None:
    """Cut the pipe; once the page says it is cut off, ``meanwhile()``; then wait until the
    pipe is whole and the page says it is connected again."""
    pipe.cut(CUT_S)
    await page.wait_for_selector("#conn", state="visible")  # the page knows it is cut off
    await meanwhile()
    await pipe.wait_healed()
    await page.wait_for_selector("#conn", state="hidden", timeout=15_000)


async def test_the_board_page_shows_the_moves_recorded_while_it_was_cut_off(
    page: Any, pipe: TcpProxy, recorder: httpx.AsyncClient
) -> None:
    await page.goto(f"http://127.0.0.1:{pipe.port}/board/1")
    await record(recorder, "1", 0)
    await page.wait_for_selector("#record-box[data-ply='1']")

    async def two_moves() -> None:
        await record(recorder, "1", 1)
        await record(recorder, "1", 2)

    await cut_and_back(page, pipe, two_moves)
    await page.wait_for_selector("#record-box[data-ply='3']", timeout=BACK_S * 1000)
    assert await page.inner_text("#record-moves li:last-child .mv") == MOVES[2]


async def test_the_hall_screen_shows_the_moves_recorded_while_it_was_cut_off(
    page: Any, pipe: TcpProxy, web_station: WebStation, recorder: httpx.AsyncClient
) -> None:
    fake = await web_station.fake_node("node-a", ["1", "2"])
    for board in ("1", "2"):
        await web_station.publish_status(fake, board, "online")
        await web_station.publish_state(fake, board, running=None, phase="ready")
    await web_station.wait_board("2", lambda v: v["state"] is not None)
    await record(recorder, "1", 0)
    await page.goto(f"http://127.0.0.1:{pipe.port}/?boards=1-2")
    await page.wait_for_selector("#positions .pos[data-board='1'][data-ply='1']")

    async def on_both_top_boards() -> None:
        await record(recorder, "1", 1)
        await record(recorder, "2", 0)

    await cut_and_back(page, pipe, on_both_top_boards)
    await page.wait_for_selector(
        "#positions .pos[data-board='1'][data-ply='2']", timeout=BACK_S * 1000
    )
    await page.wait_for_selector(
        "#positions .pos[data-board='2'][data-ply='1']:not([hidden])", timeout=BACK_S * 1000
    )
    assert await page.inner_text("#positions .pos[data-board='1'] .last-move") == MOVES[1]


async def test_the_arbiter_page_shows_an_alert_raised_while_it_was_cut_off(
    page: Any, pipe: TcpProxy, web_station: WebStation, recorder: httpx.AsyncClient
) -> None:
    fake = await web_station.fake_node("node-a", ["1", "2"])
    for board in ("1", "2"):
        await web_station.publish_status(fake, board, "online")
        await web_station.publish_state(fake, board)
    await page.goto(f"http://127.0.0.1:{pipe.port}/arbiter")
    await page.fill("#username", ARBITER)
    await page.fill("#password", ARBITER_PASSWORD)
    await page.click("#login-submit")
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')

    async def a_flag() -> None:
        await fake.emit("2", type="flag", data={"side": "red"}, game="r1-b2")
        for _ in range(100):  # the station has raised it (while the page cannot hear)
            alerts = (await recorder.get("/api/alerts?status=active")).json()["alerts"]
            if any(a["board"] == "2" and a["kind"] == "flag" for a in alerts):
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"no flag alert on board 2: {alerts}")

    beeps = await page.evaluate("QZ.beeps")
    await cut_and_back(page, pipe, a_flag)
    await page.wait_for_selector(
        '#alerts li[data-kind="flag"][data-board="2"]', timeout=BACK_S * 1000
    )
    await page.wait_for_selector('#boards .card[data-board="2"][data-attention]')
    assert await page.evaluate("QZ.beeps") == beeps + 1  # heard in a noisy hall, once
