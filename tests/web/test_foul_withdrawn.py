"""A foul recorded by mistake is taken back on the arbiter's page (an outsider's round: there
was no way back, and in Meishan the second foul of a game loses it — 一盘棋犯规达到2次的).

In chromium, against a real station, broker and node: the arbiter records red's foul, then a
second one on red that was black's; red has lost by fouls. 撤销 (two taps) on the wrong one
takes the foul back and the loss with it, the game goes on from where its clock stopped, and
the standings after the round count one foul each and the result the board gave.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.web import WebStation, login, paired_game

from clock_service import Side

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


async def foul(page: Any, side: str, reason: str) -> None:
    await page.select_option("#f-foul select[name=side]", side)
    await page.select_option("#f-foul select[name=reason]", reason)
    await page.click("#f-foul button")


async def get(page: Any, url: str) -> Any:
    return await page.evaluate("(u) => fetch(u).then(r => r.json())", url)


async def test_a_foul_recorded_by_mistake_is_withdrawn_with_the_loss_it_made(
    page: Any, web_station: WebStation
) -> None:
    station = web_station.station
    await login(page, web_station)
    node = await paired_game(page, web_station)
    face = node.boards["1"].face
    await web_station.wait_board("1", lambda v: v["state"]["running"] == "red")
    face.press(Side.RED)
    await web_station.wait_board("1", lambda v: v["state"]["running"] == "black")

    await page.click('#boards .card[data-board="1"]')
    await page.wait_for_selector("#board-fouls:not([hidden]) >> text=无")
    await foul(page, "red", "disturbing")
    await page.wait_for_selector("#board-foul-rows li[data-seq] >> nth=0")
    # the second foul was black's phone, recorded on red by mistake: red loses at once
    await foul(page, "red", "phone")
    await web_station.wait_board(
        "1", lambda v: (v["state"]["result"] or {}).get("reason") == "fouls"
    )
    rows = page.locator("#board-foul-rows li[data-seq]")
    await page.wait_for_function(
        "document.querySelectorAll('#board-foul-rows li[data-seq]').length === 2"
    )
    wrong = rows.filter(has_text="手机")
    assert await wrong.count() == 1

    # One tap only arms it; the second takes the foul back.
    button = wrong.locator('button[data-action="withdraw"]')
    await button.click()
    assert await button.get_attribute("data-armed") == "1"
    assert (station.board_views()[0]["state"]["result"] or {}).get("reason") == "fouls"
    await asyncio.sleep(0.4)  # a second tap, not a double click
    await button.click()
    await page.wait_for_selector("#log li[data-outcome=ok] >> text=撤销犯规")
    await web_station.wait_board(
        "1",
        lambda v: (
            v["state"]["result"] is None
            and v["state"]["phase"] == "paused"
            and v["state"]["fouls"] == {"red": 1, "black": 0}
        ),
    )
    await page.wait_for_function(
        "document.querySelectorAll('#board-foul-rows li[data-seq]').length === 1"
    )

    # The station took the withdrawal as the arbiter's decision (not a board's say-so): the
    # game has no result, and nothing is marked unverified.
    for _ in range(100):
        body = await get(page, "/api/games/r1-b1")
        if body.get("result") is None:
            break
        await asyncio.sleep(0.05)
    assert body.get("result") is None, body
    events = (await get(page, "/api/events?board=1&limit=1000"))["events"]
    assert not [e for e in events if e["data"].get("unverified")]
    alerts = (await get(page, "/api/alerts"))["alerts"]
    assert not [a for a in alerts if a["kind"] == "unverified_decision"]

    # The foul recorded where it belonged, the game goes on and ends on the board.
    await foul(page, "black", "phone")
    await web_station.wait_board("1", lambda v: v["state"]["fouls"] == {"red": 1, "black": 1})
    await page.click('#board-detail [data-cmd="resume"]')
    await web_station.wait_board("1", lambda v: v["state"]["running"] == "black")
    await page.select_option("#f-result select[name=winner]", "red")
    await page.click("#f-result button")
    await web_station.wait_board("1", lambda v: (v["state"]["result"] or {}).get("winner") == "red")

    # What the organiser reads: the round's result and the standings after it.
    for _ in range(100):
        results = (await get(page, "/api/results?round=1"))["results"]
        if results and results[0]["result"] == "1-0":
            break
        await asyncio.sleep(0.05)
    assert [(r["result"], r["reason"]) for r in results] == [("1-0", "arbiter")]
    # Meishan: a win 2, a foul 1 累进分 off ("记犯规1次，并扣累进分1分"); 累进分 after round 1 is
    # the score after round 1 — computed here from the seed, not by the station's code.
    table = await get(page, "/api/standings?round=1")
    rows_ = [(r["player"], r["points"], r["progressive"], r["fouls"]) for r in table["standings"]]
    assert rows_ == [("甲", 2, 2 - 1, 1), ("乙", 0, 0 - 1, 1)]
