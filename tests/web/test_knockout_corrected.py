"""A knockout result put right on its board reaches the knockout and the final places (an
outsider chief arbiter: the third-place game's second foul was recorded on the wrong side, 撤销
took it back and the board's new result was red's — yet the knockout kept 许银川 third and the
prize list with him: the knockout recorded a board's result once and never looked again).

In chromium, against a real station, broker and node. Seven Swiss rounds are fed (甲 乙 丙 丁,
support/knockout_swiss.py); the semi-finals and the final are played on boards 1 and 2. The
places expected are the knockout's rule, worked out here from who won what: the final's winner
1st, its loser 2nd, the third-place game's winner 3rd, its loser 4th (Meishan 补充规定: 前四名
进入淘汰赛 … 决出1-4名).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.knockout_swiss import BOARDS, Swiss, pairings
from support.web import WebStation, login

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


async def api(page: Any, method: str, url: str, body: Any = None) -> Any:
    return await page.evaluate(
        "([m, u, b]) => QZ.station.api(m, u, b === null ? undefined : b)"
        ".then(r => ({status: r.status, data: r.data}))",
        [method, url, body],
    )


async def knockout(page: Any) -> dict[str, Any]:
    return dict((await api(page, "GET", "/api/knockout"))["data"])


async def until(page: Any, what: str, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while True:
            ko = await knockout(page)
            if predicate(ko):
                return ko
            await asyncio.sleep(0.1)


def result_of(ko: dict[str, Any], game: str) -> str | None:
    return next((g["result"] for g in ko["games"] if g["id"] == game), None)


async def play(page: Any, web: WebStation, game: str, board: str, winner: str) -> None:
    """The game onto ``board`` from its knockout row, started, decided on the board."""
    r = await api(page, "POST", f"/api/knockout/games/{game}/confirm", {"board": board})
    assert r["status"] == 200, r
    await web.wait_board(board, lambda v: (v["state"] or {}).get("game") == game)
    station = web.station
    assert (await station.send_command(board, "start")).ok
    assert (await station.send_command(board, "result", {"winner": winner, "reason": "resign"})).ok
    await until(page, f"{game} recorded", lambda ko: result_of(ko, game) == winner)


async def foul(page: Any, side: str, reason: str) -> None:
    await page.select_option("#f-foul select[name=side]", side)
    await page.select_option("#f-foul select[name=reason]", reason)
    await page.click("#f-foul button")


async def test_a_third_place_result_put_right_moves_the_places(
    page: Any, web_station: WebStation
) -> None:
    station = web_station.station
    await web_station.node(["1", "2"], mode="idle")
    swiss = Swiss(station)
    await station.import_pairings(pairings(1, 2, 3, 4, 5, 6, 7), send=False)
    for r in range(1, 8):
        for b in BOARDS:
            await swiss.result(r, b)
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')
    r = await api(page, "POST", "/api/knockout/start", {"seed": 7, "after_round": 7})
    assert r["status"] == 200, r
    games = {g["id"]: g for g in r["data"]["proposed"]}
    await play(page, web_station, "ko-sf1", "1", "red")
    await play(page, web_station, "ko-sf2", "2", "black")
    ko = await until(page, "final proposed", lambda ko: len(ko["proposed"]) == 2)
    games |= {g["id"]: g for g in ko["proposed"]}
    final, third = games["ko-f"], games["ko-3"]
    await play(page, web_station, "ko-f", "1", "black")
    # the final on board 1 (前两台录谱): its record page and its clock's PGN are the final's —
    # they were round 7's Swiss game and a 404 (an outsider organiser)
    record = (await api(page, "GET", "/api/records/1"))["data"]
    assert (record["game"], record["red"], record["black"]) == (
        "ko-f", final["red"], final["black"],
    ) and record["required"], record  # fmt: skip
    assert record["round"] == 9  # played beside round 9: the final comes after the semis
    pgn = await page.evaluate("fetch('/api/export/games/ko-f/clock.pgn').then(r => r.text())")
    assert f'[White "{final["red"]}"]' in pgn and '[Result "0-1"]' in pgn, pgn
    link = page.locator('#ko-rows tr[data-game="ko-f"] a.ko-pgn')
    assert await link.get_attribute("href") == "/api/export/games/ko-f/clock.pgn"

    # the third-place game: red's first foul, then black's phone recorded on red by mistake —
    # in Meishan the second foul loses the game at once (一盘棋犯规达到2次的)
    r = await api(page, "POST", "/api/knockout/games/ko-3/confirm", {"board": "2"})
    assert r["status"] == 200, r
    await web_station.wait_board("2", lambda v: (v["state"] or {}).get("game") == "ko-3")
    assert (await station.send_command("2", "start")).ok
    await page.click('#boards .card[data-board="2"]')
    await foul(page, "red", "disturbing")
    await page.wait_for_selector("#board-foul-rows li[data-seq] >> nth=0")
    await foul(page, "red", "phone")
    ko = await until(page, "black 3rd", lambda ko: ko["finished"])
    assert result_of(ko, "ko-3") == "black"
    places = {p["place"]: p["player"] for p in ko["placings"]}
    assert places[3] == third["black"] and places[4] == third["red"]

    # 撤销 on the wrong foul (two taps): the game goes on, the knockout waits for its result
    await page.wait_for_function(
        "document.querySelectorAll('#board-foul-rows li[data-seq]').length === 2"
    )
    button = page.locator("#board-foul-rows li[data-seq]").filter(has_text="手机").locator(
        'button[data-action="withdraw"]'
    )
    await button.click()
    await asyncio.sleep(0.4)  # a second tap, not a double click
    await button.click()
    await page.wait_for_selector("#log li[data-outcome=ok] >> text=撤销犯规")
    ko = await until(page, "ko-3 open again", lambda ko: result_of(ko, "ko-3") is None)
    assert not ko["finished"] and not ko["conflicts"]
    # red wins it on the board after all
    await page.click('#board-detail [data-cmd="resume"]')
    await web_station.wait_board("2", lambda v: (v["state"] or {}).get("phase") == "running")
    await page.select_option("#f-result select[name=winner]", "red")
    await page.click("#f-result button")
    ko = await until(page, "red 3rd", lambda ko: ko["finished"])
    assert result_of(ko, "ko-3") == "red" and not ko["conflicts"]

    # what the organiser reads: the knockout section and the final standings
    expected = {1: final["black"], 2: final["red"], 3: third["red"], 4: third["black"]}
    assert {p["place"]: p["player"] for p in ko["placings"]} == expected
    standings = (await api(page, "GET", "/api/standings"))["data"]
    assert standings["final"] is True
    top = {row["rank"]: row["player"] for row in standings["standings"] if row["rank"] <= 4}
    assert top == expected
    await page.wait_for_function(
        "(p) => document.getElementById('ko').textContent.replace(/\\s/g, '').includes(p)",
        arg=f"第3名：{third['red']}第4名：{third['black']}",
    )


async def test_a_result_changed_under_a_final_already_on_its_board_is_shown_not_followed(
    page: Any, web_station: WebStation
) -> None:
    """Semi-final 1's result is replaced on its board after the final it sent a player to was
    put on a board: the knockout keeps what it recorded (the final's players are at the board)
    and says so on the page, in both languages, until the board's result is put back."""
    station = web_station.station
    await web_station.node(["1", "2"], mode="idle")
    swiss = Swiss(station)
    await station.import_pairings(pairings(1, 2, 3, 4, 5, 6, 7), send=False)
    for r in range(1, 8):
        for b in BOARDS:
            await swiss.result(r, b)
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')
    assert (await api(page, "POST", "/api/knockout/start", {"seed": 7, "after_round": 7}))[
        "status"
    ] == 200
    await play(page, web_station, "ko-sf1", "1", "red")
    await play(page, web_station, "ko-sf2", "2", "black")
    await until(page, "final proposed", lambda ko: len(ko["proposed"]) == 2)
    r = await api(page, "POST", "/api/knockout/games/ko-f/confirm", {"board": "2"})
    assert r["status"] == 200, r
    before = {p["id"]: (p["red"], p["black"]) for p in (await knockout(page))["proposed"]}

    # board 1 still holds semi-final 1: its result replaced (替换结果)
    body = {"cmd": "result", "args": {"winner": "black", "reason": "arbiter"}, "replace": True}
    r = await api(page, "POST", "/api/boards/1/cmd", body)
    assert r["status"] == 200, r
    ko = await until(page, "conflict", lambda ko: bool(ko["conflicts"]))
    assert ko["conflicts"] == [{"game": "ko-sf1", "now": "black", "recorded": "red"}]
    assert result_of(ko, "ko-sf1") == "red"
    assert {p["id"]: (p["red"], p["black"]) for p in ko["proposed"]} == before
    line = page.locator('#ko-state .ko-conflict[data-game="ko-sf1"]')
    await line.wait_for()
    text = await line.text_content() or ""
    assert "半决赛 1的台上结果已改为“黑方胜”" in text and "仍按“红方胜”" in text, text
    await page.evaluate("QZ.setLang('en')")
    text = await line.text_content() or ""
    assert "Semi-final 1" in text and "black wins" in text.lower(), text
    await page.evaluate("QZ.setLang('zh-CN')")

    # put back on the board: the conflict is gone
    body["args"] = {"winner": "red", "reason": "arbiter"}
    r = await api(page, "POST", "/api/boards/1/cmd", body)
    assert r["status"] == 200, r
    ko = await until(page, "settled", lambda ko: not ko["conflicts"])
    assert result_of(ko, "ko-sf1") == "red"
    await page.wait_for_selector("#ko-state .ko-conflict", state="detached")
