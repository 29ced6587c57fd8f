"""A flag the arbiter dismisses, and the game goes on (an outsider's round: the game was stuck).

docs/station.md step 5: 驳回 a flag "when it stands wrong". When the game should go on (the
press came first, the clock was faulty) the arbiter gives the flagged side time and presses
继续 — all on the arbiter's page, in chromium, against a real station, broker and node. Before
this, every action on the board was refused "对局已结束，无需操作" though no result stood.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.web import WebStation, login, paired_game

from clock_service import Side

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


async def adjust(page: Any, side: str, seconds: str) -> None:
    await page.select_option("#f-adjust select[name=side]", side)
    await page.fill("#f-adjust input[name=seconds]", seconds)
    await page.click("#f-adjust button")


async def test_a_dismissed_flag_lets_the_arbiter_give_time_and_go_on(
    page: Any, web_station: WebStation
) -> None:
    station = web_station.station
    await login(page, web_station)
    # Round 1 paired as the pairing page imports it; the clock set with 0.8 s left for red, so
    # that the flag falls at once.
    node = await paired_game(page, web_station, red_ms=800, black_ms=90_000)
    flag = page.locator('#alerts li[data-kind="flag"][data-board="1"]')
    await flag.wait_for(timeout=5000)

    await page.click('#boards .card[data-board="1"]')
    hint = page.locator("#flag-hint")
    await hint.wait_for(state="visible")
    assert "红方落旗" in await hint.inner_text() and "确认" in await hint.inner_text()
    # the card says the game is not over: a flag to rule (it said 结束: an outsider deputy)
    phase = page.locator('#boards .card[data-board="1"] .game')
    assert await phase.inner_text() == "落旗待裁定"
    # a player's phone (no login) reads the same, not a flag dismissed (a reviewer)
    phone = await page.context.browser.new_context(bypass_csp=True)
    try:
        board = await phone.new_page()
        await board.goto(web_station.url + "/board/1?lang=zh")
        await board.wait_for_function(
            "(document.querySelector('.card .game') || {}).textContent === '落旗待裁定'"
        )
    finally:
        await phone.close()

    # Time given before the flag is ruled is refused, in words.
    await adjust(page, "red", "45")
    refused = page.locator("#log li[data-outcome=refused]").first
    await refused.wait_for()
    assert "请先裁定" in await refused.inner_text()
    assert station.board_views()[0]["state"]["flag"] == "red"

    await flag.locator('[data-action="dismiss"]').click()
    await flag.wait_for(state="detached")
    await page.wait_for_function(
        "document.querySelector('#flag-hint').textContent.includes('未判负')"
    )
    assert await phase.inner_text() == "暂停 · 待加时"
    await page.click("#lang")
    assert await phase.inner_text() == "Paused · time to give"
    assert "flag fell but Red has not lost" in await hint.inner_text()
    await page.click("#lang")
    # The hint chose the flagged side for the adjustment.
    assert await page.eval_on_selector("#f-adjust select[name=side]", "s => s.value") == "red"

    # Time for the other side first is refused: the flagged side's clock must be given time.
    await adjust(page, "black", "30")
    await page.locator("#log li[data-outcome=refused]").nth(1).wait_for()
    assert "先给红方加时" in await page.locator("#log li[data-outcome=refused]").first.inner_text()

    await adjust(page, "red", "60")
    await page.wait_for_selector("#log li[data-outcome=ok] >> text=+60秒")
    await web_station.wait_board(
        "1",
        lambda v: (
            v["state"]["phase"] == "paused"
            and v["state"]["flag"] is None
            and v["state"]["red_ms"] == 60_000
        ),
    )
    await hint.wait_for(state="hidden")
    assert station.board_views()[0]["state"]["black_ms"] == 90_000  # untouched
    assert await phase.inner_text() == "暂停"

    await page.click('#board-detail [data-cmd="resume"]')
    await web_station.wait_board("1", lambda v: v["state"]["running"] == "red")
    node.boards["1"].face.press(Side.RED)
    await web_station.wait_board("1", lambda v: v["state"]["running"] == "black")

    # The game ends on the board as games do; the dismissed flag decided nothing.
    await page.select_option("#f-result select[name=winner]", "black")
    await page.click("#f-result button")
    await web_station.wait_board(
        "1", lambda v: (v["state"]["result"] or {}).get("winner") == "black"
    )
    # The round's results, as the organiser reads them: black won, no flag loss for red.
    rows: list[Any] = []
    for _ in range(100):
        results = await page.evaluate("fetch('/api/results?round=1').then(r => r.json())")
        rows = [(r["game"], r["result"], r["reason"]) for r in results["results"]]
        if rows and rows[0][1]:
            break
        await asyncio.sleep(0.05)
    assert rows == [("r1-b1", "0-1", "arbiter")]


async def test_a_dismissed_flag_is_not_shown_beside_the_result_entered(
    page: Any, web_station: WebStation
) -> None:
    """docs/station.md: 驳回 a flag that stands wrong (the players had agreed a draw), then enter
    the real result. The card showed ⚑ 超时 beside ½-½ (an outsider at a Wulong event)."""
    await web_station.node(["1"], mode="idle")
    station = web_station.station
    await login(page, web_station)
    game = {"game": "r1-b1", "tc": "30m+5s", "red": "甲", "black": "乙", "red_ms": 600}
    assert (await station.send_command("1", "set_game", {**game, "black_ms": 90_000})).ok
    assert (await station.send_command("1", "start")).ok
    card = page.locator('#boards .card[data-board="1"]')
    await card.locator(".flag-mark").wait_for()  # the flag, while it stands
    flag = page.locator('#alerts li[data-kind="flag"][data-board="1"]')
    await flag.locator('[data-action="dismiss"]').click()
    await flag.wait_for(state="detached")
    await card.click()
    await page.select_option("#f-result select[name=winner]", "")
    await page.click("#f-result button")
    await page.wait_for_selector('#boards .card[data-board="1"][data-result="½-½"]')
    assert await card.locator(".flag-mark").count() == 0
    assert "has-flag" not in (await card.get_attribute("class") or "")
