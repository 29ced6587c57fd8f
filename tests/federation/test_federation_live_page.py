"""The public live-clock page (issue 18) in chromium against a real nats-server from the generated
centre config: states published into the FED account appear on the page grouped by venue and
the running clock ticks; bad input is ignored and counted; the page's side cannot publish."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
import uvicorn
from support.fed_events import Venue
from support.nats import HUB_USER, NatsCentre

from broker_config import free_port
from federation_hub.store import HubStore
from federation_hub.web import LiveConfig, build_app

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def ws_url(centre: NatsCentre) -> str:
    return f"ws://127.0.0.1:{centre.nodes[0].ws_port}"


def snapshot(board: str, seq: int = 1, **kw: Any) -> dict[str, Any]:
    state = {
        "v": 1, "board": board, "node": "pi-1", "session": 1, "seq": seq, "ts": wall_ms(),
        "game": f"r1-b{board}", "tc": "30m+5s", "phase": "running", "running": "red",
        "red_ms": 600_000, "black_ms": 540_000, "moves": {"red": 3, "black": 3},
        "flag": None, "fouls": {"red": 0, "black": 0}, "result": None,
        "red": "张三", "black": "李四",
    }  # fmt: skip
    state.update(kw)
    return state


@asynccontextmanager
async def hub_web(
    tmp: Path, live: LiveConfig, venue: Venue | None = None, names: dict[str, str] | None = None
) -> AsyncIterator[str]:
    """The hub's page/API (no consumer: the pages need none) on a free port, with a venue's
    reports and its station's decisions."""
    store = await HubStore.open(f"sqlite:///{tmp / 'hub.db'}")
    if venue is not None:
        await venue.store_in(store)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            build_app(store, dict, live=live, names=names),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="off",
        )
    )
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        await store.close()


async def publish_until(
    fed: nats.NATS, subject: str, body: dict[str, Any], seen: Callable[[], Any]
) -> None:
    """Offer a state until the page shows it: the viewer's interest crosses the account import
    asynchronously in the server, so the first publishes may go nowhere."""
    async with asyncio.timeout(15):
        while not await seen():
            await fed.publish(subject, json.dumps(body).encode())
            await fed.flush()
            await asyncio.sleep(0.2)


async def open_live(page: Any, base: str, query: str = "") -> None:
    await page.goto(f"{base}/live{query}")
    await page.wait_for_selector('#conn[data-state="live"]')


async def test_the_page_shows_every_venues_boards_and_the_clock_ticks(
    nats_centre: NatsCentre, page: Any, tmp_path: Path
) -> None:
    fed = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    try:
        live = LiveConfig(ws_url(nats_centre))
        async with hub_web(tmp_path, live, names={"va": "武隆赛区"}) as base:
            await open_live(page, base)
            assert await page.evaluate("document.documentElement.lang") == "zh-CN"
            card = '[data-venue="{}"][data-board="{}"]'
            subject = "fed.qz.v1.{}.board.{}.state"
            # va/1 ran for 60 s since its snapshot: the page counts down from `ts`.
            ran = snapshot("1", ts=wall_ms() - 60_000)

            def shown(v: str, b: str) -> Callable[[], Any]:
                return lambda: page.locator(card.format(v, b)).count()

            await publish_until(fed, subject.format("va", "1"), ran, shown("va", "1"))
            paused = snapshot("2", phase="paused", running=None, red="王五", black="赵六")
            await publish_until(fed, subject.format("va", "2"), paused, shown("va", "2"))
            other = snapshot("7", running="black", black_ms=300_000)
            await publish_until(fed, subject.format("vb", "7"), other, shown("vb", "7"))

            venues = await page.eval_on_selector_all(
                "section.venue", "s => s.map(x => x.dataset.venue)"
            )
            assert venues == ["va", "vb"]
            titles = await page.eval_on_selector_all(
                "section.venue h2", "s => s.map(x => x.textContent)"
            )
            assert titles == ["赛场 武隆赛区", "赛场 vb"], titles  # its name where the hub has one
            boards = await page.eval_on_selector_all(
                'section[data-venue="va"] .board', "s => s.map(x => x.dataset.board)"
            )
            assert boards == ["1", "2"]

            def ms(v: str, b: str, side: str) -> Any:
                sel = f"{card.format(v, b)} .side.{side} .time"
                return page.eval_on_selector(sel, "e => Number(e.dataset.ms)")

            red0 = await ms("va", "1", "red")
            assert 535_000 <= red0 <= 541_000, red0  # 600 s − the 60 s since ts
            black0, paused_red0, vb_black0 = (
                await ms("va", "1", "black"),
                await ms("va", "2", "red"),
                await ms("vb", "7", "black"),
            )
            await asyncio.sleep(1.5)
            red1 = await ms("va", "1", "red")
            assert 1_000 <= red0 - red1 <= 3_000, (red0, red1)  # it ticks
            assert await ms("va", "1", "black") == black0 == 540_000  # not on move: still
            assert await ms("va", "2", "red") == paused_red0 == 600_000  # paused: still
            assert vb_black0 - await ms("vb", "7", "black") >= 1_000  # black runs on vb/7
            text = await page.inner_text(card.format("va", "2"))
            assert "王五" in text and "赵六" in text and "暂停" in text
            assert "进行中" in await page.inner_text(card.format("va", "1"))
            shown_text = await page.inner_text(f"{card.format('va', '1')} .side.red .time")
            assert re.fullmatch(r"8:5\d", shown_text), shown_text  # m:ss, ~538 s left

            # A newer snapshot replaces the board's; an older one (a late redelivery) does not.
            newer = snapshot("1", seq=5, phase="paused", running=None, red_ms=420_000)
            older = snapshot("1", seq=4, red_ms=1_000)
            for state in (newer, older):
                await fed.publish(subject.format("va", "1"), json.dumps(state).encode())
            await fed.flush()
            await page.wait_for_function(
                "document.querySelector('[data-venue=va][data-board=\"1\"]')"
                ".dataset.phase === 'paused'"
            )
            await asyncio.sleep(0.3)
            assert await ms("va", "1", "red") == 420_000

            await page.click("#lang")
            assert await page.evaluate("document.documentElement.lang") == "en"
            assert "paused" in await page.inner_text(card.format("va", "2"))
            assert "Live clocks" in await page.inner_text("h1")
            assert "lang=en" in page.url
            assert await page.eval_on_selector("#ignored", "e => e.dataset.total") == "0"
    finally:
        await fed.close()


async def test_bad_messages_and_too_many_boards_are_ignored_and_counted(
    nats_centre: NatsCentre, page: Any, tmp_path: Path
) -> None:
    fed = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    try:
        async with hub_web(tmp_path, LiveConfig(ws_url(nats_centre), max_boards=3)) as base:
            await open_live(page, base)
            cards = page.locator(".board")

            async def one() -> bool:
                return await cards.count() == 1

            await publish_until(fed, "fed.qz.v1.va.board.1.state", snapshot("1"), one)

            def padded(board: str, size: int) -> bytes:
                body = json.dumps(snapshot(board, pad="")).encode()
                return json.dumps(snapshot(board, pad="x" * (size - len(body)))).encode()

            assert len(padded("5", 16_384)) == 16_384 and len(padded("3", 16_385)) == 16_385
            await fed.publish("fed.qz.v1.va.board.5.state", padded("5", 16_384))  # at the bound
            bad: list[tuple[str, bytes]] = [
                ("fed.qz.v1.va.board.2.state", b"not json {"),
                ("fed.qz.v1.va.board.3.state", padded("3", 16_385)),  # one byte past it
                ("fed.qz.v1.va.board.4.state", json.dumps(snapshot("5")).encode()),  # not its board
                ("fed.qz.v1.va.board.6.state", json.dumps(snapshot("6", red_ms=-1)).encode()),
                ("fed.qz.v1.va.board.7.state", b"[1, 2]"),
                ("fed.qz.v1.va.board.8.state", "\xff".encode("latin-1")),
            ]
            for subject, data in bad:
                await fed.publish(subject, data)
            for b in ("10", "11", "12"):  # va/1, va/5, vb/10; then past max_boards=3
                await fed.publish(f"fed.qz.v1.vb.board.{b}.state", json.dumps(snapshot(b)).encode())
            await fed.flush()
            await page.wait_for_function("document.getElementById('ignored').dataset.total === '8'")
            counted = await page.eval_on_selector("#ignored", "e => ({...e.dataset})")
            assert counted == {
                "not_json": "2", "too_large": "1", "invalid": "3", "too_many_boards": "2",
                "total": "8",
            }  # fmt: skip
            boards = await page.eval_on_selector_all(".board", "s => s.map(x => x.dataset.board)")
            assert boards == ["1", "5", "10"]
            assert "8" in await page.inner_text("#ignored")
    finally:
        await fed.close()


async def test_the_page_side_can_read_state_only_and_publish_nothing(
    nats_centre: NatsCentre, page: Any, tmp_path: Path
) -> None:
    """What the page's WebSocket can do, tried from the browser itself (no credentials): a PUB
    and a SUB beyond state are refused by the centre, and nothing reaches the FED account."""
    fed = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    seen: list[str] = []

    async def on_msg(msg: Any) -> None:
        seen.append(msg.subject)

    await fed.subscribe("fed.>", cb=on_msg)
    await fed.flush()
    try:
        async with hub_web(tmp_path, LiveConfig(ws_url(nats_centre))) as base:
            await open_live(page, base)
            lines = await page.evaluate(
                """(url) => new Promise((done) => {
                  const ws = new WebSocket(url), got = [];
                  ws.binaryType = "arraybuffer";
                  const send = (s) => ws.send(new TextEncoder().encode(s));
                  ws.onmessage = (e) => {
                    const text = new TextDecoder().decode(e.data);
                    for (const line of text.split("\\r\\n").filter(Boolean)) {
                      got.push(line);
                      if (line.startsWith("INFO ")) {
                        send('CONNECT {"verbose":false,"protocol":1}\\r\\n');
                        send("PUB fed.qz.v1.va.board.1.state 2\\r\\n{}\\r\\n");
                        send("PUB fed.qz.v1.va.board.1.cmd 2\\r\\n{}\\r\\n");
                        send("SUB fed.qz.v1.va.board.1.event 9\\r\\n");
                        send("PING\\r\\n");
                      }
                      if (line === "PONG") { ws.close(); done(got); }
                    }
                  };
                  setTimeout(() => done(got), 5000);
                })""",
                ws_url(nats_centre),
            )
            errors = [x.lower() for x in lines if x.startswith("-ERR")]
            assert sum("permissions violation for publish" in x for x in errors) == 2, lines
            assert sum("permissions violation for subscription" in x for x in errors) == 1, lines
            await asyncio.sleep(0.3)
            assert seen == []

            async with httpx.AsyncClient() as http:
                headers = (await http.get(f"{base}/live")).headers
            csp = headers["content-security-policy"]
            assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp
            assert f"connect-src 'self' {ws_url(nats_centre)}" in csp
            assert headers["x-frame-options"] == "DENY"
            for name in ("live.html", "hub.html"):
                text = (Path(__file__).parents[2] / "federation_hub/static" / name).read_text()
                assert "<script>" not in text  # no inline script: the CSP would block it
    finally:
        await fed.close()


async def test_the_federation_page_shows_standings_and_marks_a_pending_result(
    page: Any, tmp_path: Path
) -> None:
    v = Venue()
    v.result("1", v.game(1, "1", "张三", "李四"), "red", status="confirmed")
    g2 = v.game(1, "2", "王五", "赵六")
    v.result("2", g2, "black", reason="flag", status="pending")
    async with hub_web(tmp_path, LiveConfig(), v) as base:
        await page.goto(base + "/")
        await page.wait_for_selector('section[data-venue="va"] table.standings')
        rows = await page.eval_on_selector_all(
            "table.standings tr", "rs => rs.slice(1).map(r => [...r.cells].map(c => c.textContent))"
        )
        assert rows[0][:3] == ["1", "张三", "2"]
        assert sorted(r[1] for r in rows) == ["张三", "李四", "王五", "赵六"]
        games = await page.inner_text("table.games")
        assert "1-0" in games and "0-1 (待确认)" in games
        assert await page.get_attribute("#live", "href") == "live"
        await page.click("#lang")
        await page.wait_for_selector("text=Standings")
        assert "0-1 (pending)" in await page.inner_text("table.games")
        # This hub was given no --public-ws: its live page says so instead of connecting.
        await page.goto(base + "/live")
        await page.wait_for_selector('#conn[data-state="closed"]')
        assert await page.inner_text("#conn") == "未配置实时棋钟"


async def test_a_spectator_opening_the_pages_late_sees_players_clocks_and_results(
    page: Any, tmp_path: Path
) -> None:
    """An outsider spectator opened /live on a paused board and saw only the diagram for 20 s
    (no names, no clocks: a state comes only with the next press — never for a finished game),
    and the overview showed the result as raw JSON, the phase as `finished`, times under 红方."""
    from federation_hub.records import StateRecord

    paused = snapshot("1", phase="paused", running=None, red_ms=1_234_000, black_ms=1_500_000,
                      red="王天一", black="郑惟桐")  # fmt: skip
    done = snapshot("2", seq=40, phase="finished", running=None, red="许银川", black="吕钦",
                    result={"winner": "red", "reason": "resignation"})  # fmt: skip
    store_path = tmp_path / "hub"
    store_path.mkdir()
    store = await HubStore.open(f"sqlite:///{store_path / 'hub.db'}")
    stale = snapshot("9", ts=wall_ms() - 48 * 3600 * 1000, red="旧", black="局")  # last month's
    await store.put_states([StateRecord("va", s["board"], 1, s["seq"], s["ts"], s)
                            for s in (paused, done, stale)])  # fmt: skip
    v = Venue()
    v.ev("1", "r1-b1", "started", {})
    await v.store_in(store)
    await store.close()
    async with hub_web(store_path, LiveConfig()) as base:
        # no live socket at all here: what the hub holds is shown from its API alone
        await page.goto(f"{base}/live/va/1")
        card = page.locator('.board[data-venue="va"][data-board="1"]')
        await card.locator(".side.red .name").filter(has_text="王天一").wait_for()
        text = await card.inner_text()
        assert "郑惟桐" in text and "暂停" in text and "20:34" in text and "25:00" in text
        await page.goto(f"{base}/live")
        finished = page.locator('.board[data-venue="va"][data-board="2"]')
        await finished.locator(".result").filter(has_text="红胜").wait_for()
        assert "认输" in await finished.inner_text()
        await page.click("#lang")
        assert "Red wins" in await finished.inner_text()
        assert await page.locator('.board[data-board="9"]').count() == 0  # not today's
        async with httpx.AsyncClient(base_url=base) as client:
            states = (await client.get("/api/live/states")).json()
        assert sorted(x["board"] for x in states) == ["1", "2"]

        await page.goto(base + "/")
        clocks = page.locator('section[data-venue="va"] table.clocks')
        await clocks.wait_for()
        text = await clocks.inner_text()
        assert "王天一" in text and "20:34" in text and "暂停" in text, text
        assert "许银川" in text and "红胜 · 认输" in text and "结束" in text, text
        assert "{" not in text and "finished" not in text and "paused" not in text, text
