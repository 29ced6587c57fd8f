"""The chief's printable QR sheet (录谱, issue 29 Build 2), in Debian's chromium.

A Meishan round of four boards ("要求前两台，原则上都要录谱。原则上由胜方负责录谱，
和棋由红方负责录谱"): the chief opens ``/record/sheet`` and finds boards 1 and 2 only, each
with its players, who must record and a QR code. The QR code is read off the page's pixels by
an independent decoder (zxing-cpp) and must be the board's record link on the station's own
address as the browser sees it; that link, opened in a fresh browser, is a recorder session of
that board and of nothing else. An arbiter below the chief and an anonymous browser are refused
with a sentence, the QR route refuses them too, and a recorder's session is fenced off both.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import httpx
import pytest
import segno
import zxingcpp
from PIL import Image
from support.station import _ARBITER_HASH, ARBITER, ARBITER_PASSWORD
from support.web import screenshot, served_station

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


PLAYERS = ["甲", "乙", "丙", "丁", "戊", "己", "庚", "辛"]
PAIRS = "round,board,red,black\n" + "".join(
    f"1,{b},{PLAYERS[2 * b - 2]},{PLAYERS[2 * b - 1]}\n" for b in range(1, 5)
)
LOWER = "floor1"  # an arbiter, not the chief
ACCOUNTS = [
    {"username": ARBITER, "password_hash": _ARBITER_HASH, "role": "chief"},
    {"username": LOWER, "password_hash": _ARBITER_HASH, "role": "arbiter"},
]


async def sheet_login(page: Any, url: str, user: str) -> None:
    await page.fill("#username", user)
    await page.fill("#password", ARBITER_PASSWORD)
    await page.click("#login-submit")


def decode(png: bytes) -> list[str]:
    image = Image.open(io.BytesIO(png)).convert("L")
    return [r.text for r in zxingcpp.read_barcodes(image)]


async def test_the_chief_prints_a_qr_code_per_required_board(
    broker_factory: Any, tmp_path: Path, browser: Any
) -> None:
    async with served_station(
        broker_factory(), tmp_path, regulation="meishan-2016", account=ACCOUNTS
    ) as web:
        await web.station.import_players("name\n" + "\n".join(PLAYERS) + "\n")
        await web.station.import_pairings(PAIRS, send=False)

        # an anonymous browser: a sentence and the login, no sheet
        anon = await browser.new_context(bypass_csp=True)
        page = await anon.new_page()
        await page.goto(f"{web.url}/record/sheet?lang=zh")
        await page.wait_for_selector("#login-box:not([hidden])")
        assert "裁判长" in (await page.text_content("#msg") or "")
        assert await page.locator(".sheet-card").count() == 0

        # an arbiter below the chief: refused in words, in English too
        await sheet_login(page, web.url, LOWER)
        await page.wait_for_function(
            "() => document.querySelector('#msg').textContent.startsWith('只有裁判长')"
        )
        assert await page.locator(".sheet-card").count() == 0
        await page.goto(f"{web.url}/record/sheet?lang=en")
        await page.wait_for_function(
            "() => document.querySelector('#msg').textContent.startsWith('Only the chief arbiter')"
        )
        assert await page.locator(".sheet-card").count() == 0
        r = await page.request.get(f"{web.url}/api/record-keys/qr.svg?board=1")
        assert r.status == 403, await r.text()
        await anon.close()

        # the chief: boards 1 and 2 only, names, the duty in words, a QR code each
        chief = await browser.new_context(bypass_csp=True)
        page = await chief.new_page()
        await page.set_viewport_size({"width": 1024, "height": 900})
        await page.goto(f"{web.url}/record/sheet?lang=zh")
        await page.wait_for_selector("#login-box:not([hidden])")
        await sheet_login(page, web.url, ARBITER)
        await page.wait_for_selector(".sheet-card img.sheet-qr")
        await page.wait_for_function(
            "() => [...document.querySelectorAll('img.sheet-qr')]"
            ".every(i => i.complete && i.naturalWidth > 0)"
        )
        cards = page.locator(".sheet-card")
        assert await cards.count() == 2
        origin = await page.evaluate("location.origin")
        links: dict[str, str] = {}
        for n, board in enumerate(("1", "2")):
            card = cards.nth(n)
            assert await card.get_attribute("data-board") == board
            text = await card.inner_text()
            assert f"第{board}台" in text
            red, black = PLAYERS[2 * int(board) - 2], PLAYERS[2 * int(board) - 1]
            assert red in text and black in text
            assert "胜方录谱" in text and "和棋由红方录谱" in text
            found = decode(await card.locator("img.sheet-qr").screenshot())
            assert len(found) == 1, found
            assert found[0].startswith(f"{origin}/record/{board}?key="), found
            links[board] = found[0]
        assert links["1"] != links["2"]
        await screenshot(page, "record-sheet-zh")

        # printed: the sheet alone (the header and the language switch hidden)
        await page.emulate_media(media="print")
        assert not await page.locator("header.bar").is_visible()
        assert await cards.first.is_visible()
        await page.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
        await screenshot(page, "record-sheet-print")
        await page.emulate_media(media="screen")

        # the English switch
        await page.click("#lang")
        text = await cards.first.inner_text()
        assert "Board 1" in text and "the winner" in text and "red on a draw" in text

        # the same SVG the page shows, as segno draws the decoded link itself
        r = await page.request.get(f"{web.url}/api/record-keys/qr.svg?board=2")
        assert r.status == 200
        assert r.headers["content-type"].startswith("image/svg+xml")
        assert decode(await page.locator('.sheet-card[data-board="2"] img').screenshot())
        own = io.BytesIO()
        segno.make_qr(links["2"], error="m").save(own, kind="svg", scale=4, border=4)
        assert (await r.body()).strip() == own.getvalue().strip()

        # a board that must not be recorded has no QR code; a bad board is named
        r = await page.request.get(f"{web.url}/api/record-keys/qr.svg?board=3")
        assert r.status == 409 and (await r.json())["code"] == "record_not_required"
        r = await page.request.get(f"{web.url}/api/record-keys/qr.svg?board=x/y")
        assert r.status == 400
        await chief.close()

        # the link opens a recorder session of board 1 and of nothing else
        phone = await browser.new_context(bypass_csp=True)
        page = await phone.new_page()
        await page.goto(links["1"] + "&lang=zh")
        await page.wait_for_selector('#xq button.pc[data-sq="e0"]')
        assert await page.locator("#login-box").is_hidden()
        # the page trades the link's key for a session after drawing the board: wait for it
        for _ in range(50):
            session = await (await page.request.get(f"{web.url}/api/auth/session")).json()
            if "role" in session:
                break
            await asyncio.sleep(0.1)
        assert session["role"] == "recorder" and session["boards"] == ["1"]
        csrf = {"X-CSRF-Token": session["csrf"]}
        r = await page.request.post(
            f"{web.url}/api/records/1/moves", data={"move": "h2e2", "ply": 0}, headers=csrf
        )
        assert r.status == 200, await r.text()
        r = await page.request.post(
            f"{web.url}/api/records/2/moves", data={"move": "h2e2", "ply": 0}, headers=csrf
        )
        assert r.status == 403 and (await r.json())["code"] == "recorder_only"
        for path in ("/api/record-keys/qr.svg?board=1", "/api/record-keys", "/record/sheet"):
            r = await page.request.get(f"{web.url}{path}")
            assert r.status == 403, (path, r.status)
        # No way back to an overview the recorder cannot open (返回总览 led to raw JSON: an
        # outsider); any other page says why in words, and the record page offers a way out.
        await page.goto(f"{web.url}/record/1")
        await page.locator("#logout").wait_for()
        assert await page.locator("#back").is_hidden()
        await page.goto(f"{web.url}/board/1")
        text = await page.inner_text("body")
        assert "录谱账号" in text and "{" not in text and "recorder_only" not in text
        await page.click('a[href="/record/1"]')
        await page.click("#logout")
        await page.wait_for_url(f"{web.url}/board/1")
        await page.wait_for_function("!document.body.innerText.includes('录谱账号')")
        await phone.close()

        async with httpx.AsyncClient(base_url=web.url) as client:
            r = await client.get("/api/record-keys/qr.svg?board=1")
            assert r.status_code == 401 or r.status_code == 403
