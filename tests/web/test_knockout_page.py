"""The knockout section of the arbiter page (``knockout.js``) in a real chromium, a real
station, broker and node: 开始淘汰赛 needs a second tap; started before round 7 is over, the
station refuses and the page says why in the page's language (no raw code); a semi-final put
on a board that is still playing is refused by the board and stays to be assigned, with the
refusal on its row; assigned again to a free board, it is on that board."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from support.knockout_swiss import BOARDS, Swiss, pairings
from support.web import WebStation, login

from venue_station.domain.knockout import META_KEY

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


async def tap_start(page: Any) -> None:
    await page.click("#ko-start")


async def tap_twice(page: Any) -> None:
    """The first tap arms it, the second (not a double click's) sends it."""
    await tap_start(page)
    await page.wait_for_selector('#ko-start[data-armed="1"]')
    await asyncio.sleep(0.6)
    await tap_start(page)


async def test_the_knockout_start_is_confirmed_refused_early_and_a_refused_board_is_shown(
    page: Any, web_station: WebStation
) -> None:
    station = web_station.station
    assert station.store is not None
    await web_station.node(["1", "2"], mode="idle")
    swiss = Swiss(station)
    await station.import_pairings(pairings(1, 2, 3), send=False)
    for r in (1, 2):
        for b in BOARDS:
            await swiss.result(r, b)
    await swiss.result(3, "11")  # round 3: board 12 still playing
    await login(page, web_station)
    await page.wait_for_selector('#ko[data-started="0"]')
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')

    # one tap only arms the button: nothing is sent
    start = page.locator("#ko-start")
    await tap_start(page)
    assert await start.get_attribute("data-armed") == "1"
    assert await start.text_content() == "再按一次，确认开始淘汰赛"
    await asyncio.sleep(0.5)
    assert await page.locator("#log li").count() == 0
    assert await station.store.get_meta(META_KEY) is None

    # the second tap sends it: during round 3 the station refuses and says why
    await asyncio.sleep(0.1)
    await tap_start(page)
    refused = page.locator("#log li[data-outcome=refused]")
    await refused.wait_for()
    text = await refused.text_content() or ""
    assert "开始淘汰赛" in text and "第3轮还有 1 局未出结果（第12台）" in text, text
    assert "swiss_unfinished" not in text
    why = page.locator("#ko-state .ko-refused")
    assert "第7轮全部对局结束后才能开始淘汰赛" in (await why.text_content() or "")
    assert await start.get_attribute("data-armed") is None
    assert await start.text_content() == "开始淘汰赛"
    assert await page.locator('#ko[data-started="0"]').count() == 1
    assert await station.store.get_meta(META_KEY) is None
    # in English, every word of it
    await page.evaluate("QZ.setLang('en')")
    words = await why.text_content() or ""
    assert "round 3 still has 1 game(s) without a result (board(s) 12)" in words, words
    assert not re.search(r"[\u4e00-\u9fff]", words), words
    assert "round 3" in (await refused.text_content() or "")
    await page.evaluate("QZ.setLang('zh-CN')")

    # round 3 over, rounds 4-7 played: two taps start it, after round 7
    await swiss.result(3, "12")
    await station.import_pairings(pairings(4, 5, 6, 7), send=False)
    for r in (4, 5, 6, 7):
        for b in BOARDS:
            await swiss.result(r, b)
    # a double click is one tap: it only arms the button
    await page.dblclick("#ko-start")
    await asyncio.sleep(0.6)
    assert await start.get_attribute("data-armed") == "1"
    assert await page.locator('#ko[data-started="0"]').count() == 1
    assert await station.store.get_meta(META_KEY) is None
    # left armed for 5 s it disarms itself
    await page.wait_for_selector("#ko-start:not([data-armed])", timeout=6000)
    assert await start.text_content() == "开始淘汰赛"
    await tap_twice(page)
    await page.wait_for_selector('#ko[data-started="1"]')
    assert (await page.text_content("#ko-state") or "").startswith("第7轮后前四名")
    top = await page.eval_on_selector_all("#ko-top li", "els => els.map(e => e.dataset.player)")
    assert top == ["甲", "乙", "丙", "丁"]

    # board 1 is playing another game: it refuses the semi-final, which stays to be assigned
    game = {"game": "r8-b1", "tc": "30m+5s", "red": "戊", "black": "己"}
    assert (await station.send_command("1", "set_game", game)).ok
    assert (await station.send_command("1", "start")).ok
    row = page.locator('#ko-rows tr[data-game="ko-sf1"]')
    await row.locator("input[name=board]").fill("1")
    await row.locator("button[data-action=confirm]").click()
    await page.wait_for_selector('#ko-rows tr[data-game="ko-sf1"][data-refused="1"]')
    assert await row.get_attribute("data-state") == "proposed"
    assert await row.get_attribute("data-board") == ""
    assert "第1台拒绝上台：对局进行中，请先复位" in (await row.text_content() or "")
    assert await row.locator("button[data-action=confirm]").text_content() == "确认上台"
    log = await page.locator("#log li[data-outcome=refused]").first.text_content() or ""
    assert "对局进行中，请先复位" in log, log
    ko = await page.evaluate("QZ.station.api('GET', '/api/knockout').then(r => r.data)")
    sf1 = next(p for p in ko["proposed"] if p["id"] == "ko-sf1")
    assert sf1["confirmed"] is False and sf1["board"] is None, sf1

    # a board typed wrong (99: no such board) is refused at once, the game stays unassigned
    await row.locator("input[name=board]").fill("99")
    await row.locator("button[data-action=confirm]").click()
    await page.wait_for_selector("#log li[data-outcome=refused] >> text=没有第99台")
    ko = await page.evaluate("QZ.station.api('GET', '/api/knockout').then(r => r.data)")
    sf1 = next(p for p in ko["proposed"] if p["id"] == "ko-sf1")
    assert sf1["confirmed"] is False and sf1["board"] is None, sf1

    # assigned again, to board 2 (free): it is on board 2
    await row.locator("input[name=board]").fill("2")
    await row.locator("button[data-action=confirm]").click()
    await page.wait_for_selector('#ko-rows tr[data-game="ko-sf1"][data-state="playing"]')
    assert await row.get_attribute("data-board") == "2"
    assert await row.get_attribute("data-refused") is None
    await web_station.wait_board("2", lambda v: (v["state"] or {}).get("game") == "ko-sf1")


async def test_a_shared_fourth_place_is_settled_by_the_chief_on_the_page(
    page: Any, web_station: WebStation
) -> None:
    """丁 and 戊 drew every game of seven rounds, always as red: level on every criterion of
    the seed, dropped rounds included, at 4th. The start is refused and says so; the page then
    offers the two, the chief picks 戊, and the next two taps start the knockout with 戊 fourth
    (an outsider chief: naming the four needed the API)."""
    import json

    from support.station import decision_txn, envelope

    station = web_station.station
    trio = ["甲", "乙", "丙"]
    rows, facts = ["round,board,red,black"], []
    for r in range(1, 8):
        winner_of_three = trio[r % 3]
        drawn = [p for p in trio if p != winner_of_three]
        games = [("丁", drawn[0], None), ("戊", drawn[1], None), (winner_of_three, "己", "red")]
        for i, (red, black, winner) in enumerate(games):
            board = str(11 + i)
            rows.append(f"{r},{board},{red},{black}")
            data = {"winner": winner, "reason": "resign" if winner else "agreed"}
            txn = decision_txn(station, board, "result", data)
            facts.append(envelope(board, r, game=f"r{r}-b{board}", type="result",
                                  data=data, txn=txn))  # fmt: skip
    await station.import_pairings("\n".join(rows) + "\n", send=False)
    assert station.ingest is not None
    for ev in facts:
        station.ingest.handle(f"qz/v1/test/board/{ev['board']}/event", json.dumps(ev).encode())
    await station.ingest.flush()

    await login(page, web_station)
    await page.wait_for_selector('#ko[data-started="0"]')
    await tap_twice(page)
    pick = page.locator("#ko-state .ko-pick")
    await pick.wait_for()
    assert "并列（丁、戊）" in (await page.text_content("#ko-state") or "")
    assert "请选出进入淘汰赛的1名（按点选先后排第4名起）" in (await pick.text_content() or "")
    await pick.locator('button[data-player="戊"]').click()
    chosen = pick.locator('button[data-player="戊"]')
    assert await chosen.get_attribute("aria-pressed") == "true"
    assert await chosen.text_content() == "4. 戊"
    await asyncio.sleep(0.6)
    await tap_twice(page)
    await page.wait_for_selector('#ko[data-started="1"]')
    top = await page.eval_on_selector_all("#ko-top li", "els => els.map(e => e.dataset.player)")
    # 乙 won three games and drew four (10); 甲 and 丙 9 each; 丁 and 戊 7; 己 0
    assert top[0] == "乙" and set(top[1:3]) == {"甲", "丙"} and top[3] == "戊", top
