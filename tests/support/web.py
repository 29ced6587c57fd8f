"""Web test fixtures: a running station on a private broker, and Debian's chromium via Playwright.

- ``browser`` (session): a headless chromium (``/usr/bin/chromium``; never downloaded). The
  tests skip only when that file is absent; CI installs it.
- ``page``: a fresh browser context + page per test; JavaScript errors on the page fail the test.
- ``web_station``: a :class:`WebStation` — a started :class:`Station` with its HTTP server on a
  free port, connected to a private Mosquitto (``broker_factory``: no retained state from other
  tests). ``web_station.fake_node("node-a", ["1", "2"])`` is a FakeNode with that node's real
  broker account; ``web_station.node(["1"])`` an in-process real Node (simulated faces, idle).
- ``screenshot(page, name)``: saves ``name.png`` to ``docs/screenshots`` when ``QZ_SCREENSHOTS=1``,
  else to a temporary folder.

Every async fixture here, and every test using them, runs on the session's event loop (the
browser lives there): mark such tests ``pytest.mark.asyncio(loop_scope="session")``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest_asyncio

from support.chromium import CHROMIUM, CHROMIUM_ARGS
from support.parts import skip_missing
from support.station import FakeNode, station_config
from venue_station.auth import hash_password
from venue_station.domain.station import Station
from venue_station.web.web_server import StationWithWeb
from wire_contract.messages import SidePair, StateSnapshot, to_payload

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "WebStation",
    "login",
    "open_page",
    "paired_game",
    "post_csv",
    "screenshot",
    "served_station",
    "station_without_broker",
    "wall_ms",
]

REPO = Path(__file__).resolve().parents[2]


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest_asyncio.fixture(loop_scope="session", scope="session")
async def browser() -> AsyncIterator[Any]:
    if not CHROMIUM.exists():
        skip_missing(str(CHROMIUM), "apt-get install chromium")
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@contextlib.asynccontextmanager
async def open_page(
    browser: Any, *, width: int, height: int, timeout_ms: int
) -> AsyncIterator[Any]:
    """A page in a fresh context of ``browser``; a JavaScript error on it fails the test."""
    # bypass_csp: Playwright's polling waits evaluate strings, which the pages' CSP forbids;
    # the CSP itself is checked on the headers (test_web_security.py).
    context = await browser.new_context(
        viewport={"width": width, "height": height}, bypass_csp=True
    )
    pg = await context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.set_default_timeout(timeout_ms)
    try:
        yield pg
    finally:
        await context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest_asyncio.fixture(loop_scope="session")
async def page(browser: Any) -> AsyncIterator[Any]:
    async with open_page(browser, width=1280, height=800, timeout_ms=5000) as pg:
        yield pg


@dataclass
class WebStation:
    station: Station
    broker: Any
    tmp: Path
    _stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    @property
    def url(self) -> str:
        return self.station.http_url

    async def fake_node(self, node: str, boards: list[str], **kw: Any) -> FakeNode:
        fake = FakeNode(self.broker, node, boards, **kw)
        return await self._stack.enter_async_context(fake)

    async def node(self, boards: list[str], *, node: str = "node-a", **simulated: Any) -> Any:
        from support.node import node_config, running_node

        config = node_config(self.broker, node, boards, self.tmp / f"node-{node}", **simulated)
        return await self._stack.enter_async_context(running_node(config))

    async def publish_state(
        self, fake: FakeNode, board: str, *, ts: int | None = None, **state: Any
    ) -> dict[str, Any]:
        """A retained snapshot of DESIGN.md §4 from ``fake`` (defaults: a fresh running game)."""
        snapshot = StateSnapshot(
            board=board,
            node=fake.node,
            session=fake.session,
            seq=fake.seq[board],
            ts=wall_ms() if ts is None else ts,
            game=f"r1-b{board}",
            tc="30m+5s",
            phase="running",
            running="red",
            red_ms=1_800_000,
            black_ms=1_800_000,
            moves=SidePair(red=0, black=0),
            flag=None,
            fouls=SidePair(red=0, black=0),
            result=None,
        )
        body = {**to_payload(snapshot), **state}
        await fake.publish(fake.topics.state(board), body, retain=True)
        return body

    async def publish_status(self, fake: FakeNode, board: str, state: str) -> None:
        body = {"state": state, "node": fake.node, "session": fake.session, "ts": wall_ms()}
        await fake.publish(fake.topics.status(board), body, retain=True)

    async def wait_board(self, board: str, predicate: Callable[[dict[str, Any]], bool]) -> None:
        from support.station import wait_until

        def ok() -> bool:
            assert self.station.ingest is not None
            view = self.station.ingest.boards.get(board)
            return view is not None and predicate(view.as_dict())

        await wait_until(ok, 5.0, f"board {board}")


@contextlib.asynccontextmanager
async def served_station(broker: Any, tmp_path: Path, **config: Any) -> AsyncIterator[WebStation]:
    """A started station with its web on ``broker`` (``config``: station_config's keywords),
    stopped with whatever the test started beside it."""
    station = StationWithWeb(station_config(tmp_path, broker, **config))
    await station.start()
    web = WebStation(station, broker, tmp_path)
    try:
        yield web
    finally:
        await web._stack.aclose()
        await station.stop()


@pytest_asyncio.fixture(loop_scope="session")
async def web_station(
    broker_factory: Callable[..., Any], tmp_path: Path
) -> AsyncIterator[WebStation]:
    async with served_station(broker_factory(), tmp_path, command_timeout_s=1.0) as web:
        yield web


async def login(page: Any, web: WebStation, *, lang: str | None = None) -> None:
    from support.station import ARBITER, ARBITER_PASSWORD

    await page.goto(f"{web.url}/arbiter" + (f"?lang={lang}" if lang else ""))
    await page.fill("#username", ARBITER)
    await page.fill("#password", ARBITER_PASSWORD)
    await page.click("#login-submit")
    await page.wait_for_selector("#station:not([hidden])")


@contextlib.asynccontextmanager
async def station_without_broker(tmp_path: Path) -> AsyncIterator[Any]:
    """A started station with its web and one chief account (``chief`` / ``pw-chief``), no
    broker: its boards' events are fed to its ingest as a node's would be."""
    accounts = [{"username": "chief", "password_hash": hash_password("pw-chief"), "role": "chief"}]
    started = StationWithWeb(station_config(tmp_path, account=accounts), connect=False)
    await started.start()
    try:
        yield started
    finally:
        await started.stop()


async def post_csv(page: Any, path: str, text: str) -> int:
    """POST a CSV from the logged-in page, as its own forms do (the session's CSRF token);
    the answer's status."""
    return int(
        await page.evaluate(
            """async ([path, body]) => {
              const s = await (await fetch('/api/auth/session')).json();
              const r = await fetch(path, {method: 'POST', body,
                headers: {'X-CSRF-Token': s.csrf, 'Content-Type': 'text/csv'}});
              return r.status;
            }""",
            [path, text],
        )
    )


async def paired_game(page: Any, web: WebStation, **times: int) -> Any:
    """Round 1 board 1 (甲 red, 乙 black) paired from the logged-in page as the pairing page
    imports it, set on a simulated node's board 1 (``times``: ``red_ms``, ``black_ms`` to start
    from) and started; the node."""
    node = await web.node(["1"], mode="idle")
    assert await post_csv(page, "/api/pairings?send=0", "round,board,red,black\n1,1,甲,乙\n") == 200
    game = {"game": "r1-b1", "tc": "30m+5s", "red": "甲", "black": "乙", **times}
    assert (await web.station.send_command("1", "set_game", game)).ok
    assert (await web.station.send_command("1", "start")).ok
    return node


def screenshot_dir() -> Path:
    if os.environ.get("QZ_SCREENSHOTS") == "1":
        out = REPO / "docs" / "screenshots"
    else:
        out = Path(tempfile.gettempdir()) / "qz-screenshots"
    out.mkdir(parents=True, exist_ok=True)
    return out


async def screenshot(page: Any, name: str) -> Path:
    path = screenshot_dir() / f"{name}.png"
    await page.screenshot(path=str(path), full_page=False)
    return path


def sse_lines(raw: bytes) -> list[dict[str, Any]]:
    """The ``data:`` objects of a chunk of an SSE stream."""
    return [json.loads(line[5:]) for line in raw.decode().splitlines() if line.startswith("data:")]
