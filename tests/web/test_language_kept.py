"""The language chosen on one page is the language of every page (an outside tester: the
standings opened in Chinese after English was chosen, from the hall screen and from the
arbiter's link, 3 of 3 times; every other page kept it)."""

from __future__ import annotations

from typing import Any

import pytest
from support.web import WebStation

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

PAGES = (
    "/",
    "/arbiter",
    "/standings",
    "/prizes",
    "/pairing",
    "/board/1",
    "/record/1",
    "/record/sheet",
)


async def test_english_chosen_once_is_kept_on_every_page(
    page: Any, web_station: WebStation
) -> None:
    await page.goto(web_station.url + "/")
    await page.wait_for_function("document.documentElement.lang !== ''")
    assert not (await page.evaluate("document.documentElement.lang")).startswith("en")
    await page.click("#lang")
    for path in PAGES:
        await page.goto(web_station.url + path)  # no ?lang=: the choice made on the first page
        await page.wait_for_function("document.documentElement.lang.startsWith('en')")
    await page.click("#lang")  # back to Chinese on the last page: kept everywhere again
    for path in PAGES:
        await page.goto(web_station.url + path)
        await page.wait_for_function("document.documentElement.lang.startsWith('zh')")
