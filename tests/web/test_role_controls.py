"""What a role cannot do is not offered on the arbiter's page (an outsider deputy on a phone
saw every chief-only control — 全部暂停, 开始淘汰赛, 录谱许可 — and was refused when tapping them;
a viewer saw every board action). The chief sees them all; the deputy (an ``arbiter`` account)
the board's actions and the alerts' rulings but no venue action; a ``viewer`` no action at all,
and both are told why. The server refuses them anyway (``test_web_roles.py``).

A real station and Mosquitto, a node on a simulated face, each account's page in chromium.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.station import ARBITER, ARBITER_PASSWORD
from support.web import served_station

from venue_station.auth import hash_password

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

ACCOUNTS = {ARBITER: (ARBITER_PASSWORD, "chief"), "deputy": ("pw-deputy-3", "arbiter"),
            "watcher": ("pw-watcher-3", "viewer")}  # fmt: skip
CHIEF_ONLY = ("#pause-all", "#resume-all", "#start-round", "#ko-start")
BOARD_ACTIONS = ("[data-cmd=pause]", "#f-adjust button", "#f-result button", "#f-foul button")


async def _shown(page: Any, selectors: tuple[str, ...]) -> dict[str, bool]:
    return {s: await page.locator(s).first.is_visible() for s in selectors}


async def test_each_role_is_offered_what_it_may_do(
    browser: Any, broker_factory: Any, tmp_path: Any
) -> None:
    accounts = [
        {"username": name, "password_hash": hash_password(pw), "role": role}
        for name, (pw, role) in ACCOUNTS.items()
    ]
    async with served_station(broker_factory(), tmp_path, account=accounts) as web:
        await web.node(["1"], mode="idle")
        await web.station.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=True)
        for name, (pw, role) in ACCOUNTS.items():
            context = await browser.new_context()
            page = await context.new_page()
            await page.goto(f"{web.url}/arbiter?lang=zh")
            await page.fill("#username", name)
            await page.fill("#password", pw)
            await page.click("#login-submit")
            await page.wait_for_selector('#boards .card[data-board="1"]')
            await page.click('#boards .card[data-board="1"]')
            await page.wait_for_selector("#board-panel:not([hidden])")
            chief, board = await _shown(page, CHIEF_ONLY), await _shown(page, BOARD_ACTIONS)
            note = await page.locator("#role-note").is_visible()
            words = await page.locator("#role-note").text_content() or ""
            await context.close()
            assert all(chief.values()) == (role == "chief") and any(chief.values()) == (
                role == "chief"
            ), (role, chief)
            assert all(board.values()) == (role != "viewer") and any(board.values()) == (
                role != "viewer"
            ), (role, board)
            assert note == (role != "chief"), role
            assert ("台次操作" in words) == (role == "viewer"), (role, words)
