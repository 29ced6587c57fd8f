"""A board card never shows a new game's players beside the last game's times: an outsider chief
confirmed a knockout tie-break (10+3) onto the board of its drawn slow game and read the new
names, 加赛 and the slow game's 30:04 for a moment — the names were written at once, the times
on the next tick. A MutationObserver on the card records every state the page is ever in.

A real station, broker and node (simulated face); the hall display in chromium.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.web import WebStation

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

WATCH = """(board) => {
  window.seenCards = [];
  const card = document.querySelector(`.card[data-board="${board}"]`);
  const read = () => window.seenCards.push([
    card.querySelector(".side.red .name").textContent,
    card.querySelector(".side.red .time").textContent]);
  new MutationObserver(read).observe(card, { subtree: true, childList: true, characterData: true });
}"""


async def test_new_names_come_with_their_times(page: Any, web_station: WebStation) -> None:
    await web_station.node(["1"], mode="idle")
    station = web_station.station
    slow = {"game": "ko-sf1", "tc": "30m+5s", "red": "甲", "black": "乙"}
    assert (await station.send_command("1", "set_game", slow)).ok
    await page.goto(f"{web_station.url}/?lang=zh")
    await page.wait_for_selector('.card[data-board="1"] .side.red .name:text("甲")')
    await page.wait_for_function(
        "document.querySelector('.card[data-board=\"1\"] .side.red .time').textContent === '30:00'"
    )
    await page.evaluate(WATCH, "1")
    tiebreak = {"game": "ko-sf1-tb", "tc": "10m+3s", "red": "乙", "black": "甲", "tiebreak": True}
    assert (await station.send_command("1", "set_game", tiebreak)).ok
    await page.wait_for_function(
        "document.querySelector('.card[data-board=\"1\"] .side.red .time').textContent === '10:00'"
    )
    seen = await page.evaluate("window.seenCards")
    assert seen, "the observer saw no change"
    mixed = [s for s in seen if s[0] == "乙" and s[1] != "10:00"]
    assert not mixed, seen
