"""The move count starts with the tournament's own 自然限着 (an outsider at a Wulong event: the
field said 40 and one tap counted 40 moves; Wulong 三、2: “自然限着为50回合”)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.web import WebStation, login, served_station

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(loop_scope="session")
async def wulong(broker_factory: Any, tmp_path: Path) -> AsyncIterator[WebStation]:
    async with served_station(
        broker_factory(), tmp_path, command_timeout_s=2.0, regulation="wulong-2015"
    ) as web:
        yield web


async def test_the_move_count_offers_the_profiles_limit(page: Any, wulong: WebStation) -> None:
    await wulong.node(["1"], mode="idle")
    station = wulong.station
    assert (await station.send_command("1", "set_game", {"game": "g1", "tc": "35m+5s"})).ok
    assert (await station.send_command("1", "start")).ok
    await login(page, wulong)
    await page.wait_for_selector("#ko", state="hidden")  # Wulong has no knockout
    await page.click('#boards .card[data-board="1"]')
    limit = "#f-count input[name=limit]"
    await page.wait_for_function(f"document.querySelector('{limit}').value === '50'")
    await page.click("#f-count button")
    await page.wait_for_selector("#board-history li[data-type=move_count]")
    assert "50" in await page.inner_text("#board-history li[data-type=move_count]")
    # what the arbiter types is kept (a language switch refills the reasons, not the limit)
    await page.fill(limit, "60")
    await page.click("#lang")
    assert await page.input_value(limit) == "60"
