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
import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.broker import STANDARD_NODES
from support.node import node_config, running_node
from support.station import ARBITER, ARBITER_PASSWORD, station_config
from support.web import login
from tournament.seed_rules import SEEDS, Game, rank

from clock_service import Side
from venue_station.web.web_server import StationWithWeb

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

# The first moves of a game (炮二平五 马８进７ 马八进七 马２进３) in the three notations
OPENING = ["炮二平五", "h9g7", "马八进七", "H2+3"]
MORE = ["车九平八", "车１平２"]  # two moves more than the clock's four presses
MASTER = "大师甲"


class Hall:
    """The station (restartable on its own database), the nodes, an HTTP client as the chief."""

    def __init__(self, broker: Any, tmp: Path, regulation: str) -> None:
        self.broker, self.tmp, self.regulation = broker, tmp, regulation
        self.config = station_config(tmp, broker, regulation=regulation, command_timeout_s=3.0)
        self.station: Any = None
        self.client: httpx.AsyncClient | None = None
        self.csrf: dict[str, str] = {}
        self.nodes: dict[str, Any] = {}
        self.stack = contextlib.AsyncExitStack()

    async def start(self) -> None:
        self.station = StationWithWeb(self.config)
        await self.station.start()
        self.client = httpx.AsyncClient(base_url=self.station.http_url, timeout=20)
        r = await self.client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        assert r.status_code == 200, r.text
        self.csrf = {"X-CSRF-Token": r.json()["csrf"]}

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        await self.station.stop()

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def post(self, path: str, body: Any = None, **kw: Any) -> httpx.Response:
        assert self.client is not None
        return await self.client.post(path, json=body, headers=self.csrf, **kw)

    async def get(self, path: str) -> Any:
        assert self.client is not None
        r = await self.client.get(path)
        assert r.status_code == 200, (path, r.text)
        return r.json()

    def board(self, board: str) -> Any:
        return next(n.boards[board] for n in self.nodes.values() if board in n.boards)

    async def press(self, board: str, side: Side) -> None:
        clock = self.board(board).clock
        before = clock.moves(side)
        self.board(board).face.press(side)
        await until(lambda: clock.moves(side) == before + 1, f"board {board}: {side} pressed")

    async def play_round(
        self, round_no: int, pairs: list[tuple[str, str]], results: dict[str, str | None]
    ) -> None:
        """Import and send the round, start it, two moves a side, enter the results."""
        text = "round,board,red,black\n" + "".join(
            f"{round_no},{b},{red},{black}\n" for b, (red, black) in enumerate(pairs, 1)
        )
        r = await self.post("/api/pairings?send=1", content=text.encode())
        assert r.status_code == 200, r.text
        r = await self.post("/api/venue/cmd", {"cmd": "start", "args": {}})
        assert r.status_code == 200, r.text
        for b in results:
            await until(lambda b=b: self.board(b).snapshot().phase == "running", f"{b} running")
        for b in results:
            for _ in range(2):
                await self.press(b, Side.RED)
                await self.press(b, Side.BLACK)
        for b, winner in results.items():
            r = await self.post(
                f"/api/boards/{b}/cmd",
                {"cmd": "result", "args": {"winner": winner, "reason": "arbiter"}},
            )
            assert r.status_code == 200, r.text

    async def record(self, board: str, moves: list[str], *, game: str | None = None) -> None:
        for ply, move in enumerate(moves):
            body: dict[str, Any] = {"move": move, "ply": ply}
            if game is not None:
                body["game"] = game
            r = await self.post(f"/api/records/{board}/moves", body)
            assert r.status_code == 200, (board, move, r.text)

    async def duties(self, round_no: int) -> dict[str, dict[str, Any]]:
        view = await self.get(f"/api/record-duties?round={round_no}")
        return {d["board"]: d for d in view["duties"]}

    async def record_alerts(self, round_no: int = 1) -> dict[str, dict[str, Any]]:
        """board -> the record_missing alert of its game of ``round_no``."""
        alerts = (await self.get("/api/alerts?limit=500"))["alerts"]
        return {
            a["board"]: a
            for a in alerts
            if a["kind"] == "record_missing" and a["game"] == f"r{round_no}-b{a['board']}"
        }


async def until(predicate: Callable[[], Any], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def open_hall(
    broker: Any,
    tmp: Path,
    regulation: str,
    nodes: list[str],
    players: list[str],
    tags: dict[str, str],
) -> Any:
    """The station and the nodes named, the players imported (``tags``: name -> tags)."""
    hall = Hall(broker, tmp, regulation)
    await hall.start()
    try:
        async with hall.stack:
            for node in nodes:
                config = node_config(
                    broker, node, STANDARD_NODES[node], tmp / node, regulation=regulation
                )
                hall.nodes[node] = await hall.stack.enter_async_context(running_node(config))
            csv = "name,tags\n" + "".join(f"{p},{tags.get(p, '')}\n" for p in players)
            r = await hall.post("/api/players", content=csv.encode())
            assert r.status_code == 200, r.text
            yield hall
    finally:
        await hall.stop()


def seated(players: list[str], boards: int) -> list[tuple[str, str]]:
    return [(players[2 * b], players[2 * b + 1]) for b in range(boards)]


def swapped(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(black, red) for red, black in pairs]


def responsible(red: str, black: str, winner: str | None) -> str:
    """The seeds' rule: 由胜方录谱，和棋由红方录谱."""
    return black if winner == "black" else red


def games_of(
    round_no: int, pairs: list[tuple[str, str]], results: dict[str, str | None],
    fouls: dict[str, int],
) -> list[Game]:  # fmt: skip
    out = []
    for b, winner in results.items():
        red, black = pairs[int(b) - 1]
        out.append(
            Game(
                round=round_no, red=red, black=black, result=winner or "draw",
                red_fouls=fouls.get(red, 0), black_fouls=fouls.get(black, 0),
            )
        )  # fmt: skip
    return out


def table(rows: list[Any]) -> list[tuple[str, int, int, int, int, int]]:
    return [(r.player, r.points, r.progressive, r.wins, r.fouls, r.black_games) for r in rows]


def shown(rows: list[dict[str, Any]]) -> list[tuple[str, int, int, int, int, int]]:
    keys = ("player", "points", "progressive", "wins", "fouls", "black_games")
    return [tuple(r[k] for k in keys) for r in rows]  # type: ignore[misc]


async def rule_on_page(page: Any, board: str, action: str) -> None:
    """Tap 确认 / 驳回 on the open record_missing alert of ``board``, wait until it is ruled."""
    row = page.locator(f'#alerts li[data-kind="record_missing"][data-board="{board}"]')
    await row.locator(f'button[data-action="{action}"]').wait_for()
    alert_id = await row.first.get_attribute("data-id")
    await row.first.locator(f'button[data-action="{action}"]').evaluate("b => b.click()")
    await page.wait_for_function(
        f"""() => {{ const r = document.querySelector('#alerts li[data-id="{alert_id}"]');
           return !r || !r.querySelector('button[data-action="{action}"]'); }}"""
    )


WULONG_RESULTS: dict[str, str | None] = {
    "1": "red", "2": "black", "3": None, "4": "red", "5": "black", "6": None,
    "7": "red", "8": "black", "9": "red", "10": None, "11": "red", "12": "black",
}  # fmt: skip


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
        await until(lambda: _count(hall, len(missing)), "the record_missing alerts")
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
            await mobile.wait_for_selector('#xq button[data-sq="e0"]')
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


async def _count(hall: Hall, n: int, round_no: int = 1) -> bool:
    return len(await hall.record_alerts(round_no)) >= n


def hall_web(hall: Hall) -> Any:
    """What support.web.login needs of a served station: its URL."""

    class _Web:
        url = hall.station.http_url

    return _Web()


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
        await until(lambda: _count(hall, 1), "board 1's record_missing alert")
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
        await until(lambda: _count(hall, 2, 2), "round 2's record_missing alerts")
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

        fouls = {pairs[0][0]: 1}  # round 1 board 1: red won and recorded nothing
        games = games_of(1, pairs, results, fouls) + games_of(2, swapped(pairs), results, {})
        expected = rank(SEEDS["meishan-2016"], games, players, last=2)
        standings = (await hall.get("/api/standings?round=2"))["standings"]
        assert shown(standings) == table(expected)
        mine = next(r for r in standings if r["player"] == pairs[0][0])
        assert mine["fouls"] == 1
