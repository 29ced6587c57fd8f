"""The arbiter's station (``/arbiter``) in a real chromium: a real station, broker and nodes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.web import WebStation, login, screenshot

from clock_service import Side

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


async def test_a_bad_login_is_refused(page: Any, web_station: WebStation) -> None:
    await page.goto(web_station.url + "/arbiter")
    await page.fill("#username", "arb1")
    await page.fill("#password", "not-the-password")
    await page.click("#login-submit")
    await page.wait_for_function("document.querySelector('#login-error').textContent !== ''")
    assert await page.text_content("#login-error") == "用户名或密码错误"
    assert await page.is_hidden("#station")
    status = await page.evaluate("fetch('/api/auth/session').then(r => r.status)")
    assert status == 401
    await screenshot(page, "arbiter-login")


async def test_the_arbiter_sees_the_flag_and_confirms_a_pending_foul(
    page: Any, web_station: WebStation
) -> None:
    node = await web_station.node(["1", "2"], mode="idle")
    await web_station.node(["3", "4"], node="node-b", mode="idle")
    station = web_station.station
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="4"][data-online="online"]')

    # Board 1: a flag. The alert appears at the top of the list, with a beep.
    game1 = {"game": "r1-b1", "tc": "30m+5s", "red": "甲", "black": "乙"}
    assert (
        await station.send_command("1", "set_game", {**game1, "red_ms": 800, "black_ms": 60_000})
    ).ok
    assert (await station.send_command("1", "start")).ok
    flag = page.locator('#alerts li[data-kind="flag"][data-board="1"]')
    await flag.wait_for(timeout=5000)
    assert "超时落旗" in (await flag.text_content() or "")
    assert "红方 · 甲" in (await flag.text_content() or "")  # whose flag: the side and the player
    assert await page.evaluate("QZ.beeps") >= 1

    # Board 2: a game in progress; the player pauses the clock from the board: a pending foul.
    game2 = {"game": "r1-b2", "tc": "30m+5s", "red": "丙", "black": "丁"}
    assert (await station.send_command("2", "set_game", game2)).ok
    assert (await station.send_command("2", "start")).ok
    face = node.boards["2"].face
    await page.wait_for_selector('#boards .card[data-board="2"] .side.red.running')
    face.press(Side.RED)
    await page.wait_for_selector('#boards .card[data-board="2"] .side.black.running')
    face.pause_key()
    foul = page.locator('#alerts li[data-kind="foul_pending"][data-board="2"]')
    await foul.wait_for(timeout=5000)
    assert "擅停棋钟" in await foul.inner_text()  # the reason in words, not its wire code
    # Newest first: the foul came after the flag.
    kinds = await page.eval_on_selector_all("#alerts li", "els => els.map(e => e.dataset.kind)")
    assert kinds.index("foul_pending") < kinds.index("flag")
    assert await page.locator('#boards .card[data-board="2"] .foul-mark').count() == 0

    await foul.locator('[data-action="confirm"]').click()
    await page.wait_for_selector('#boards .card[data-board="2"] .foul-mark[data-fouls="1"]')
    await page.wait_for_selector('#log li[data-outcome="ok"]')
    # Settled alerts leave the list (unless "show settled" is ticked).
    await foul.wait_for(state="detached")
    await page.check("#show-all")
    await page.wait_for_selector('#alerts li[data-kind="foul_pending"][data-status="confirmed"]')

    # The board view: history, then an adjustment with its reply shown.
    await page.click('#boards .card[data-board="2"]')
    await page.wait_for_selector('#board-history li[data-type="paused"]')
    before = station.board_views()[1]["state"]["black_ms"]
    await page.select_option("#f-adjust select[name=side]", "black")
    await page.fill("#f-adjust input[name=seconds]", "30")
    await page.click("#f-adjust button")
    await page.wait_for_selector("#log li[data-outcome=ok] >> text=+30秒")
    await web_station.wait_board("2", lambda v: v["state"]["black_ms"] == before + 30_000)
    await screenshot(page, "arbiter")


async def test_moving_a_game_to_a_spare_clock_keeps_its_times(
    page: Any, web_station: WebStation
) -> None:
    node = await web_station.node(["1", "2"], mode="idle")
    station = web_station.station
    await login(page, web_station, lang="en")
    game = {"game": "r1-b1", "tc": "30m+5s", "red": "甲", "black": "乙"}
    assert (await station.send_command("1", "set_game", game)).ok
    assert (await station.send_command("1", "start")).ok
    face = node.boards["1"].face
    for side in (Side.RED, Side.BLACK, Side.RED):
        await asyncio.sleep(0.15)
        face.press(side)
    await web_station.wait_board("1", lambda v: v["state"]["moves"] == {"red": 2, "black": 1})

    await page.click('#boards .card[data-board="1"]')
    await page.select_option("#spare-board", "2")
    spare = page.locator("#f-spare button")
    await spare.click()
    assert await spare.get_attribute("data-armed") == "1"  # the first tap only arms it
    await spare.click()
    await page.wait_for_selector("#log li[data-outcome=ok] >> text=1 → 2")
    views = {v["board"]: v for v in station.board_views()}
    broken, moved = views["1"]["state"], views["2"]["state"]
    assert broken["phase"] == "paused"
    assert moved["game"] == "r1-b1" and moved["red"] == "甲"
    assert (moved["red_ms"], moved["black_ms"]) == (broken["red_ms"], broken["black_ms"])
    assert moved["moves"] == {"red": 2, "black": 1}
    # Black is on move on the spare: starting it runs black's clock.
    assert (await station.send_command("2", "start")).ok
    await web_station.wait_board("2", lambda v: v["state"]["running"] == "black")


async def test_a_dead_boards_game_moves_to_a_spare_with_its_times_estimated(
    page: Any, web_station: WebStation
) -> None:
    """Board 3's Pi died mid-game (its will said ``lost``): it cannot be paused, yet its game
    must go to a spare. The page carries the times of its last state — the running side's as
    its card shows it — says they are an estimate to check, and the spare waits paused."""
    await web_station.node(["2"], mode="idle")
    dead = await web_station.fake_node("node-b", ["3"], answer=False)  # the broker's roster
    await web_station.publish_status(dead, "3", "online")
    last = await web_station.publish_state(
        dead, "3", red="甲", black="乙", red_ms=900_000, black_ms=700_000,
        moves={"red": 12, "black": 12}, running="black",  # equal counts: red's turn by them
    )  # fmt: skip
    await asyncio.sleep(0.05)  # a will is later than the online it ends (by its ts here)
    await web_station.publish_status(dead, "3", "lost")
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="3"][data-online="lost"]')
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')
    await page.click('#boards .card[data-board="3"]')
    await page.select_option("#spare-board", "2")
    spare = page.locator("#f-spare button")
    await spare.click()
    before_ms = int(await page.evaluate("QZ.clock.now()"))
    await spare.click()
    await page.wait_for_selector("#log li[data-outcome=ok] >> text=3 → 2")
    estimate = page.locator("#log li[data-outcome=error]").first
    assert "估算" in (await estimate.text_content() or "")

    await web_station.wait_board("2", lambda v: (v["state"] or {}).get("game") == "r1-b3")
    moved = next(v for v in web_station.station.board_views() if v["board"] == "2")["state"]
    assert moved["phase"] == "ready" or moved["phase"] == "paused", moved
    assert (moved["red"], moved["black"], moved["red_ms"]) == ("甲", "乙", 900_000)
    assert moved["moves"] == {"red": 12, "black": 12}
    # black's clock stands where the dead node left it (its last message; a restarted node
    # would come back from there too): what its card shows, not run on to the tap
    assert before_ms - last["ts"] >= 0
    assert 700_000 - 1_000 <= moved["black_ms"] <= 700_000, moved
    time = page.locator('#boards .card[data-board="3"] .side.black .time')
    shown = await time.text_content()
    await asyncio.sleep(1.2)
    assert shown == await time.text_content() and shown in ("11:40", "11:39"), shown
    assert (await web_station.station.send_command("2", "start")).ok
    await web_station.wait_board("2", lambda v: v["state"]["running"] == "black")


async def test_every_action_shows_its_reply_or_its_timeout(
    page: Any, web_station: WebStation
) -> None:
    await web_station.node(["1", "2"], mode="idle")
    fake = await web_station.fake_node("node-b", ["3"], answer=False)
    await web_station.publish_status(fake, "3", "online")
    await login(page, web_station, lang="en")
    await page.wait_for_selector('#boards .card[data-board="3"]')
    await page.wait_for_selector('#boards .card[data-board="1"]')

    # A refusal: the board has no game to pause.
    await page.click('#boards .card[data-board="1"]')
    await page.click("[data-cmd=pause]")
    refused = page.locator("#log li[data-outcome=refused]")
    await refused.wait_for()
    text = await refused.text_content() or ""
    assert "Board 1" in text and "refused" in text, text
    assert "no game is set" not in text  # the node's own English stays out of the page

    # A time-out: board 3's node never answers.
    await page.click('#boards .card[data-board="3"]')
    await page.click("[data-cmd=resume]")
    await page.locator("#log li[data-outcome=timeout]").wait_for(timeout=5000)

    # Venue-wide: two taps; the start time chosen is sent on the station's clock.
    await page.fill("#start-at", "2031-05-04T09:00:00")
    await page.click("#start-round")
    assert await page.locator("#log li").count() == 2
    await page.click("#start-round")
    await page.locator(
        "#log li:not([data-outcome=sent]) >> text=Start the round @ 2031-05-04 09:00"
    ).wait_for(timeout=5000)
    starts = [c for b, c in fake.commands if c.cmd == "start"]
    assert len(starts) == 1 and starts[0].args["at"] > 1_900_000_000_000


async def test_the_action_log_survives_a_reload(page: Any, web_station: WebStation) -> None:
    """What the arbiter did stays on the page after a reload (an outsider's log emptied)."""
    await web_station.node(["1"], mode="idle")
    await login(page, web_station)
    await page.click('#boards .card[data-board="1"]')
    await page.click('#board-detail [data-cmd="pause"]')  # no game: refused, in words
    await page.wait_for_selector("#log li[data-outcome=refused]")
    said = await page.inner_text("#log li[data-outcome=refused]")
    await page.reload()
    await page.wait_for_selector("#station:not([hidden])")
    assert await page.inner_text("#log li[data-outcome=refused]") == said
