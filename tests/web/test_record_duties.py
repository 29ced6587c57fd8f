"""Issue 29's acceptance, the arbiter's side of the records (录谱): a Wulong round through the real
station — a private Mosquitto, three in-process nodes with simulated faces (the players), the
station's HTTP API for the pairings, the results and the records, and the arbiter page in
chromium for the rulings.

Wulong 2015 四: "要求前10台和大师所在台次必须录谱，由胜方录谱，和棋由红方录谱，
每缺录一次记责任人犯规一次".
Twelve boards: 1–10 must be recorded, board 11 need not, board 12 must (a master plays there).
Some records are entered through rec-core's POST routes, some are not. When round 2 starts (the
grace's end) each missing one raises the pending ``not_recording`` foul against the winner (red
on a draw); Wulong gives the chief no consent, so the arbiter excuses one by 驳回 and confirms
the others; a record entered after the grace shows as late; the standings — computed here from
the seed's rule (tournament/seed_rules.py), not by the station — count the confirmed fouls; and
a restarted station raises nothing twice. Meishan 三、3
("若因故不愿录谱或者改时录谱的须征得裁判长同意") is the second test: the chief's consent (a button
on the page) clears the duty, and a confirmed foul costs 1 累进分.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.broker import STANDARD_NODES
from support.record_hall import (
    MASTER,
    WULONG_RESULTS,
    games_of,
    hall_web,
    open_hall,
    record_alerts_at_least,
    responsible,
    rule_on_page,
    seated,
    shown,
    swapped,
    table,
    until,
)
from support.station import ARBITER
from support.web import login
from tournament.seed_rules import SEEDS, rank

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

# The first moves of a game (炮二平五 马８进７ 马八进七 马２进３) in the three notations
OPENING = ["炮二平五", "h9g7", "马八进七", "H2+3"]
MORE = ["车九平八", "车１平２"]  # two moves more than the clock's four presses


async def test_a_wulong_round_missing_records_are_fouls_of_the_responsible_player(
    page: Any, broker_factory: Callable[..., Any], tmp_path: Path
) -> None:
    players = [f"棋手{n:02d}" for n in range(1, 24)] + [MASTER]
    players[22], players[23] = MASTER, players[22]  # the master plays red on board 12
    pairs = seated(players, 12)
    assert pairs[11][0] == MASTER
    nodes = list(STANDARD_NODES)
    async with open_hall(broker_factory(), tmp_path, "wulong-2015", nodes, players,
                         {MASTER: "master"}) as hall:  # fmt: skip
        await hall.play_round(1, pairs, WULONG_RESULTS)
        # Boards 1–3 recorded in full (board 3 with two moves the clock never saw), board 4
        # only in part, the others not at all.
        for b in ("1", "2"):
            await hall.record(b, OPENING)
        await hall.record("3", OPENING + MORE)
        await hall.record("4", OPENING[:2])
        r = await hall.post("/api/records/11/moves", {"move": "h2e2", "ply": 0})
        assert (r.status_code, r.json()["code"]) == (409, "record_not_required")

        # Within the grace: the top 10 and the master's board, who records each, none missing.
        duties = await hall.duties(1)
        assert sorted(duties, key=int) == [*map(str, range(1, 11)), "12"]
        for b, d in duties.items():
            red, black = pairs[int(b) - 1]
            assert d["responsible"]["player"] == responsible(red, black, WULONG_RESULTS[b]), b
            assert d["because"] == ("tag" if b == "12" else "top")
            assert d["state"] == ("recorded" if b in ("1", "2", "3") else "due"), (b, d)
            assert d["presses"] == 4 and d["alert"] is None
        assert duties["4"]["plies"] == 2
        # The record meets the clock: never merged, the disagreement said (Build 3).
        pairing = {b: {**duties[b]["pairing"]} for b in ("1", "3", "4")}
        assert [p.pop("matched") for p in pairing.values()] == [True, False, False]
        assert pairing == {
            "1": {"verdict": "matched", "moves": 4, "presses": 4, "disagreement": None},
            "3": {"verdict": "more", "moves": 6, "presses": 4, "disagreement": None},
            "4": {"verdict": "fewer", "moves": 2, "presses": 4, "disagreement": None},
        }
        # Wulong gives the chief no consent: refused, nothing stored.
        r = await hall.post("/api/record-duties/r1-b7/consent", {"allow": True})
        assert (r.status_code, r.json()["code"]) == (409, "no_consent_rule")
        assert (await hall.duties(1))["7"]["consent"] is None
        assert await hall.record_alerts() == {}

        # Round 2 starts: the grace ends, every missing record raises its pending foul.
        await hall.play_round(2, swapped(pairs), {})
        missing = ["4", "5", "6", "7", "8", "9", "10", "12"]
        await until(lambda: record_alerts_at_least(hall, len(missing)), "the record_missing alerts")
        alerts = await hall.record_alerts()
        assert sorted(alerts, key=int) == missing
        for b, a in alerts.items():
            red, black = pairs[int(b) - 1]
            winner = WULONG_RESULTS[b]
            assert (a["status"], a["game"], a["detail"]["reason"]) == (
                "open",
                f"r1-b{b}",
                "not_recording",
            )
            assert a["side"] == (winner if winner is not None else "red"), b
            assert a["detail"]["player"] == responsible(red, black, winner)
        # A record entered after the grace shows as late; its foul is still the arbiter's.
        await hall.record("5", OPENING, game="r1-b5")
        duties = await hall.duties(1)
        assert duties["5"]["state"] == "late" and duties["4"]["state"] == "missing"
        assert duties["1"]["state"] == "recorded"

        # The arbiter page: the records section names who records each board; the rulings.
        await login(page, hall_web(hall))
        await page.wait_for_selector('#duty[data-round="2"]')
        await page.click("#duty-prev")
        await page.wait_for_selector('#duty[data-round="1"]')
        row = page.locator('#duty-rows tr[data-board="12"]')
        await row.wait_for()
        assert await row.get_attribute("data-state") == "missing"
        assert await row.get_attribute("data-responsible") == pairs[11][1]
        assert "大师所在台次" in str(await row.text_content())
        assert await page.get_attribute('#duty-rows tr[data-board="5"]', "data-state") == "late"
        # A record that disagrees with the clock is marked on its row, recorded or not.
        for b, verdict in (("1", "matched"), ("3", "more"), ("4", "fewer")):
            assert (
                await page.get_attribute(f'#duty-rows tr[data-board="{b}"]', "data-pairing")
                == verdict
            )
        warned = page.locator("#duty-rows .duty-pairing")
        assert await page.locator('#duty-rows tr[data-board="1"] .duty-pairing').count() == 0
        assert "比按钟多 2 着" in str(
            await page.text_content('#duty-rows tr[data-board="3"] .duty-pairing')
        )
        assert "比按钟少 2 着" in str(
            await page.text_content('#duty-rows tr[data-board="4"] .duty-pairing')
        )
        assert await warned.count() == 2  # boards 3 and 4; none where nothing is recorded
        # The records to download: each recorded game's PGN, and the round's in one file.
        link = page.locator('#duty-rows tr[data-board="1"] a.duty-pgn')
        assert await link.get_attribute("href") == "/api/export/games/r1-b1/record.pgn"
        assert await page.locator('#duty-rows tr[data-board="6"] a.duty-pgn').count() == 0
        whole = page.locator("#duty-pgn-round")
        assert await whole.get_attribute("href") == "/api/export/rounds/1/records.pgn"
        assert "下载本轮全部棋谱" in str(await whole.text_content())
        r = await page.request.get(hall.station.http_url + "/api/export/rounds/1/records.pgn")
        boards = re.findall(r'\[Board "(\d+)"\]', await r.text())
        assert boards == ["1", "2", "3", "4", "5"], boards
        await page.click("#lang")
        await page.wait_for_function(
            """() => document.querySelector('#duty-rows tr[data-board="3"] .duty-pairing')
                 .textContent.includes("2 more than the clock's presses")"""
        )
        text = str(await page.text_content('#duty-rows tr[data-board="4"] .duty-pairing'))
        assert "2 fewer than the clock's presses" in text, text
        await page.click("#lang")
        await page.wait_for_function(
            """() => document.querySelector('#duty-rows tr[data-board="3"] .duty-pairing')
                 .textContent.includes('比按钟多')"""
        )
        assert await page.locator('#duty-rows button[data-action="consent"]').count() == 0
        alert_text = await page.text_content(
            '#alerts li[data-kind="record_missing"][data-board="12"]'
        )
        assert "缺录棋谱" in str(alert_text) and pairs[11][1] in str(alert_text)
        assert "第1轮" in str(alert_text)  # three alike rows said no round (an outsider chief)
        await rule_on_page(page, "6", "dismiss")  # excused by the arbiter
        confirmed = [b for b in missing if b != "6"]
        for b in confirmed:
            await rule_on_page(page, b, "confirm")
        alerts = await hall.record_alerts()
        assert {b: a["status"] for b, a in alerts.items()} == {
            b: "dismissed" if b == "6" else "confirmed" for b in missing
        }
        assert all(a["by"] == ARBITER for a in alerts.values())

        # The standings after round 1 count the confirmed fouls, by the seed's rule.
        fouls: dict[str, int] = {}
        for b in confirmed:
            red, black = pairs[int(b) - 1]
            who = responsible(red, black, WULONG_RESULTS[b])
            fouls[who] = fouls.get(who, 0) + 1
        expected = rank(
            SEEDS["wulong-2015"], games_of(1, pairs, WULONG_RESULTS, fouls), players, last=1
        )
        standings = (await hall.get("/api/standings?round=1"))["standings"]
        assert shown(standings) == table(expected)
        assert sum(r["fouls"] for r in standings) == len(confirmed)
        per_player = (await hall.get("/api/fouls"))["players"]
        assert {p: c["confirmed"] for p, c in per_player.items() if c["confirmed"]} == fouls

        # The winner of board 4 scans the board's QR code after round 2 started: the link names
        # no game, the page shows round 2's game and offers round 1's, whose record is due.
        keys = (await hall.get("/api/record-keys?round=2"))["keys"]
        path = next(k["path"] for k in keys if k["board"] == "4")
        phone = await page.context.browser.new_context(bypass_csp=True)
        try:
            mobile = await phone.new_page()
            await mobile.goto(hall.station.http_url + path + "&lang=zh")
            await mobile.wait_for_selector("#earlier:not([hidden])")
            assert "第2轮" in str(await mobile.text_content("#players"))
            offered = str(await mobile.text_content("#earlier"))
            assert "本台第1轮" in offered and "已录 2 着，按钟 4 次" in offered, offered
            await mobile.click("#lang")
            await mobile.wait_for_selector("#earlier >> text=Round 1's record of this board")
            await mobile.click("#lang")
            await mobile.click("#earlier-go")
            await mobile.wait_for_function(
                "() => document.querySelectorAll('#moves li').length === 2"
            )
            assert "第1轮" in str(await mobile.text_content("#players"))
            for n, move in enumerate(OPENING[2:], start=3):
                await mobile.fill("#move-text", move)
                await mobile.press("#move-text", "Enter")
                await mobile.wait_for_function(
                    "n => document.querySelectorAll('#moves li').length === n", arg=n
                )
            assert await mobile.locator("#pairing").is_hidden()  # 4 moves, 4 presses
            await mobile.goto(hall.station.http_url + path + "&lang=zh")
            await mobile.wait_for_selector('#xq button.pc[data-sq="e0"]')
            await mobile.wait_for_function("() => document.querySelector('#players').textContent")
            assert await mobile.locator("#earlier").is_hidden()  # nothing due any more
        finally:
            await phone.close()
        assert (await hall.duties(1))["4"]["state"] == "late"

        # A restart decides nothing again: the same alerts, no new one.
        before = await hall.record_alerts()
        await page.goto("about:blank")  # the page would poll the stopped station
        await hall.restart()
        await asyncio.sleep(2.5)  # the duty sweep runs every second
        assert await hall.record_alerts() == before
        assert (await hall.get("/api/standings?round=1"))["standings"] == standings


async def test_meishan_the_chiefs_consent_clears_the_duty(
    page: Any, broker_factory: Callable[..., Any], tmp_path: Path
) -> None:
    """Meishan: the top 2 boards; the chief allows board 2's record to be left (before the grace:
    no foul) and, in round 2, board 1's after its foul was raised (the alert is closed); board 1's
    missing record of round 1 is confirmed and costs its red player 1 累进分
    (犯规1次，并扣累进分1分)."""
    players = [f"选手{n}" for n in range(1, 9)]
    pairs = seated(players, 4)
    results: dict[str, str | None] = {"1": "red", "2": None, "3": "black", "4": "red"}
    async with open_hall(broker_factory(), tmp_path, "meishan-2016", ["node-a", "node-b"],
                         players, {}) as hall:  # fmt: skip
        await hall.play_round(1, pairs, results)
        duties = await hall.duties(1)
        assert sorted(duties) == ["1", "2"]
        await login(page, hall_web(hall))
        button = page.locator('#duty-rows tr[data-board="2"] button[data-action="consent"]')
        await button.evaluate("b => b.click()")
        await page.wait_for_selector('#duty-rows tr[data-board="2"][data-state="allowed"]')
        assert (await hall.duties(1))["2"]["consent"]["by"] == ARBITER

        await hall.play_round(2, swapped(pairs), results)
        await until(lambda: record_alerts_at_least(hall, 1), "board 1's record_missing alert")
        await asyncio.sleep(1.5)  # a second sweep: still only board 1's
        alerts = await hall.record_alerts()
        assert list(alerts) == ["1"] and alerts["1"]["side"] == "red"
        # after the grace the consent cannot be withdrawn
        r = await hall.post("/api/record-duties/r1-b2/consent", {"allow": False})
        assert (r.status_code, r.json()["code"]) == (409, "grace_over")
        await rule_on_page(page, "1", "confirm")
        # the foul ruled: no consent for it any more
        r = await hall.post("/api/record-duties/r1-b1/consent", {"allow": True})
        assert (r.status_code, r.json()["code"]) == (409, "already_ruled")

        # Round 3 starts: round 2's board 1 (a win by red: 选手2) and board 2 (a draw: red 选手4)
        await hall.play_round(3, pairs, {})
        await until(lambda: record_alerts_at_least(hall, 2, 2), "round 2's record_missing alerts")
        await page.wait_for_selector('#duty[data-round="3"]')  # the section follows the round
        await page.click("#duty-prev")
        await page.wait_for_selector('#duty[data-round="2"]')
        row = page.locator('#duty-rows tr[data-board="1"][data-alert="open"]')
        await row.locator('button[data-action="consent"]').evaluate("b => b.click()")
        await page.wait_for_selector('#duty-rows tr[data-board="1"][data-state="allowed"]')
        r2 = {a["game"]: a for a in (await hall.get("/api/alerts?limit=500"))["alerts"]
              if a["kind"] == "record_missing"}  # fmt: skip
        assert r2["r2-b1"]["status"] == "cleared" and r2["r2-b1"]["detail"]["cleared"] == "consent"
        assert r2["r2-b2"]["status"] == "open" and r2["r2-b2"]["side"] == "red"
        cleared = page.locator(f'#alerts li[data-id="{r2["r2-b1"]["id"]}"]')
        assert await cleared.count() == 0  # settled: off the list of what waits

        # The section in English: no Chinese but the players' names.
        await page.click("#lang")
        await page.wait_for_selector('#duty-rows tr[data-board="1"] >> text=Allowed by the chief')
        words = str(await page.text_content("#duty"))
        for name in players:
            words = words.replace(name, "")
        assert not re.search(r"[\u3400-\u9fff]", words), words
        assert "Top 2 boards" in words and "Missing" in words
        # On a phone the section fits the screen: its table scrolls in its panel, the page
        # never sideways (an outsider's page was 432 px wide at 390, the consent buttons
        # spilling over the boards)
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.wait_for_timeout(200)
        width = await page.evaluate("document.scrollingElement.scrollWidth")
        wide = await page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > 391 && e.getClientRects().length)
            .slice(0, 8).map((e) => e.tagName + '#' + e.id + '.' + e.className + ' ' +
                Math.round(e.getBoundingClientRect().right))""")
        assert width <= 390, (width, wide)

        fouls = {pairs[0][0]: 1}  # round 1 board 1: red won and recorded nothing
        games = games_of(1, pairs, results, fouls) + games_of(2, swapped(pairs), results, {})
        expected = rank(SEEDS["meishan-2016"], games, players, last=2)
        standings = (await hall.get("/api/standings?round=2"))["standings"]
        assert shown(standings) == table(expected)
        mine = next(r for r in standings if r["player"] == pairs[0][0])
        assert mine["fouls"] == 1
