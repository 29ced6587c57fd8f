"""The standings page (``/standings``) in a real chromium: zh-CN by default, English on
``?lang=en``, a tag filter, and a new result on a board shows up through the SSE ``game``
message with no reload and no polling."""

from __future__ import annotations

from typing import Any

import pytest
from support.station import decision_txn
from support.web import WebStation

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

ROWS = "#rows tr"


async def rows(page: Any) -> list[list[str]]:
    return await page.eval_on_selector_all(
        ROWS, "trs => trs.map(tr => [...tr.children].map(td => td.textContent))"
    )


async def test_the_page_follows_the_results(page: Any, web_station: WebStation) -> None:
    station = web_station.station
    await station.import_players("name,tags\n甲,local\n乙,u14\n丙,local\n丁,\n")
    await station.import_pairings("round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n", send=False)
    fake = await web_station.fake_node("node-a", ["1", "2"])
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))

    await page.goto(f"{web_station.url}/standings")
    await page.wait_for_selector("body[data-loaded]")
    assert await page.text_content("th[data-col='progressive']") == "累进分"
    assert [r[1] for r in await rows(page)] == [
        "丁",
        "丙",
        "乙",
        "甲",
    ]  # nothing played: all equal, by name

    # the arbiter's result, answering the station's command (its txn)
    mate = {"winner": "red", "reason": "checkmate"}
    txn = decision_txn(station, "1", "result", mate)
    await fake.emit("1", type="result", data=mate, txn=txn)
    await page.wait_for_function(
        "document.querySelector('#rows tr td.player').textContent === '甲'"
    )
    shown = await rows(page)
    first = shown[0]
    assert first[:7] == ["1", "甲", "2", "2", "1", "0", "0"]
    # A tie-break's reason sits on the row it explains (below the one it puts ahead), only
    # where the two are level on points: 甲 is ahead on points, which says itself.
    assert first[7] == ""
    fetched = [u for u in requests if "/api/standings" in u]
    assert len(fetched) == 2, fetched  # the first load and the one the `game` message asked for
    api = (await page.evaluate("fetch('/api/standings').then(r => r.json())"))["standings"]
    for i in range(1, len(api)):
        level = api[i - 1]["points"] == api[i]["points"] and api[i - 1]["decided_by"] != "points"
        assert shown[i][7] == (api[i - 1]["reason_zh"] if level else ""), (i, shown[i])
    assert shown[2][7] != ""  # 乙, 丙, 丁 are level on points: 丙 and 丁 say why they are below

    # the groups in words, not their codes (an outsider organiser read local / u14 / women)
    labels = await page.eval_on_selector_all("#tag option[data-tag]", "os => os.map(o => o.text)")
    assert "本地" in labels and "local" not in labels, labels
    await page.select_option("#tag", "local")
    await page.wait_for_function("document.querySelectorAll('#rows tr').length === 2")
    assert [r[1] for r in await rows(page)] == ["甲", "丙"]
    assert "tag=local" in page.url
    assert "tag=local" in (await page.get_attribute("#csv", "href") or "")

    await page.goto(f"{web_station.url}/standings?lang=en&tag=local")
    await page.wait_for_selector("body[data-loaded]")
    assert await page.text_content("th[data-col='progressive']") == "Progressive"

    await page.goto(f"{web_station.url}/standings?lang=en")
    await page.wait_for_selector("body[data-loaded]")
    assert (await rows(page))[2][7] == api[1]["reason_en"] != ""

    # a withdrawn player is marked on the standings, as on the pairing page (an outsider)
    from venue_station.domain import tournament_desk

    await tournament_desk.set_withdrawn(station, "丁", withdrawn=True, user="chief")
    await page.goto(f"{web_station.url}/standings")
    await page.wait_for_selector("body[data-loaded]")
    names = [r[1] for r in await rows(page)]
    assert "丁（已退赛）" in names and "甲" in names, names
