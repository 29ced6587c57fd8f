"""The record page (录谱, issue 29) as a recorder uses it, in Debian's chromium.

A Wulong round (boards 1..10 must be recorded): the published game 柳大华–杨官璘 1982
(tests/support/published_game.py, cited in docs/records.md) entered through the page four
times — the Chinese score sheet typed on board 1, WXF typed on board 2, ICCS typed on board 3,
and by taps on the diagram on board 4. The station's four record.pgn exports carry one and the
same movetext, which Debian's fairy-stockfish (an independent program) replays move for move
to the published final position. A typed illegal move is refused with a sentence in the page's
language and stores nothing; undo takes one move back.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.fairy_stockfish import FAIRY_STOCKFISH, Referee
from support.parts import skip_missing
from support.published_game import CHINESE, FINAL_FEN, ICCS, START_FEN, as_wxf
from support.station import ARBITER, ARBITER_PASSWORD, wait_until
from support.web import login, screenshot, served_station

from clock_service import Side
from clock_service.xiangqi import read_pgn

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

PLAYERS = ["甲", "乙", "丙", "丁", "戊", "己", "庚", "辛"]
PAIRS = "round,board,red,black\n" + "".join(
    f"1,{b},{PLAYERS[2 * b - 2]},{PLAYERS[2 * b - 1]}\n" for b in range(1, 5)
)
COUNT = "n => document.querySelectorAll('#moves li').length === n"
# the page fits its width, the move list does not run sideways, its last move is in view
FITS = """() => {
  const list = document.querySelector('#moves');
  const last = list.lastElementChild.getBoundingClientRect(), box = list.getBoundingClientRect();
  return document.documentElement.scrollWidth <= innerWidth && list.scrollWidth <= list.clientWidth
    && last.bottom <= box.bottom + 1 && last.top >= box.top - 1 && last.right <= innerWidth;
}"""


async def type_moves(page: Any, moves: list[str]) -> None:
    for n, move in enumerate(moves, start=1):
        await page.fill("#move-text", move)
        await page.press("#move-text", "Enter")
        await page.wait_for_function(COUNT, arg=n)


# The board is drawn before the record is read (no pieces): a page is ready for taps once its
# pieces are, so the tests wait for a piece (``button.pc``), not for a square.
async def tap_moves(page: Any, moves: list[str]) -> None:
    for n, move in enumerate(moves, start=1):
        await page.click(f'#xq button[data-sq="{move[:2]}"]')
        await page.wait_for_selector(f'#xq button.dest[data-sq="{move[2:]}"]')
        await page.click(f'#xq button[data-sq="{move[2:]}"]')
        await page.wait_for_function(COUNT, arg=n)


def movetext(pgn: str) -> str:
    return pgn.split("\n\n", 1)[1]


async def test_the_published_game_entered_four_ways_is_one_pgn(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    if not FAIRY_STOCKFISH.exists():
        skip_missing("fairy-stockfish", "apt-get install fairy-stockfish")

    async def shot(name: str) -> None:
        assert await page.evaluate(FITS), f"{name}: the page or its move list runs over"
        await screenshot(page, name)

    async with served_station(broker_factory(), tmp_path, regulation="wulong-2015") as web:
        await web.station.import_players("name\n" + "\n".join(PLAYERS) + "\n")
        await web.station.import_pairings(PAIRS, send=False)
        await login(page, web)
        await page.set_viewport_size({"width": 1024, "height": 768})
        entries = {
            "1": [*CHINESE],
            "2": [as_wxf(m) for m in CHINESE],
            "3": [*ICCS],
        }
        for board, moves in entries.items():
            await page.goto(f"{web.url}/record/{board}?lang=zh")
            await page.wait_for_selector('#xq button.pc[data-sq="e0"]')
            await type_moves(page, moves)
        await page.goto(f"{web.url}/record/4?lang=zh")
        await page.wait_for_selector('#xq button.pc[data-sq="e0"]')
        await tap_moves(page, ICCS)
        assert (await page.text_content("#moves li:last-child .mv")) == CHINESE[-1]
        await shot("record-1024x768-zh")

        # a move for the wrong side, then an illegal one: refused in words, nothing stored
        await page.fill("#move-text", "炮二平五")
        await page.press("#move-text", "Enter")
        await page.wait_for_selector("#msg.err")
        said = await page.text_content("#msg")
        assert "炮二平五" in said and "另一方" in said and "黑方" in said, said
        await page.fill("#move-text", "将５进２")
        await page.press("#move-text", "Enter")
        await page.wait_for_function(
            "() => document.querySelector('#msg').textContent.includes('将５进２')"
        )
        said = await page.text_content("#msg")
        assert "不是黑方此时的合法着法" in said, said
        assert await page.evaluate("document.querySelectorAll('#moves li').length") == len(ICCS)

        # undo takes one back; typing it again gives the same record
        await page.click("#undo")
        await page.wait_for_function(COUNT, arg=len(ICCS) - 1)
        await page.fill("#move-text", ICCS[-1])
        await page.press("#move-text", "Enter")
        await page.wait_for_function(COUNT, arg=len(ICCS))

        # the English page says the same things in English
        await page.goto(f"{web.url}/record/4?lang=en")
        await page.wait_for_function(COUNT, arg=len(ICCS))
        await page.fill("#move-text", "h2e2")
        await page.press("#move-text", "Enter")
        await page.wait_for_selector("#msg.err")
        said = await page.text_content("#msg")
        assert "is not a legal move for Black here" in said, said
        await shot("record-1024x768-en")
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.goto(f"{web.url}/record/4?lang=en")  # a phone opens the page at its size
        await page.wait_for_function(COUNT, arg=len(ICCS))
        await page.fill("#move-text", "h2e2")
        await page.press("#move-text", "Enter")
        await page.wait_for_selector("#msg.err")
        await shot("record-390x844-en")
        await page.goto(f"{web.url}/record/4?lang=zh")
        await page.wait_for_function(COUNT, arg=len(ICCS))
        await shot("record-390x844-zh")

        async with httpx.AsyncClient(base_url=web.url) as client:
            pgns = []
            for board in "1234":
                r = await client.get(f"/api/export/games/r1-b{board}/record.pgn")
                assert r.status_code == 200, r.text
                pgns.append(r.text)
    texts = {movetext(p) for p in pgns}
    assert len(texts) == 1, "the four entries differ"
    games = read_pgn(pgns[3])
    assert [m for m in games[0].record.iccs()] == ICCS
    # the independent referee: every move legal where it stands, the published final position
    moves = re.findall(r"\b[a-i][0-9][a-i][0-9]\b", re.sub(r"\{[^}]*\}", "", texts.pop()))
    assert moves == ICCS
    referee = Referee()
    try:
        for ply, move in enumerate(moves):
            assert move in referee.legal_moves(START_FEN, moves[:ply]), f"ply {ply + 1}: {move}"
        assert referee.fen(START_FEN, moves) == FINAL_FEN
    finally:
        referee.close()


# A legal game of 14 plies (tests/xiangqi/test_counts.py): red checks at plies 5 (炮八平五) and 7
# (车九平六), no other move checks.
CHECKS_GAME = [
    "a0a1", "e9e8", "b2b5", "b9c7", "b5e5", "e8d8", "a1d1",
    "h7d7", "h2h7", "h9i7", "h7h1", "g6g5", "d1d3", "i6i5",
]  # fmt: skip
SHOWN = "() => !document.querySelector('#pairing').hidden"


async def limit_alerts(web: Any) -> list[dict[str, Any]]:
    """The station's move_limit alerts, as the chief reads them."""
    async with httpx.AsyncClient(base_url=web.url, timeout=10) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        assert r.status_code == 200, r.text
        alerts = (await client.get("/api/alerts?limit=100")).json()["alerts"]
    return [a for a in alerts if a["kind"] == "move_limit"]


async def test_a_live_record_meets_the_clock_and_counts_the_natural_move_limit(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    """Meishan 二、1 "自然限着为40回合，提出方的'将军'着数不计": the arbiter starts a count of 4
    moves on board 1 with red as the claimant; a recorder types each move a moment after its
    press. The record page says when the record and the clock differ (a move behind, a move
    ahead). The clock reaches 4 full moves at ply 8; the record, whose red checks at plies 5 and
    7 take their 回合 with them, at ply 12: the move_limit alert comes then, not before, and
    says it counted the record."""
    async with served_station(
        broker_factory(), tmp_path, regulation="meishan-2016", command_timeout_s=3.0
    ) as web:
        node = await web.node(["1"])
        board = node.boards["1"]
        station = web.station
        await station.import_players("name\n甲\n乙\n")
        await station.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=True)
        assert (await station.send_command("1", "start")).ok

        async def press(ply: int) -> None:
            side = Side.RED if ply % 2 == 1 else Side.BLACK
            before = board.clock.moves(side)
            await asyncio.sleep(0.05)
            board.face.press(side)
            await wait_until(lambda: board.clock.moves(side) == before + 1, 5.0, f"press {ply}")

        async def typed(ply: int) -> None:
            await recorder.fill("#move-text", CHECKS_GAME[ply - 1])
            await recorder.press("#move-text", "Enter")
            await recorder.wait_for_function(COUNT, arg=ply)

        # The arbiter starts the count: 4 moves, red claims.
        await login(page, web)
        await page.click('#boards .card[data-board="1"]')
        await page.fill("#f-count input[name=limit]", "4")
        await page.select_option("#f-count select[name=claimant]", "red")
        await page.click("#f-count button")
        await page.wait_for_selector("#log li[data-outcome=ok]")

        recorder = await page.context.new_page()
        await recorder.goto(f"{web.url}/record/1?lang=zh")
        await recorder.wait_for_selector('#xq button.pc[data-sq="e0"]')
        for ply in range(1, 9):
            await press(ply)
            if ply == 1:  # the record a move behind the clock: said on the page
                await recorder.wait_for_function(SHOWN)
                said = str(await recorder.text_content("#pairing"))
                assert "记录 0 着，计时钟按钟 1 次" in said, said
            await typed(ply)
            await recorder.wait_for_function(f"() => !({SHOWN})()")
        # The clock's count is at 4 (the node says reached); the record's at 2: held.
        await wait_until(lambda: len(station.counts.held) == 1, 5.0, "the held count")
        assert await limit_alerts(web) == []
        for ply in range(9, 13):
            await press(ply)
            await typed(ply)
        # ply 12 recorded: 4 回合 counted on the record, the alert is raised
        alert = page.locator('#alerts li[data-kind="move_limit"][data-board="1"]')
        await alert.wait_for()
        said = str(await alert.text_content())
        assert "按棋谱计 4 回合" in said and "提出方将军 2 着不计" in said, said
        (limit,) = await limit_alerts(web)
        assert {k: limit["detail"][k] for k in ("count", "counted", "plies", "checks")} == {
            "count": "record", "counted": 4, "plies": 12, "checks": 2,
        }  # fmt: skip
        assert limit["detail"]["uncounted_checks"] == 2 and limit["detail"]["claimant"] == "red"
        assert not station.counts.held

        # A move typed before its press: the record is a move ahead, said in both languages.
        await typed(13)
        await recorder.wait_for_function(SHOWN)
        said = str(await recorder.text_content("#pairing"))
        assert "记录 13 着，计时钟按钟 12 次" in said, said
        await recorder.click("#lang")
        await recorder.wait_for_function(
            "() => document.querySelector('#pairing').textContent.includes('moves recorded 13')"
        )
        await page.click("#lang")
        await page.wait_for_selector(
            '#alerts li[data-kind="move_limit"] >> text=4 moves counted on the record'
        )


async def test_a_reload_answered_after_a_move_does_not_take_the_move_back(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    """The page reloads the record every 3 s while the recorder types. A reload sent before a
    move and answered after it used to put the record back one move; the next move then went
    with a stale ply and was refused (test_the_published_game... failed so under load). Here
    the reload is held until the move is stored: the page keeps the move, the next one goes."""
    async with served_station(broker_factory(), tmp_path, regulation="wulong-2015") as web:
        await web.station.import_players("name\n" + "\n".join(PLAYERS) + "\n")
        await web.station.import_pairings(PAIRS, send=False)
        await login(page, web)
        await page.goto(f"{web.url}/record/1?lang=zh")
        await page.wait_for_selector('#xq button.pc[data-sq="e0"]')
        held, moved = asyncio.Event(), asyncio.Event()

        async def hold_a_reload(route: Any) -> None:
            if route.request.method != "GET" or held.is_set():
                await route.continue_()
                return
            held.set()
            response = await route.fetch()  # the record as it is now: before the move
            await moved.wait()
            await route.fulfill(response=response)

        await page.route(re.compile(r".*/api/records/1(\?.*)?$"), hold_a_reload)
        await asyncio.wait_for(held.wait(), 10)  # the 3 s reload is on its way
        await type_moves(page, ICCS[:1])
        moved.set()
        await asyncio.sleep(0.5)  # the held reload's answer is in
        assert await page.evaluate(COUNT, 1), "the old answer took the move back"
        await page.unroute(re.compile(r".*/api/records/1(\?.*)?$"))
        await page.fill("#move-text", ICCS[1])
        await page.press("#move-text", "Enter")
        await page.wait_for_function(COUNT, arg=2)
