"""The station's board page shows the game record (issue 29): the position after each recorded
move (pieces in Chinese glyphs, WXF letters in English) and the moves in Chinese notation (WXF in
English), live over the SSE stream, in
chromium against a real station and Mosquitto."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD
from support.web import WebStation

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
PAIRS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n"
MOVES = [("炮二平五", "h2e2"), ("马８进７", "h9g7"), ("马二进三", "h0g2")]


def cell(square: str) -> str:
    return f"#xq .cell[data-r='{9 - int(square[1])}'][data-c='{'abcdefghi'.index(square[0])}']"


async def test_the_board_page_draws_each_recorded_move(page: Any, web_station: WebStation) -> None:
    station = web_station.station
    await station.import_pairings(PAIRS, send=False)
    async with httpx.AsyncClient(base_url=web_station.url, timeout=10) as chief:
        r = await chief.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        chief.headers["X-CSRF-Token"] = r.json()["csrf"]
        await page.goto(web_station.url + "/board/1")
        await page.wait_for_function("document.querySelectorAll('#xq .cell').length === 90")
        for ply, (zh, iccs) in enumerate(MOVES):
            r = await chief.post("/api/records/1/moves", json={"move": zh, "ply": ply})
            assert r.status_code == 200, r.text
            await page.wait_for_function(
                f"document.getElementById('record-box').dataset.ply === '{ply + 1}'"
            )
            assert await page.inner_text(cell(iccs[2:])) in ("炮", "马")
            assert (await page.inner_text(cell(iccs[:2]))).strip() == ""
            assert await page.inner_text("#record-moves li:last-child .mv") == zh
        numbers = await page.eval_on_selector_all(
            "#record-moves li .no", "l => l.map(x => x.textContent)"
        )
        assert numbers == ["1.", "", "2."][: len(MOVES)]  # by 回合, as the PGN (it numbered plies)
        assert await page.inner_text(cell("e9")) == "将"
        assert await page.get_attribute(cell("e0"), "class") == "cell red"
        assert await page.inner_text("#record-box h2") == "棋谱"
        await page.click("#lang")  # English: the WXF letters and the moves in WXF
        assert await page.inner_text("#record-box h2") == "Game record"
        assert await page.inner_text(cell("e9")) == "K"
        assert await page.inner_text(cell("g2")) == "H"
        assert await page.inner_text("#record-moves li:last-child .mv") == "H2+3"


async def test_the_board_page_shows_a_past_games_record_and_its_downloads(
    page: Any, web_station: WebStation
) -> None:
    """``/board/1?game=r1-b1`` shows round 1's record after round 2 was paired; the record box
    links the game's PGN and the round's records PGN (both languages)."""
    station = web_station.station
    await station.import_pairings(PAIRS + "2,1,乙,甲\n2,2,丁,丙\n", send=False)
    async with httpx.AsyncClient(base_url=web_station.url, timeout=10) as chief:
        r = await chief.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        chief.headers["X-CSRF-Token"] = r.json()["csrf"]
        for ply, (zh, _) in enumerate(MOVES):
            body = {"move": zh, "ply": ply, "game": "r1-b1"}
            r = await chief.post("/api/records/1/moves", json=body)
            assert r.status_code == 200, r.text
        r = await chief.post("/api/records/1/moves", json={"move": "h2e2", "ply": 0})
        assert r.status_code == 200 and r.json()["game"] == "r2-b1"  # the board's latest game

    # board 1's clock plays round 2's game now
    await web_station.node(["1"], mode="idle")
    game = {"game": "r2-b1", "tc": "30m+5s", "red": "乙", "black": "甲"}
    assert (await station.send_command("1", "set_game", game)).ok
    # the board page follows the board's game (round 2: one move) ...
    await page.goto(web_station.url + "/board/1?lang=zh")
    await page.wait_for_selector("#card-slot .card[data-phase=ready]")
    assert await page.locator("#card-slot").is_visible()
    await page.wait_for_function("document.getElementById('record-box').dataset.ply === '1'")
    assert await page.get_attribute("#record-box", "data-game") == "r2-b1"
    # ... and ?game= shows round 1's record, named as such, with its downloads
    await page.goto(web_station.url + "/board/1?game=r1-b1&lang=zh")
    await page.wait_for_function("document.getElementById('record-box').dataset.ply === '3'")
    assert await page.get_attribute("#record-box", "data-game") == "r1-b1"
    assert "第1轮" in await page.inner_text("#record-title")
    # the board's live card (round 2's game) is not shown above round 1's record as if it were
    # that game's (an outsider organiser)
    assert await page.locator("#card-slot").is_hidden()
    assert await page.inner_text("#record-moves li:last-child .mv") == MOVES[-1][0]
    game_pgn = page.locator("#record-pgn")
    round_pgn = page.locator("#round-pgn")
    assert await game_pgn.get_attribute("href") == "/api/export/games/r1-b1/record.pgn"
    assert await round_pgn.get_attribute("href") == "/api/export/rounds/1/records.pgn"
    assert "PGN" in await game_pgn.inner_text() and "本局" in await game_pgn.inner_text()
    assert "本轮" in await round_pgn.inner_text()
    r = await page.request.get(web_station.url + "/api/export/games/r1-b1/record.pgn")
    assert r.status == 200 and "h0g2" in await r.text()
    r = await page.request.get(web_station.url + "/api/export/rounds/1/records.pgn")
    assert r.status == 200 and '[GameId "r1-b1"]' in await r.text()
    # a new move on round 2's game does not replace round 1's record on this page
    async with httpx.AsyncClient(base_url=web_station.url, timeout=10) as chief:
        r = await chief.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        chief.headers["X-CSRF-Token"] = r.json()["csrf"]
        r = await chief.post("/api/records/1/moves", json={"move": "h9g7", "ply": 1})
        assert r.status_code == 200, r.text
    await page.click("#lang")
    assert "Round 1" in await page.inner_text("#record-title")
    assert "PGN" in await game_pgn.inner_text() and "this game" in await game_pgn.inner_text()
    assert "round" in await round_pgn.inner_text()
    assert await page.get_attribute("#record-box", "data-ply") == "3"
    assert await page.get_attribute("#record-box", "data-game") == "r1-b1"
    # the board's current game, one link away
    await page.click("#record-current")
    await page.wait_for_function("document.getElementById('record-box').dataset.ply === '2'")
    assert await page.get_attribute("#record-box", "data-game") == "r2-b1"
