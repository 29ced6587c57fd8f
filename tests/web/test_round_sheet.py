"""The round's sheet for the wall (对阵表, then its results): an organiser prints the pairings to
pin up before the round and the results after it (the hall page printed as a dark block). The
rows, the points before the round and the results are checked against the pairs imported and
the results entered, counted by the test itself; the page in both languages, and on paper in
black on white.

A real station (no broker: the boards' events fed as a node's), the page in chromium.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.station import Feeder, station_config

from venue_station.domain.station import Station

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

PLAYERS = "name\n王天一\n郑惟桐\n许银川\n吕钦\n赵鑫鑫\n蒋川\n"
ROUND1 = "round,board,red,black\n1,1,王天一,郑惟桐\n1,2,许银川,吕钦\n1,3,赵鑫鑫,蒋川\n"
ROUND2 = "round,board,red,black\n2,1,吕钦,王天一\n2,2,蒋川,许银川\n2,3,郑惟桐,赵鑫鑫\n"


async def _rows(page: Any) -> list[list[str]]:
    rows: list[list[str]] = await page.eval_on_selector_all(
        "#rows tr", "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))"
    )
    return rows


async def test_the_round_sheet_for_the_wall(tmp_path: Path, start_station: Any, page: Any) -> None:
    station: Station = await start_station(
        station_config(tmp_path, regulation="wulong-2015"), connect=False
    )
    await station.import_players(PLAYERS)
    await station.import_pairings(ROUND1, send=False)
    feed = Feeder(station)
    feed.result("1", "r1-b1", "red")  # 王天一 beats 郑惟桐
    feed.result("2", "r1-b2", None)  # 许银川 draws 吕钦
    feed.result("3", "r1-b3", "black")  # 蒋川 beats 赵鑫鑫
    await feed.flush()
    await station.import_pairings(ROUND2, send=False)
    feed.result("1", "r2-b1", "black")  # round 2, board 1 decided: 王天一 beats 吕钦
    await feed.flush()

    await page.goto(f"{station.http_url}/round-sheet?lang=zh")
    await page.wait_for_selector("body[data-loaded] #rows tr")
    # the latest round, its points before it (2 a win, 1 a draw: Wulong), its results so far
    assert await page.input_value("#round") == "2"
    assert await _rows(page) == [
        ["1", "吕钦", "1", "0-1", "2", "王天一"],
        ["2", "蒋川", "2", "", "1", "许银川"],
        ["3", "郑惟桐", "0", "", "0", "赵鑫鑫"],
    ]
    heading = await page.text_content("#heading") or ""
    assert "第2轮 对阵表" in heading and "武隆" in heading, heading
    await page.select_option("#round", "1")
    first_result = "document.querySelector('#rows tr td.result').textContent === '1-0'"
    await page.wait_for_function(first_result)
    assert await _rows(page) == [
        ["1", "王天一", "0", "1-0", "0", "郑惟桐"],
        ["2", "许银川", "0", "和", "0", "吕钦"],
        ["3", "赵鑫鑫", "0", "0-1", "0", "蒋川"],
    ]
    assert "第1轮 对阵及成绩" in (await page.text_content("#heading") or "")
    await page.click("#lang")
    assert await page.text_content("th[data-col=board]") == "Board"
    assert "Round 1 pairings and results" in (await page.text_content("#heading") or "")
    assert (await _rows(page))[1][3] == "draw"
    # on paper: black on white, the page's bar left out
    await page.emulate_media(media="print")
    colours = await page.evaluate(
        "() => [getComputedStyle(document.body).backgroundColor,"
        " getComputedStyle(document.querySelector('#rows td.player')).color,"
        " getComputedStyle(document.querySelector('header.bar')).display]"
    )
    assert colours == ["rgb(255, 255, 255)", "rgb(0, 0, 0)", "none"], colours
