"""The pairing page in a real chromium: zh-CN by default with the English switch, a chief
arbiter imports a TRF with a paired round from a file, the start ranks are listed (two players
named 张伟 kept apart), and the export link follows the round and the absences chosen."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.web import station_without_broker

from venue_station.domain.station import Station

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

GOLDEN = Path(__file__).resolve().parents[1] / "trf" / "golden"


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Station]:
    async with station_without_broker(tmp_path) as started:
        yield started


async def test_import_and_export_on_the_pairing_page(page: Any, station: Station) -> None:
    url = station.http_url
    await page.goto(f"{url}/pairing")
    assert await page.text_content("#title") == "编排交换"
    await page.wait_for_selector("#login-needed:not([hidden])")
    await page.click("#lang")
    assert await page.text_content("#title") == "Pairing exchange"
    assert await page.text_content("#upload") == "Import"
    await page.click("#lang")

    login = json.dumps({"username": "chief", "password": "pw-chief"})
    status = await page.evaluate(
        """(body) => fetch('/api/auth/login', {method: 'POST', body,
             headers: {'Content-Type': 'application/json'}}).then(r => r.status)""",
        login,
    )
    assert status == 200
    await page.goto(f"{url}/pairing")
    await page.wait_for_selector("#login-needed[hidden]", state="attached")
    await page.set_input_files("#file", str(GOLDEN / "xiangqi-r4-paired.trf"))
    await page.uncheck("#send")
    await page.click("#upload")
    # A station that previews an import first (a dry run) is answered by 确认导入.
    await page.wait_for_function(
        "['已导入', '预览'].some((w) => document.getElementById('result').textContent.includes(w))"
    )
    if await page.is_visible("#apply"):
        await page.click("#apply")
    await page.wait_for_function("document.getElementById('result').textContent.includes('已导入')")
    assert await page.text_content("#result") == "已导入：7 名棋手，第4轮 3 局，轮空/缺席 1"
    # the entrants table is filled by its own fetch after the result line: wait for it
    await page.wait_for_function("document.querySelectorAll('#entrants tr').length >= 4")
    rows = await page.eval_on_selector_all(
        "#entrants tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert rows[2:4] == [["3", "张伟 (3)", "张伟"], ["4", "张伟 (4)", "张伟"]]
    assert [(g["board"], g["red"]) for g in await station.require_store().games(4)] == [
        ("1", "王天一"),
        ("2", "张伟 (3)"),
        ("3", "张伟 (4)"),
    ]

    await page.select_option("#round", "3")
    await page.fill("#absent", "7")
    href = await page.get_attribute("#export", "href")
    assert href == "/api/export/tournament.trf?round=3&absent=7"
    assert await page.text_content('#round option[value="3"]') == "第3轮后"

    await page.set_input_files("#file", str(GOLDEN / "with-bye.pairs"))
    await page.select_option("#kind", "pairs")
    await page.fill("#pairs-round", "5")
    await page.click("#upload")
    await page.wait_for_function(
        "document.getElementById('result').textContent.includes('导入失败')"
    )
    # In the page's words (the station's English stays out), styled as an error.
    assert (await page.text_content("#result") or "").startswith("导入失败：文件格式有误")
    assert "error" in (await page.get_attribute("#result", "class") or "")
    await page.click("#lang")
    assert (await page.text_content("#result") or "").startswith(
        "Import failed: the file is not a valid TRF or pairs list"
    )
    assert await page.locator('#round option[data-n="0"]').count() == 0  # no "after round 0"


async def test_the_groups_come_from_a_players_list_on_the_page(
    page: Any, station: Station, tmp_path: Path
) -> None:
    """Wulong's group prize lists need the players' groups; an outsider had to send the players
    CSV with curl and a CSRF token (the page offered TRF and pairs lists only)."""
    await pairing_page_as_chief(page, station)
    players = tmp_path / "players.csv"
    players.write_text("name,club,rating,tags\n王琳娜,重庆,,women\n刘欢,武隆,,u14 local\n", "utf-8")
    await page.select_option("#kind", "players")
    await page.set_input_files("#file", str(players))
    await page.click("#upload")
    await page.wait_for_selector("#apply:not([hidden])")
    assert "棋手名单 2 名" in (await page.text_content("#result") or "")
    store = station.require_store()
    assert "王琳娜" not in await store.player_names()  # a preview stores nothing
    await page.click("#apply")
    await page.wait_for_function("document.getElementById('result').textContent.includes('已导入')")
    assert (await page.text_content("#result") or "").startswith("已导入棋手名单：2 名")
    tags = await store.reads.player_tags()
    assert tags["王琳娜"] == frozenset({"women"}) and tags["刘欢"] == frozenset({"u14", "local"})


async def test_an_organisers_spreadsheet_imports_and_its_mistakes_are_said_in_words(
    page: Any, station: Station, tmp_path: Path
) -> None:
    """An outsider organiser's players list as Excel on Chinese Windows saves it — GBK, the
    page's own column words (姓名,单位,等级分,组别), the groups as 少儿 / 女子 / 本地, a full-width
    comma — was refused as "出错了（HTTP 400）" in both languages, and groups in Chinese counted in
    no group. It imports; a file with a mistake says which line and why, in words."""
    await pairing_page_as_chief(page, station)
    await page.select_option("#kind", "players")
    bad = tmp_path / "bad.csv"
    bad.write_bytes("姓名,单位,等级分,组别\n赵国荣,黑龙江,,\n柳大华,湖北\n".encode("gbk"))
    await page.set_input_files("#file", str(bad))
    await page.click("#upload")
    result = page.locator("#result")
    await result.filter(has_text="列").wait_for()
    text = await result.text_content() or ""
    assert "应有 4 列，这一行有 2 列" in text and "第3行" in text and "HTTP" not in text
    good = tmp_path / "players.csv"
    rows = "姓名,单位,等级分,组别\n王琳娜，重庆，，女子\n刘欢,武隆,,少儿 本地\n"
    good.write_bytes(rows.encode("gbk"))
    await page.set_input_files("#file", str(good))
    await page.click("#upload")
    await page.wait_for_selector("#apply:not([hidden])")
    # the preview names whom the file adds: a list imported again adds, it does not replace
    assert "其中新棋手 2 名（刘欢、王琳娜）" in (await page.text_content("#result") or "")
    await page.click("#apply")
    await page.wait_for_function("document.getElementById('result').textContent.includes('已导入')")
    tags = await station.require_store().reads.player_tags()
    assert tags["王琳娜"] == frozenset({"women"}) and tags["刘欢"] == frozenset({"u14", "local"})

async def pairing_page_as_chief(page: Any, station: Station) -> None:
    """The pairing page, logged in as the chief (the login as the arbiter page makes it)."""
    url = station.http_url
    login = json.dumps({"username": "chief", "password": "pw-chief"})
    await page.goto(f"{url}/pairing")
    await page.evaluate(
        """(body) => fetch('/api/auth/login', {method: 'POST', body,
             headers: {'Content-Type': 'application/json'}}).then(r => r.status)""",
        login,
    )
    await page.goto(f"{url}/pairing")
    await page.wait_for_selector("#login-needed[hidden]", state="attached")


async def test_the_change_log_says_what_each_change_was(page: Any, station: Station) -> None:
    """An outsider organiser read 变更 for an undo and 轮空 · 张三 without the round: each line
    now says what it was — an undo what it undid, a bye its round and kind, an import its
    round — in the page's language."""
    await station.import_players("name\n甲\n乙\n丙\n")
    await station.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=False)
    await pairing_page_as_chief(page, station)
    await page.fill("#bye-round", "1")
    await page.fill("#bye-player", "丙")
    await page.select_option("#bye-kind", "full")
    await page.click("#bye")
    await page.wait_for_function("document.querySelector('#t-result').textContent.includes('轮空')")
    await page.click("#undo")
    await page.wait_for_function("document.querySelectorAll('#audit li').length >= 3")
    lines = [x.split(" · ", 2)[2] for x in await page.locator("#audit li").all_text_contents()]
    assert lines[:3] == [
        "撤销：轮空",
        "轮空 · 第1轮 · 丙（得胜分）（已撤销）",
        "导入配对表 · 第1轮",
    ], lines
    await page.click("#lang")
    lines = [x.split(" · ", 2)[2] for x in await page.locator("#audit li").all_text_contents()]
    assert lines[0] == "undo: bye" and lines[1].startswith("bye · round 1 · 丙 (a win's points)")
