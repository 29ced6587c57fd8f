"""The prize list (奖励名单) read as the organiser reads it, and the reading turned into rows.

``read_prizes`` (once, at the end of an event, in the event's own chromium context): the
standings page's 奖励名单 link followed to ``/prizes``; its tables, totals and lines read in
zh-CN, then switched to English once and read again (every visible word), then back to
Chinese; printed (the print media); ``/api/prizes`` and ``/api/export/prizes.csv?lang=zh``
fetched by the same page. Nothing here raises: what went wrong is kept in ``problems``.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

__all__ = ["csv_table", "page_rows", "read_prizes", "yuan"]

# the page as a person reads it: each shown table with the heading above it, every text line
_READ = """() => {
  const shown = (el) => el && el.checkVisibility({ visibilityProperty: true });
  const heads = [...document.querySelectorAll('h1, h2, h3, h4, caption, legend')].filter(shown);
  const cells = (r) => [...r.cells].map((c) => c.innerText.trim());
  const tables = [...document.querySelectorAll('table')].filter(shown).map((t) => {
    const above = heads.filter((h) => t.contains(h) ||
      (h.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING));
    const head = t.tHead ? [...t.tHead.rows].map(cells) : [];
    const body = [...t.tBodies].flatMap((b) => [...b.rows]).filter(shown).map(cells);
    const foot = t.tFoot ? [...t.tFoot.rows].filter(shown).map(cells) : [];
    return {name: above.length ? above[above.length - 1].innerText.trim() : '',
            head: head.length ? head[head.length - 1] : [], body, foot};
  });
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim(); const el = n.parentElement;
    if (text && shown(el) && !el.closest('script, style, [translate=no]')) texts.push(text);
  }
  texts.push(document.title);
  return {tables, texts, inner: document.body.innerText, lang: document.documentElement.lang,
          url: location.pathname + location.search};
}"""

# what print keeps: the background and the shown elements that are not tables' text
_PRINTED = """() => {
  const bg = (el) => getComputedStyle(el).backgroundColor;
  const shown = (el) => el.checkVisibility({ visibilityProperty: true });
  return {body: bg(document.body), html: bg(document.documentElement),
          color: getComputedStyle(document.body).color,
          controls: [...document.querySelectorAll('button, select, input')].filter(shown)
                     .map((e) => e.innerText || e.value || e.id),
          inner: document.body.innerText};
}"""

_FETCH = """async ([path, binary]) => {
  const r = await fetch(path);
  if (binary) return {status: r.status, type: r.headers.get('content-type'),
    disposition: r.headers.get('content-disposition'),
    bytes: [...new Uint8Array(await r.arrayBuffer())]};
  return {status: r.status, body: await r.json().catch(() => null)};
}"""


async def _loaded(pg: Any) -> None:
    """The page drawn: its rows, or its own loaded mark, then a breath for a late redraw."""
    await pg.wait_for_function(
        "() => document.body && (document.body.dataset.loaded !== undefined ||"
        " document.querySelectorAll('table tbody tr').length > 0)",
        timeout=15_000,
    )
    await asyncio.sleep(0.5)


async def read_prizes(pg: Any, url: str, shots: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"problems": []}
    try:
        out["api"] = await pg.evaluate(_FETCH, ["/api/prizes", False])
        raw = await pg.evaluate(_FETCH, ["/api/export/prizes.csv?lang=zh", True])
        out["csv"] = {**raw, "bytes": bytes(raw["bytes"])}
        raw = await pg.evaluate(_FETCH, ["/api/export/prizes.csv?lang=en", True])
        out["csv_en"] = {**raw, "bytes": bytes(raw["bytes"])}
        # the organiser comes from the standings page's link
        await pg.goto(f"{url}/standings?lang=zh")
        await pg.wait_for_selector("body[data-loaded]", state="attached")
        link = pg.locator('a[href$="/prizes"], a[href*="/prizes?"], a[href="prizes"]')
        out["link"] = [t.strip() for t in await link.all_inner_texts()]
        if out["link"]:
            await link.first.click()
            await pg.wait_for_url(re.compile(r".*/prizes(\?.*)?$"))
        else:
            out["problems"].append("the standings page has no link to /prizes")
            await pg.goto(f"{url}/prizes")
        await _loaded(pg)
        out["zh"] = await pg.evaluate(_READ)
        await pg.screenshot(path=str(shots / "prizes-zh.png"), full_page=True)
        await pg.emulate_media(media="print")
        out["print"] = await pg.evaluate(_PRINTED)
        await pg.screenshot(path=str(shots / "prizes-print.png"), full_page=True)
        size = pg.viewport_size
        await pg.set_viewport_size({"width": 794, "height": 1123})  # one A4 sheet at 96 dpi
        await pg.screenshot(path=str(shots / "prizes-print-a4.png"))
        if size:
            await pg.set_viewport_size(size)
        await pg.pdf(path=str(shots / "prizes.pdf"), format="A4")
        await pg.emulate_media(media="screen")
        if await pg.locator("#lang").count():
            before = out["zh"]["inner"]
            await pg.click("#lang")
            await pg.wait_for_function("(t) => document.body.innerText !== t", arg=before)
            await asyncio.sleep(0.5)
            out["en"] = await pg.evaluate(_READ)
            await pg.screenshot(path=str(shots / "prizes-en.png"), full_page=True)
            await pg.click("#lang")  # back to Chinese: the choice is remembered in the browser
            await asyncio.sleep(0.3)
        else:
            out["problems"].append("no #lang switch on /prizes")
    except Exception as exc:  # a Playwright time-out, a 404 page…: the tests say what is missing
        out["problems"].append(f"{type(exc).__name__}: {exc}")
    # for the one who reads a failure: what was read, beside the screenshots
    kept = {k: v for k, v in out.items() if not k.startswith("csv")}
    for k in ("csv", "csv_en"):
        kept[k] = (out.get(k) or {}).get("bytes", b"").decode("utf-8", "replace")
    (shots / "prizes-read.json").write_text(json.dumps(kept, ensure_ascii=False, indent=1))
    return out


# -- the reading turned into rows ------------------------------------------------------------

_PLACE = re.compile(r"^第?\s*(\d+)\s*(?:[–—~\-至到]\s*第?\s*(\d+))?\s*名?$")
_NUMBER = re.compile(r"[\d,]+(?:\.\d+)?")


def yuan(text: str) -> Decimal | None:
    """An amount as written on the page (5000, 5,000.00, ¥5000, 5000元)."""
    found = _NUMBER.search(text.replace("，", ","))
    if not found:
        return None
    try:
        return Decimal(found.group().replace(",", ""))
    except InvalidOperation:
        return None


def place(text: str) -> tuple[int, int] | None:
    m = _PLACE.match(text.replace(" ", "").replace("并列", "").replace("=", ""))
    if not m:
        return None
    return int(m.group(1)), int(m.group(2) or m.group(1))


def _column(head: list[str], *words: str) -> int | None:
    return next((i for i, h in enumerate(head) if any(w in h for w in words)), None)


def page_rows(
    table: dict[str, Any], players: list[str]
) -> list[tuple[int, int, str, Decimal | None]]:
    """A table's rows as (place, to, player, amount), by its header's words (名次/Place,
    棋手/Player, 奖金/Prize); a row whose player cell names no registered player is left out
    (a total line in the body)."""
    head = table["head"]
    ci_place = _column(head, "名次", "Place", "place")
    ci_player = _column(head, "棋手", "姓名", "Player", "player")
    ci_prize = _column(head, "奖金", "Prize", "prize", "金额", "Amount")
    rows = []
    for cells in table["body"]:
        who = next(
            (p for p in sorted(players, key=len, reverse=True)
             if ci_player is not None and ci_player < len(cells) and p in cells[ci_player]),
            None,
        )  # fmt: skip
        if who is None:
            continue
        span = place(cells[ci_place]) if ci_place is not None and ci_place < len(cells) else None
        amount = yuan(cells[ci_prize]) if ci_prize is not None and ci_prize < len(cells) else None
        a, b = span or (0, 0)
        rows.append((a, b, who, amount))
    return rows


def csv_table(data: bytes) -> tuple[bool, list[list[str]]]:
    """(starts with a UTF-8 BOM, the rows)."""
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data.decode("utf-8-sig")
    return bom, [r for r in csv.reader(io.StringIO(text)) if r]
