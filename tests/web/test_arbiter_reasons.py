"""Issue 15 on the arbiter page, in a real chromium with a real station, broker and node: the
profile's reasons are a choice (no more mistyped free text), a note goes beside, an immediate
loss of both sides is the 0:0 double forfeit, and the receiver of a handicap game is marked 让二先.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.web import WebStation, login, screenshot

from clock_service import Side

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


async def test_reasons_are_chosen_and_both_sides_can_forfeit(
    page: Any, web_station: WebStation
) -> None:
    node = await web_station.node(["1", "2"], mode="idle")
    station = web_station.station  # Meishan 2016 (the station's default profile)
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')

    # A handicap game: the receiver's row says 让二先 on the board card.
    game = {"game": "r1-b1", "tc": "30m+5s", "red": "甲", "black": "乙"}
    handicap = {"receiver": "black", "moves": 2}
    assert (await station.send_command("1", "set_game", {**game, "handicap": handicap})).ok
    assert (await station.send_command("1", "start")).ok
    mark = page.locator('#boards .card[data-board="1"] .side.black .handicap-mark')
    await mark.wait_for(timeout=5000)
    assert await mark.text_content() == "让二先"
    assert await page.locator('#boards .card[data-board="1"] .side.red .handicap-mark').count() == 0

    # The foul reasons are the profile's, in the seed's words.
    await page.click('#boards .card[data-board="1"]')
    await page.wait_for_selector('#foul-reason option[value="phone_ringing"]', state="attached")
    options = await page.eval_on_selector_all(
        "#foul-reason option", "els => els.map(e => [e.value, e.textContent])"
    )
    assert ("phone_ringing", "比赛间查看手机或手机响铃一次的（手机响铃一次的）") in [
        tuple(o) for o in options
    ]
    forfeits = await page.eval_on_selector_all(
        "#forfeit-reason option", "els => els.map(e => e.value)"
    )
    assert {"late", "move_rule_violations", "disobedience", "suicide_move"} <= set(forfeits)
    node.boards["1"].face.press(Side.RED)

    # Two move-rule violations by black: the second loses at once (违反行棋规定2次的).
    for n in (1, 2):
        await page.select_option("#f-foul select[name=side]", "black")
        await page.select_option("#foul-reason", "move_rule_violation")
        await page.fill("#f-foul input[name=note]", f"第{n}次")
        await page.click("#f-foul button")
        await page.wait_for_selector(f'#log li[data-outcome="ok"]:nth-child({n})')
    await web_station.wait_board("1", lambda v: (v["state"]["result"] or {}).get("winner") == "red")
    assert node.boards["1"].result == {"winner": "red", "reason": "move_rule_violations"}

    # Board 2: nobody came; the arbiter declares both lost: 0:0.
    game2 = {"game": "r1-b2", "tc": "30m+5s", "red": "丙", "black": "丁"}
    assert (await station.send_command("2", "set_game", game2)).ok
    await page.click('#boards .card[data-board="2"]')
    await page.select_option("#f-forfeit select[name=side]", "both")
    await page.select_option("#forfeit-reason", "late")
    await page.click("#f-forfeit button")
    await web_station.wait_board(
        "2", lambda v: (v["state"]["result"] or {}).get("reason") == "double_forfeit"
    )
    assert node.boards["2"].result == {"winner": None, "reason": "double_forfeit"}
    await screenshot(page, "arbiter-reasons")


async def test_the_english_page_offers_the_english_wording(
    page: Any, web_station: WebStation
) -> None:
    await web_station.node(["1"], mode="idle")
    await login(page, web_station, lang="en")
    await page.click('#boards .card[data-board="1"]')
    await page.wait_for_selector(
        '#forfeit-reason option[value="move_rule_violations"]', state="attached"
    )
    text = await page.text_content('#forfeit-reason option[value="move_rule_violations"]')
    assert text == "Violating the rules of moving twice (loses at 2)"


async def test_the_display_marks_the_receiver_of_a_handicap_game(
    page: Any, web_station: WebStation
) -> None:
    fake = await web_station.fake_node("node-a", ["1", "2"])
    await web_station.publish_status(fake, "1", "online")
    await web_station.publish_status(fake, "2", "online")
    await web_station.publish_state(fake, "1", handicap={"receiver": "red", "moves": 2})
    await web_station.publish_state(fake, "2")
    for lang, text in ((None, "让二先"), ("en", "2-move handicap")):
        await page.goto(web_station.url + "/" + (f"?lang={lang}" if lang else ""))
        mark = page.locator('.card[data-board="1"] .side.red .handicap-mark')
        await mark.wait_for(timeout=5000)
        assert await mark.text_content() == text
        await page.wait_for_selector('.card[data-board="2"]')
        assert await page.locator(".handicap-mark").count() == 1
