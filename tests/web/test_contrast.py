"""Every word on every page can be read: text against its own background at WCAG AA contrast
(4.5:1; 3:1 for large text), in both languages (an outsider: the record page's "not recorded
yet" notice was white on pale orange).

Each page is loaded as its user has it, and the notices that show only now and then (the
record page's earlier-round notice, the arbiter panel's flag hint) are shown with a sample
text, so that their colours are read too. The colour of each visible text is compared with the
first opaque background behind it (the page's own, else white).
"""

from __future__ import annotations

from typing import Any

import pytest
from support.web import WebStation, login

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

# Shown now and then: unhidden with a sample text for the check.
NOTICES = ("#earlier", "#flag-hint", "#login-error", "#goto-none")

CHECK = """(notices) => {
  for (const sel of notices) {
    const el = document.querySelector(sel);
    if (el) { el.hidden = false; if (!el.textContent.trim()) el.textContent = "示例 sample"; }
  }
  const rgb = (s) => { const m = s.match(/[\\d.]+/g) || []; return m.map(Number); };
  const lum = ([r, g, b]) => {
    const f = (c) => {
      c /= 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] >= 0.99)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const bad = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || !el.getClientRects().length) continue;
    const st = getComputedStyle(el);
    if (st.visibility === "hidden" || Number(st.opacity) === 0) continue;
    if (["OPTION", "SCRIPT", "STYLE"].includes(el.tagName)) continue;
    const fg = rgb(st.color), bg = background(el);
    const [a, b] = [lum(fg.slice(0, 3)) + 0.05, lum(bg) + 0.05];
    const ratio = Math.max(a, b) / Math.min(a, b);
    const size = parseFloat(st.fontSize), bold = Number(st.fontWeight) >= 700;
    const large = size >= 24 || (bold && size >= 18.66);
    if (ratio < (large ? 3 : 4.5))
      bad.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}.${el.className} ` +
        `"${n.textContent.trim().slice(0, 30)}" ${st.color} on rgb(${bg}) ${ratio.toFixed(2)}`);
  }
  return [...new Set(bad)];
}"""

PAGES = (
    "/",
    "/standings",
    "/prizes",
    "/round-sheet",
    "/pairing",
    "/board/1",
    "/record/1",
    "/record/sheet",
)


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
async def test_every_text_is_readable_on_every_page(
    page: Any, web_station: WebStation, lang: str
) -> None:
    await web_station.node(["1", "2"], mode="idle")
    station = web_station.station
    game = {"game": "r1-b1", "tc": "30m+5s", "red": "甲", "black": "乙"}
    flagging = {**game, "red_ms": 600, "black_ms": 60_000}
    assert (await station.send_command("1", "set_game", flagging)).ok
    assert (await station.send_command("1", "start")).ok
    await login(page, web_station, lang=lang)
    await page.wait_for_selector('#alerts li[data-kind="flag"]')
    await page.click('#boards .card[data-board="1"]')
    await page.wait_for_selector("#flag-hint:not([hidden])")
    found = {"/arbiter": await page.evaluate(CHECK, list(NOTICES))}
    for path in PAGES:
        await page.goto(f"{web_station.url}{path}?lang={lang}")
        await page.wait_for_load_state("networkidle")
        found[path] = await page.evaluate(CHECK, list(NOTICES))
    bad = {p: bad for p, bad in found.items() if bad}
    assert not bad, "\n".join(f"{p}: {line}" for p, lines in bad.items() for line in lines)
