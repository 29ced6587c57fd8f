"""A round on the pairing page after the players: a pairs list that pairs two players again is
named (a Swiss pairs nobody twice: an outsider organiser saw one pair in four rounds taken
without a word), and a round imported unsent goes to the clocks from the page (no page could:
an outsider chief). A Wulong station without a broker, the chief's session, in chromium."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.registration import V1, api, as_chief, trf, upload, wulong_station

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Any]:
    async with wulong_station(tmp_path) as started:
        yield started


async def test_a_pairs_list_that_pairs_two_players_again_says_so(
    page: Any, station: Any, tmp_path: Path
) -> None:
    """A Swiss pairs nobody twice: a round 2 that repeats a round 1 game is named in the
    preview and the answer (a warning: the chief may mean it). An outsider organiser saw one
    pair in four rounds taken without a word."""
    await as_chief(page, station)
    await upload(page, tmp_path, "v1.trf", trf(V1, round1=True))  # 1-11, 2-12, … 10-20
    first = (await api(page, "/api/games?round=1"))["games"][0]
    red, black = first["red"], first["black"]
    # round 2: 11-1 again on board 1, everyone else with someone new
    pairs = ["11 1", *(f"{a} {b}" for a, b in zip(range(2, 11), range(13, 21), strict=False))]
    pairs.append("12 0")  # (the pairs list's bye)
    text = f"{len(pairs)}\n" + "\n".join(pairs) + "\n"
    await page.fill("#pairs-round", "2")
    preview, result = await upload(page, tmp_path, "r2.txt", text, kind="pairs")
    said = f"第2轮第1台 {V1[11]}–{V1[1]}（第1轮已相遇）"
    assert "注意：1 局为重复对局" in preview and said in preview, preview
    assert said in result, result
    assert {red, black} == {V1[1], V1[11]}


async def test_a_round_imported_unsent_is_sent_from_the_page(
    page: Any, station: Any, tmp_path: Path
) -> None:
    """The chief imports round 1 without 导入后发送, checks it, then sends it from the page
    (no page could: an outsider chief). No clock is connected here: every board says so."""
    await as_chief(page, station)
    await upload(page, tmp_path, "v1.trf", trf(V1, round1=True))  # (upload unchecks 发送)
    await page.fill("#send-round-no", "1")
    await page.click("#send-round")
    said = page.locator("#send-round-result")
    await page.wait_for_function("document.getElementById('send-round-result').textContent")
    text = await said.inner_text()
    assert text.startswith("第1轮已发送：0/10 台确认；未确认：第1、2、3"), text
    await page.click("#lang")
    assert (await said.inner_text()).startswith("round 1 sent: 0 of 10 boards answered")
    await page.fill("#send-round-no", "x")
    await page.click("#send-round")
    assert await said.inner_text() == "a wrong round"
