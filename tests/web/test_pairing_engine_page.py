"""The pairing page with an engine configured, in a real chromium: the chief runs the engine
(the strict stand-in, tests/support/trf_engine.py, invoked like bbpPairings), reviews the proposed
boards with names and points, approves them, and the round is stored; asking again before the
round has results says why in the reader's language (zh-CN, English switch)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.station import station_config

from venue_station.auth import hash_password
from venue_station.domain.station import Station
from venue_station.web.web_server import StationWithWeb

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

ENGINE = Path(__file__).resolve().parents[1] / "support" / "trf_engine.py"
NAMES = "甲乙丙丁戊"
PLAYERS = "".join(
    f"001 {i:>4} m    {'棋手' + NAMES[i - 1]:<33} {2400 - i:>4} CHN {'':>11} {'':<10}  0.0\r\n"
    for i in range(1, 6)
)
ENTRY = "012 引擎页\r\n142 5\r\nXXR 5\r\n162  W 2.0    D 1.0\r\n" + PLAYERS


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Station]:
    wrapper = tmp_path / "bbpPairings"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ENGINE}" "$@"\n')
    wrapper.chmod(0o755)
    accounts = [{"username": "chief", "password_hash": hash_password("pw-chief"), "role": "chief"}]
    config = station_config(
        tmp_path,
        account=accounts,
        regulation="wulong-2015",
        pairing={"engine": "bbpPairings", "path": str(wrapper)},
    )
    started = StationWithWeb(config, connect=False)
    await started.start()
    try:
        yield started
    finally:
        await started.stop()


async def test_pair_the_next_round_from_the_page(page: Any, station: Station) -> None:
    url = station.http_url
    await page.goto(f"{url}/pairing")
    login = json.dumps({"username": "chief", "password": "pw-chief"})
    status = await page.evaluate(
        """async ([body, entry]) => {
             const r = await fetch('/api/auth/login', {method: 'POST', body,
               headers: {'Content-Type': 'application/json'}});
             const csrf = (await r.json()).csrf;
             const i = await fetch('/api/trf?send=0', {method: 'POST', body: entry,
               headers: {'X-CSRF-Token': csrf}});
             return i.status; }""",
        [login, ENTRY],
    )
    assert status == 200
    await page.goto(f"{url}/pairing")
    await page.wait_for_function(
        "document.getElementById('engine-name').textContent === 'bbpPairings'"
    )
    assert await page.text_content("#propose") == "运行引擎"
    await page.click("#propose")
    await page.wait_for_selector("#proposal:not([hidden])")
    assert await page.text_content("#proposal-title") == "第1轮编排建议（bbpPairings），请核对"
    rows = await page.eval_on_selector_all(
        "#proposal-boards tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert len(rows) == 3 and rows[-1][3] == "轮空"  # 5 players: two boards and a bye
    seated = {cell.split()[0] for row in rows for cell in (row[1], row[3]) if cell != "轮空"}
    assert seated == {"1", "2", "3", "4", "5"}
    await page.click("#lang")
    assert await page.text_content("#proposal-title") == (
        "Proposed pairings for round 1 (bbpPairings): review"
    )
    await page.click("#lang")
    await page.uncheck("#approve-send")
    await page.click("#approve")
    await page.wait_for_function(
        "document.getElementById('engine-status').textContent.includes('已导入')"
    )
    assert await page.text_content("#engine-status") == "已导入第1轮：2 局，轮空/缺席 1"
    assert await page.is_hidden("#proposal")
    games = await station.require_store().games(1)
    assert [(g["board"], g["red"], g["black"]) for g in games] == [
        (str(n), row[1].split()[1], row[3].split()[1]) for n, row in enumerate(rows[:2], 1)
    ]
    await page.click("#propose")
    await page.wait_for_function(
        "document.getElementById('engine-status').textContent.includes('没有结果')"
    )
    assert await page.text_content("#engine-status") == (
        "上一轮还有对局没有结果，引擎只编排完整一轮之后的下一轮。"
    )
