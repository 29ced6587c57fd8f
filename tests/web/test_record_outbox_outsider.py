"""An outsider recorder tries to lose, duplicate or misplace moves on /record/{board} while the
phone loses the station (docs/records.md "When the phone loses the station").

Written by a tester who read only the documents (helper-26, stop 41): of its fifteen scenarios
these six failed on the first outbox — a kept move stored after moves it never saw, the next
move following the board into its next round, a stored move called refused, the first tab's
move dropped when the QR code was scanned again, a stale tab's kept moves refused with advice
to discard them, and a page opened again offline that showed none of the kept moves. The nine
that passed (an answer lost, undo offline, two tabs, two phones, an illegal kept move, the
English page, leaving the recorder login) overlap tests/web/test_record_outbox.py and were
left out of the suite for its time."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD
from support.web import served_station

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

PLAYERS = ["甲", "乙", "丙", "丁", "戊", "己", "庚", "辛"]
PAIRS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n"
PAIRS2 = "round,board,red,black\n2,1,丙,甲\n2,2,乙,丁\n"
COUNT = "n => document.querySelectorAll('#moves li').length === n"
RECORDS = re.compile(r".*/api/records/1(/.*)?(\?.*)?$")


@contextlib.asynccontextmanager
async def chief(web: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=web.url, timeout=10) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        assert r.status_code == 200, r.text
        client.headers["X-CSRF-Token"] = r.json()["csrf"]
        yield client


async def record(web: Any, board: str = "1", game: str | None = None) -> list[str]:
    async with httpx.AsyncClient(base_url=web.url, timeout=10) as client:
        q = f"?game={game}" if game else ""
        r = await client.get(f"/api/records/{board}{q}")
        assert r.status_code == 200, r.text
        return [m["iccs"] for m in r.json()["moves"]]


async def key_link(web: Any, board: str = "1") -> str:
    async with chief(web) as c:
        r = await c.get("/api/record-keys")
        assert r.status_code == 200, r.text
        for row in r.json()["keys"]:
            if str(row["board"]) == board:
                return str(row["path"])
    raise AssertionError(r.text)


@contextlib.asynccontextmanager
async def round1(broker_factory: Any, tmp_path: Path) -> AsyncIterator[Any]:
    async with served_station(broker_factory(), tmp_path, regulation="wulong-2015") as web:
        await web.station.import_players("name\n" + "\n".join(PLAYERS) + "\n")
        await web.station.import_pairings(PAIRS, send=False)
        yield web


async def open_recorder(page: Any, web: Any, lang: str = "zh", board: str = "1") -> None:
    link = await key_link(web, board)
    sep = "&" if "?" in link else "?"
    await page.goto(f"{web.url}{link}{sep}lang={lang}")
    await page.wait_for_selector('#xq button.pc[data-sq="e0"]')


async def typed(page: Any, move: str, n: int | None = None) -> None:
    await page.fill("#move-text", move)
    await page.press("#move-text", "Enter")
    if n is not None:
        await page.wait_for_function(COUNT, arg=n)


# the words the recorder reads: visible text outside notation (translate=no) and player names
WORDS = """() => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode, el = n.parentElement;
    if (!n.textContent.trim() || !el.checkVisibility()) continue;
    if (el.closest('[translate=no], #players, script, style')) continue;
    out.push(n.textContent.trim());
  }
  return out.join(' | ');
}"""


async def chief_post(web: Any, path: str, body: dict[str, Any]) -> httpx.Response:
    async with chief(web) as c:
        return await c.post(path, json=body)


async def wait_record(
    web: Any, want: list[str], game: str | None = None, t: float = 12
) -> list[str]:
    got: list[str] = []
    for _ in range(int(t / 0.25)):
        got = await record(web, game=game)
        if got == want:
            return got
        await asyncio.sleep(0.25)
    return got


async def outbox(page: Any) -> str:
    return str(await page.evaluate("localStorage.getItem('qz.record.outbox.1')"))


async def test_offline_moves_typed_tapped_reloaded_arrive_once_in_order(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    """Wi-Fi drops after move 1: an ICCS move, a tap, a Chinese move (not first: the diagram
    waits); the recorder closes the tab and opens the QR link again while the station is still
    away; the station comes back: the four moves once, in order."""
    async with round1(broker_factory, tmp_path) as web:
        await open_recorder(page, web)
        await typed(page, "h2e2", 1)
        await page.context.set_offline(True)
        await typed(page, "h9g7", 2)
        await page.click('#xq button[data-sq="b0"]')
        await page.click('#xq button[data-sq="c2"]')
        await page.wait_for_function(COUNT, arg=3)
        await typed(page, "马２进３", 4)
        words = await page.evaluate(WORDS)
        assert "本机保存了 3 着" in words, words
        # the tab is closed; once the Wi-Fi is back the page is opened again but the
        # station's answers still do not arrive
        ctx = page.context
        await page.close()
        await ctx.set_offline(False)
        again = await ctx.new_page()
        await again.route(RECORDS, lambda route: route.abort())
        link = await key_link(web)
        await again.goto(f"{web.url}{link}&lang=zh")
        await asyncio.sleep(3)
        shown = await again.evaluate(WORDS)
        kept = await again.locator("#moves li.queued").count()
        await again.screenshot(path="/tmp/outsider-reopened.png")
        await asyncio.sleep(4)
        assert await record(web) == ["h2e2"]
        await again.unroute(RECORDS)
        assert await wait_record(web, ["h2e2", "h9g7", "b0c2", "b9c7"]) == [
            "h2e2",
            "h9g7",
            "b0c2",
            "b9c7",
        ]
        await again.wait_for_function(COUNT, arg=4)
        await asyncio.sleep(4)
        assert await record(web) == ["h2e2", "h9g7", "b0c2", "b9c7"]
        assert await again.locator("#moves li.queued").count() == 0
        # the kept moves arrived, but while the station was away the reopened page showed none
        # of them (no diagram, no list): a recorder would think them lost and type them again
        assert kept == 3, f"the reopened page showed {kept} kept moves: {shown}"


async def test_a_kept_move_never_lands_after_moves_it_never_saw(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    """Phone offline after 炮二平五 马８进７ keeps 马八进七. Meanwhile the arbiter corrects
    the record at the station: takes 马８进７ back and enters 马２进３ (the paper sheet's move).
    The record still has 2 moves, but not the 2 the phone saw: its kept move must be refused
    (docs: "it never lands ... after moves it never saw"), not stored after 马２进３."""
    async with round1(broker_factory, tmp_path) as web:
        await open_recorder(page, web)
        await typed(page, "h2e2", 1)
        await typed(page, "h9g7", 2)
        await page.context.set_offline(True)
        await typed(page, "马八进七", 3)
        r = await chief_post(web, "/api/records/1/undo", {"ply": 2})
        assert r.status_code == 200, r.text
        r = await chief_post(web, "/api/records/1/moves", {"move": "b9c7", "ply": 1})
        assert r.status_code == 200, r.text
        await page.context.set_offline(False)
        await asyncio.sleep(8)
        got = await record(web)
        words = await page.evaluate(WORDS)
        assert got == ["h2e2", "b9c7"], f"record {got}; page says: {words}"


async def test_a_second_recorder_moved_on_after_a_lost_answer(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    """The phone's 炮二平五 is stored but its answer lost; before the phone is back, the arbiter
    enters black's reply at the station. The phone's repeat must not be shown as refused (it is
    stored) and nothing doubles."""
    async with round1(broker_factory, tmp_path) as web:
        await open_recorder(page, web)

        async def drop(route: Any) -> None:
            if route.request.method == "POST":
                await route.fetch()
            await route.abort()

        await page.route(RECORDS, drop)
        await typed(page, "h2e2", 1)
        r = await chief_post(web, "/api/records/1/moves", {"move": "h9g7", "ply": 1})
        assert r.status_code == 200, r.text
        await page.unroute(RECORDS)
        await asyncio.sleep(7)
        words = await page.evaluate(WORDS)
        assert await record(web) == ["h2e2", "h9g7"]
        assert await page.evaluate(COUNT, 2), words
        assert "未接受" not in words and "放弃" not in words, words


async def test_the_next_round_imported_while_moves_wait_the_next_move_follows_them(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    """As above; back online, the recorder types black's next move of the game they are
    recording: it must follow the moves they entered (round 1), not open round 2's game."""
    async with round1(broker_factory, tmp_path) as web:
        await open_recorder(page, web)
        await typed(page, "h2e2", 1)
        await typed(page, "h9g7", 2)
        await page.context.set_offline(True)
        await typed(page, "b0c2", 3)
        await web.station.import_pairings(PAIRS2, send=False)
        await page.context.set_offline(False)
        await asyncio.sleep(6)
        await typed(page, "马２进３")  # black's reply to 马八进七, the next of this game
        await typed(page, "h0g2")  # red's next
        await asyncio.sleep(2)
        r1, r2 = await record(web, game="r1-b1"), await record(web, game="r2-b1")
        words = await page.evaluate(WORDS)
        await page.screenshot(path="/tmp/outsider-round2.png")
        print("NEXTMOVE", r1, r2, words)
        assert r2 == [] and r1[:3] == ["h2e2", "h9g7", "b0c2"], f"r1 {r1}, r2 {r2}: {words}"


async def test_scanning_the_qr_again_keeps_the_first_tabs_move(
    broker_factory: Any, tmp_path: Path, browser: Any
) -> None:
    """The recorder scans the QR code a second time (a new tab, a new recorder session), then
    goes back to the first tab and types a move there."""
    async with round1(broker_factory, tmp_path) as web:
        ctx = await browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
        try:
            a = await ctx.new_page()
            await open_recorder(a, web)
            b = await ctx.new_page()
            await open_recorder(b, web)
            await a.bring_to_front()
            await typed(a, "h2e2")
            await asyncio.sleep(4)
            words = await a.evaluate(WORDS)
            kept = await outbox(a)
            got = await record(web)
            assert got == ["h2e2"] or "h2e2" in kept, f"record {got}, kept {kept}: {words}"
        finally:
            await ctx.close()


async def test_kept_moves_of_a_tab_whose_session_was_replaced(
    broker_factory: Any, tmp_path: Path, browser: Any
) -> None:
    """Tab A keeps 2 moves offline. When the Wi-Fi is back the recorder scans the QR again
    (tab B, a new session) before A sends, and closes B at once. A's moves must still arrive,
    or A must say what to do; never wait forever in silence."""
    async with round1(broker_factory, tmp_path) as web:
        ctx = await browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
        try:
            a = await ctx.new_page()
            await open_recorder(a, web)
            await ctx.set_offline(True)
            await typed(a, "h2e2", 1)
            await typed(a, "h9g7", 2)
            await a.route(RECORDS, lambda route: route.abort())
            await ctx.set_offline(False)
            b = await ctx.new_page()
            await b.route(RECORDS, lambda route: route.abort())
            link = await key_link(web)
            await b.goto(f"{web.url}{link}&lang=zh")
            await asyncio.sleep(1)
            await b.close()
            await a.unroute(RECORDS)
            got = await wait_record(web, ["h2e2", "h9g7"], t=10)
            words = await a.evaluate(WORDS)
            if got != ["h2e2", "h9g7"]:
                await a.reload()
                await a.wait_for_selector('#xq button.pc[data-sq="e0"]')
                after_reload = await wait_record(web, ["h2e2", "h9g7"], t=8)
                print("REPLACED", got, words, "AFTER RELOAD", after_reload)
            assert got == ["h2e2", "h9g7"], f"record {got}; tab A says: {words}"
        finally:
            await ctx.close()
