"""A recorder's phone in a hall whose Wi-Fi comes and goes (录谱, docs/records.md "The record
page"): nothing entered is lost, nothing lands twice, nothing lands on another game unawares.

The published game (tests/support/published_game.py) is entered on board 1 of a Wulong round in
Debian's chromium: an answer lost on the way (the station stored the move, the phone never
heard) — the move is sent again and stored once; then the phone goes offline and the recorder
goes on by taps and by typing — the moves wait on the phone, the diagram shows them, undo takes
one back; the page is reloaded with the station still unreachable — the moves are still there;
the station comes back — they arrive in order. A kept move the station refuses stops the
sending with the reason on screen, in both languages, and the recorder may discard it. The
station's record is checked through its API against the published moves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from support.published_game import CHINESE, ICCS
from support.web import login, served_station

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

PLAYERS = ["甲", "乙", "丙", "丁"]
PAIRS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n"
STORED = "n => document.querySelectorAll('#moves li:not(.queued)').length === n"
QUEUED = "n => document.querySelectorAll('#moves li.queued').length === n"
KEPT = "() => JSON.parse(localStorage.getItem('qz.record.outbox.1') || '[]')"
MOVES = "**/api/records/1/moves"


async def type_move(page: Any, move: str) -> None:
    await page.fill("#move-text", move)
    await page.press("#move-text", "Enter")


async def tap(page: Any, move: str) -> None:
    await page.click(f'#xq button[data-sq="{move[:2]}"]')
    await page.click(f'#xq button[data-sq="{move[2:]}"]')


async def stored_moves(web: Any) -> list[str]:
    async with httpx.AsyncClient(base_url=web.url) as client:
        view = (await client.get("/api/records/1")).json()
    return [m["iccs"] for m in view["moves"]]


async def test_moves_entered_without_the_station_wait_on_the_phone_and_arrive_once(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    async with served_station(broker_factory(), tmp_path, regulation="wulong-2015") as web:
        await web.station.import_players("name\n" + "\n".join(PLAYERS) + "\n")
        await web.station.import_pairings(PAIRS, send=False)
        store = web.station.require_store()
        await login(page, web)
        await page.goto(f"{web.url}/record/1?lang=zh")
        await page.wait_for_selector('#xq button.pc[data-sq="e0"]')
        for n, move in enumerate(CHINESE[:2], start=1):
            await type_move(page, move)
            await page.wait_for_function(STORED, arg=n)

        # 1. the station stores the third move, but its answer never reaches the phone
        lost = []

        async def lose_one_answer(route: Any) -> None:
            if lost:
                await route.continue_()
                return
            lost.append((await route.fetch()).status)  # it reached the station...
            await route.abort()  # ...and the phone hears nothing

        await page.route(MOVES, lose_one_answer)
        await type_move(page, CHINESE[2])
        await page.wait_for_function(STORED, arg=3)
        await page.wait_for_function("() => document.querySelector('#outbox').hidden")
        await page.unroute(MOVES)
        assert lost == [200]
        assert await stored_moves(web) == ICCS[:3]
        assert len(await store.record_rows.record_edits("r1-b1")) == 3  # stored once

        # 2. the phone loses the station: taps and typing go on, the moves wait on the phone
        await page.context.set_offline(True)
        await tap(page, ICCS[3])  # 车１平２, from the station's legal list
        await page.wait_for_function(QUEUED, arg=1)
        await page.wait_for_selector("#outbox:not([hidden])")
        await tap(page, ICCS[4])  # 车九平八, placed by its squares alone
        await page.wait_for_function(QUEUED, arg=2)
        await type_move(page, CHINESE[5])  # 马８进７ typed: kept, not placed on the diagram
        await page.wait_for_function(QUEUED, arg=3)
        await page.click('#xq button[data-sq="g3"]')  # a tap now: the page says why not
        assert "键入的着法" in await page.text_content("#msg")
        await page.click("#undo")  # takes back the typed move, which never left the phone
        await page.wait_for_function(QUEUED, arg=2)
        await type_move(page, ICCS[5])
        await page.wait_for_function(QUEUED, arg=3)
        # the diagram shows the kept moves: black's chariot on b9, red's on b0, the horse on g7
        for square, piece in {"b9": True, "b0": True, "g7": True, "a9": False, "h9": False}.items():
            classes = await page.get_attribute(f'#xq button[data-sq="{square}"]', "class")
            assert ("pc" in classes.split()) is piece, (square, classes)
        said = await page.text_content("#outbox")
        assert "3" in said and "尚未送达" in said, said
        kept = await page.evaluate(KEPT)
        assert [(k["game"], k["ply"], k["move"]) for k in kept] == [
            ("r1-b1", 3, ICCS[3]),
            ("r1-b1", 4, ICCS[4]),
            ("r1-b1", 5, ICCS[5]),
        ]
        assert await stored_moves(web) == ICCS[:3]

        # 3. the page reloaded while the station still cannot take them: they are still there
        await page.context.set_offline(False)
        await page.route(MOVES, lambda route: route.abort())
        await page.reload()
        await page.wait_for_function(STORED, arg=3)
        await page.wait_for_function(QUEUED, arg=3)
        assert await stored_moves(web) == ICCS[:3]

        # 4. the station answers again: the moves arrive, in order, once
        await page.unroute(MOVES)
        await page.wait_for_function(STORED, arg=6, timeout=15_000)
        await page.wait_for_function("() => document.querySelector('#outbox').hidden")
        assert "已送达" in await page.text_content("#msg")
        assert await stored_moves(web) == ICCS[:6]
        assert await page.evaluate(KEPT) == []
        assert len(await store.record_rows.record_edits("r1-b1")) == 6

        # 5. a kept move the station refuses (black's chariot moved like an advisor, tapped
        # offline after a legal move): the sending stops at it and says which move and why;
        # the move before it arrives, nothing after it is sent
        await page.context.set_offline(True)
        await tap(page, ICCS[6])  # 兵三进一
        await page.wait_for_function(QUEUED, arg=1)
        await tap(page, "b9a8")
        await page.wait_for_function(QUEUED, arg=2)
        await tap(page, "e3e4")  # red's next, kept behind it
        await page.wait_for_function(QUEUED, arg=3)
        await page.context.set_offline(False)
        await page.wait_for_selector("#outbox.err", timeout=15_000)
        said = await page.text_content("#outbox")
        assert "第8着" in said and "b9a8" in said and "2 着" in said, said
        assert await page.is_visible("#outbox-drop")
        await page.click("#lang")
        said = await page.text_content("#outbox")
        assert "did not accept kept move 8" in said and "b9a8" in said, said
        assert await stored_moves(web) == ICCS[:7]
        await page.click("#outbox-drop")
        await page.wait_for_function("() => document.querySelector('#outbox').hidden")
        await page.wait_for_function(QUEUED, arg=0)
        assert await page.evaluate(KEPT) == []
        assert await stored_moves(web) == ICCS[:7]
        await type_move(page, ICCS[7])  # and recording goes on
        await page.wait_for_function(STORED, arg=8)
        assert await stored_moves(web) == ICCS[:8]
