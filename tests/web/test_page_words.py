"""Every word on every page in the language chosen (issue 25, Build 5).

A real broker, station and node (simulated faces). Some events are driven first — a move, a
pause, a foul, a time adjustment, a result and a refusal — and then every page (the display,
the hall screen, a board, an unknown board, the arbiter's station with a board open, the
standings, the prize list, the record page, the chief's record QR sheet, the pairing page with a
failed import)
is read as a person reads it: every visible
text run, every choice of a visible select, every placeholder and the title. In zh-CN no Latin
word may show but a short allow-list (units, file formats, the names we entered); in English no
Chinese character but the players' names (and the 中文 switch).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from support.station import ARBITER, VENUE
from support.web import WebStation, login

from clock_service import Side

# the browser tests' marks (the two checks of the checker and the tables need none)
BROWSER = (pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session"))


def in_browser(test: Any) -> Any:
    for mark in BROWSER:
        test = mark(test)
    return test


PLAYERS = ["王天一", "郑惟桐", "许银川", "吕钦"]
BAD_FILE = "x.trf"  # the name of the file we try to import
# Latin words a Chinese page may show: file formats and units, the names we typed in.
LATIN_ALLOWED = {"English", "TRF", "CSV", "PGN", "JSON", "ms", ARBITER, VENUE, BAD_FILE}
CJK_ALLOWED = {*PLAYERS, "中文"}
LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_'.-]*")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+")

# The visible words of the page: text runs of shown elements, the choices of shown selects,
# placeholders, the title.
VISIBLE_TEXT = """() => {
  const out = [];
  const shown = (el) => el && el.checkVisibility({ visibilityProperty: true });
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim();
    const el = n.parentElement;
    // translate="no" (HTML's own mark): xiangqi notation and piece glyphs, the same in both
    if (!text || !shown(el) || el.closest("select, script, style, [translate=no]")) continue;
    out.push(text);
  }
  for (const s of document.querySelectorAll("select"))
    if (shown(s)) for (const o of s.options) out.push(o.textContent.trim());
  for (const i of document.querySelectorAll("input[placeholder]"))
    if (shown(i) && i.placeholder && !i.closest("[translate=no]")) out.push(i.placeholder);
  out.push(document.title);
  return out.filter((t) => t);
}"""


def untranslated(texts: list[str], lang: str) -> list[str]:
    bad = []
    for text in texts:
        if lang == "zh-CN":
            words = [w.strip(".'-") for w in LATIN.findall(text)]
            if [w for w in words if w and w not in LATIN_ALLOWED]:
                bad.append(text)
        else:
            rest = text
            for name in sorted(CJK_ALLOWED, key=len, reverse=True):
                rest = rest.replace(name, "")
            if CJK.search(rest):
                bad.append(text)
    return bad


async def check(page: Any, where: str, lang: str) -> None:
    await asyncio.sleep(0.4)  # a page's own follow-up fetches (reasons, rounds) land
    texts = await page.evaluate(VISIBLE_TEXT)
    assert texts, f"{where}: nothing visible"
    bad = untranslated(texts, lang)
    assert not bad, f"{where} in {lang}: untranslated text {bad}"


async def walk(page: Any, url: str, ready: str, where: str) -> None:
    """Load in zh-CN, read; switch to English, read; reload in English, read."""
    sep = "&" if "?" in url else "?"
    await page.goto(url + sep + "lang=zh")
    await page.wait_for_selector(ready, state="attached")
    await check(page, where, "zh-CN")
    await page.click("#lang")
    await check(page, where + " (switched)", "en")
    await page.goto(url + sep + "lang=en")
    await page.wait_for_selector(ready, state="attached")
    await check(page, where, "en")


async def drive_events(web: WebStation) -> Any:
    station = web.station
    node = await web.node(["1", "2"], mode="idle")
    await web.node(["3"], node="node-b", mode="idle")
    await station.import_players("name\n" + "\n".join(PLAYERS) + "\n")
    pairs = f"round,board,red,black\n1,1,{PLAYERS[0]},{PLAYERS[1]}\n1,2,{PLAYERS[2]},{PLAYERS[3]}\n"
    await station.import_pairings(pairs, send=True)
    await web.wait_board("2", lambda v: (v.get("state") or {}).get("game") == "r1-b2")
    for board in ("1", "2"):
        assert (await station.send_command(board, "start")).ok
    face = node.boards["1"].face
    await web.wait_board("1", lambda v: v["state"]["phase"] == "running")
    face.press(Side.RED)  # a move
    await web.wait_board("1", lambda v: v["state"]["moves"]["red"] == 1)
    assert (await station.send_command("1", "pause")).ok
    assert (await station.send_command("1", "adjust", {"side": "black", "delta_ms": 30_000})).ok
    assert (await station.send_command("1", "foul", {"side": "red", "reason": "disturbing"})).ok
    assert (await station.send_command("1", "resume")).ok
    result = {"winner": "red", "reason": "resigned"}
    assert (await station.send_command("2", "result", result)).ok
    await web.wait_board("2", lambda v: v["state"]["phase"] == "finished")
    return node


@in_browser
async def test_every_page_speaks_one_language(page: Any, web_station: WebStation) -> None:
    await drive_events(web_station)
    url = web_station.url

    # The arbiter's station: a refusal through the page (board 3 has no game), board 1 open.
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="3"]')
    await page.click('#boards .card[data-board="3"]')
    await page.click("[data-cmd=pause]")
    await page.wait_for_selector("#log li[data-outcome=refused]")
    await page.click('#boards .card[data-board="1"]')
    await page.wait_for_selector('#board-history li[data-type="adjusted"]')
    await page.check("#show-all")
    await check(page, "arbiter", "zh-CN")
    await page.click("#lang")
    await check(page, "arbiter (switched)", "en")
    await page.reload()
    await page.wait_for_selector('#boards .card[data-board="1"]')
    await page.click('#boards .card[data-board="1"]')
    await page.wait_for_selector('#board-history li[data-type="adjusted"]')
    await check(page, "arbiter", "en")

    await walk(page, f"{url}/", '.card[data-board="2"]', "display")
    await walk(page, f"{url}/?boards=1-3", '.card[data-board="3"]', "hall screen")
    await walk(page, f"{url}/board/1", '#history li[data-type="adjusted"]', "board 1")
    await walk(page, f"{url}/board/999", ".card .badge", "no such board")
    await walk(page, f"{url}/standings", "body[data-loaded]", "standings")
    await walk(page, f"{url}/prizes", "body[data-loaded] section.prize-list", "prize list")
    await walk(page, f"{url}/round-sheet", "body[data-loaded] #rows tr", "round sheet")
    await walk(page, f"{url}/record/1", '#xq button[data-sq="e0"]', "record page")
    await walk(page, f"{url}/record/sheet", '.sheet-card[data-board="2"]', "record QR sheet")

    # The pairing page, logged in, after a failed import (its error in the page's language).
    await page.goto(f"{url}/pairing?lang=zh")
    await page.set_input_files(
        "#file", files=[{"name": BAD_FILE, "mimeType": "text/plain", "buffer": b"garbage\n"}]
    )
    await page.click("#upload")
    await page.wait_for_selector("#result.error", timeout=5000)
    await check(page, "pairing, a failed import", "zh-CN")
    await page.click("#lang")
    await check(page, "pairing, a failed import (switched)", "en")
    await walk(page, f"{url}/pairing", "#round option[data-n]", "pairing")
    assert await page.locator('#round option[data-n="0"]').count() == 0  # no "after round 0"


@in_browser
async def test_the_history_reads_as_sentences(page: Any, web_station: WebStation) -> None:
    await drive_events(web_station)
    await page.goto(f"{web_station.url}/board/1?lang=zh")
    await page.wait_for_selector('#history li[data-type="adjusted"]')
    history = await page.inner_text("#history")
    assert "裁判为黑方加时 +30 秒" in history
    assert "暂停了棋钟" in history
    assert "红方犯规：干扰对方" in history
    await page.click("#lang")
    history = await page.inner_text("#history")
    assert "The arbiter gave Black +30 s" in history


def test_the_checker_sees_raw_words() -> None:
    """The check itself can fail: raw codes on a Chinese page, Chinese on an English one."""
    assert untranslated(["foul · 红方 · confirmed"], "zh-CN")
    assert untranslated(["第3台 · ms"], "zh-CN") == []
    assert untranslated(["Board 3 · 红方"], "en")
    assert untranslated([f"Board 3 · {PLAYERS[0]} · 中文"], "en") == []


def test_both_languages_have_every_key() -> None:
    """A key in one language only would show the other's words (or the key) on the page."""
    from venue_station.web.pages import STATIC_DIR

    text = (STATIC_DIR / "i18n.js").read_text(encoding="utf-8")
    zh, en = text.split('\n  "en": {')
    key = re.compile(r'^\s+"([^"]+)":', re.M)
    assert set(key.findall(zh)) - {"zh-CN"} == set(key.findall(en))
