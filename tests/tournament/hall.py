"""The hall: the arbiter's hands on the pages (chromium) and the players at the simulated clocks.

Everything the arbiter does goes through a page: the pairing page's file import, the arbiter
page's buttons and forms, the alerts' own 确认 / 驳回, the knockout section's 开始淘汰赛,
确认上台 and the armageddon's colour choice. ``ArbiterHall.api`` is left for what no page offers
(the chief naming the four when the 4th place is shared) and for reading the station's rounds.
What the test reads back is read as a person reads it: the standings page's table.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tournament.prize_page import read_prizes

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

__all__ = ["ArbiterHall", "Players"]

_API = """async ([method, path, body]) => {
  const s = await fetch('/api/auth/session').then(r => r.json());
  const r = await fetch(path, {method, headers: {'Content-Type': 'application/json',
    'X-CSRF-Token': s.csrf || ''}, body: body === null ? undefined : JSON.stringify(body)});
  return {status: r.status, body: await r.json().catch(() => null)};
}"""

# the knockout section read back (ArbiterHall.ko_read): the rows' values and the lists' names
_KO_READ = """() => {
  const ko = document.getElementById('ko');
  const all = (sel) => [...document.querySelectorAll(sel)];
  const games = all('#ko-rows tr').map((r) => ({id: r.dataset.game, state: r.dataset.state,
    red: r.dataset.red, black: r.dataset.black, tc: r.dataset.tc,
    tiebreak: r.dataset.tiebreak === '1', board: r.dataset.board || null,
    result: r.dataset.result || null, text: r.textContent}));
  return {started: ko.dataset.started === '1', finished: ko.dataset.finished === '1',
    top: all('#ko-top li').map((l) => l.dataset.player), games,
    proposed: games.filter((g) => g.state === 'proposed'),
    pending_choices: all('#ko-choices li').map((l) => ({game: l.dataset.game,
      chooser: l.dataset.chooser, text: l.textContent})),
    placings: all('#ko-places li').map((l) => ({place: Number(l.dataset.place),
      player: l.dataset.player, text: l.textContent}))};
}"""


async def wait_for(predicate: Any, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


@dataclass
class Players:
    """The people at the boards: each board's simulated face and its node's clock."""

    faces: dict[str, SimulatedFace]
    nodes: list[Any]

    def board(self, board: str) -> Any:
        return next(n.boards[board] for n in self.nodes if board in n.boards)

    async def press(self, board: str, side: Side) -> None:
        clock = self.board(board).clock
        before = clock.moves(side)
        self.faces[board].press(side)
        await wait_for(lambda: clock.moves(side) == before + 1, f"board {board}: {side} pressed")

    async def play(self, board: str, moves: int) -> None:
        """``moves`` presses by each side, red first (red is on move again after them)."""
        for _ in range(moves):
            await self.press(board, Side.RED)
            await self.press(board, Side.BLACK)

    async def running(self, board: str) -> None:
        await wait_for(
            lambda: self.board(board).snapshot().phase == "running", f"board {board} running"
        )


class ArbiterHall:
    """The chief arbiter at the station's pages: one browser context, three pages."""

    def __init__(self, arbiter: Any, pairing: Any, standings: Any, url: str) -> None:
        self.arbiter, self.pairing, self.standings_page, self.url = arbiter, pairing, standings, url
        self.ruled: list[tuple[str, str, str]] = []  # board, alert kind, action

    async def api(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        return dict(await self.arbiter.evaluate(_API, [method, path, body]))

    # -- the pairing page --------------------------------------------------------------------
    async def upload(self, name: str, text: str, *, kind: str, round_no: int | None) -> str:
        pg = self.pairing
        await pg.evaluate("document.getElementById('result').textContent = ''")
        await pg.select_option("#kind", kind)
        if kind != "players":  # a players list has no round and sends nothing
            await pg.fill("#pairs-round", "" if round_no is None else str(round_no))
            await (pg.check("#send") if kind == "pairs" else pg.uncheck("#send"))
        await pg.set_input_files(
            "#file", files=[{"name": name, "mimeType": "text/plain", "buffer": text.encode()}]
        )
        await pg.click("#upload")
        # The page first shows what the file would change (a dry run) with 确认导入, or its
        # refusal; the chief then confirms. "正在导入…" (working) is neither.
        settled = (
            "(before) => { const t = document.getElementById('result').textContent;"
            " return t !== '' && t !== before && !['正在导入…', 'Importing…'].includes(t); }"
        )
        await pg.wait_for_function(settled, arg="", timeout=30_000)
        if not await pg.evaluate("document.getElementById('apply').hidden"):
            preview = str(await pg.text_content("#result"))
            await pg.evaluate("document.getElementById('apply').click()")
            await pg.wait_for_function(settled, arg=preview, timeout=30_000)
        return str(await pg.text_content("#result"))

    # -- the arbiter page --------------------------------------------------------------------
    async def click(self, selector: str) -> None:
        """A tap on the element (as ``el.click()``: Playwright's own click waits for the
        ticking cards to hold still for two frames, seconds on a loaded 2-core machine)."""
        await self.arbiter.locator(selector).first.evaluate("el => el.click()")

    async def card_shows(self, board: str, red: str, black: str) -> None:
        card = self.arbiter.locator(f'#boards .card[data-board="{board}"]')
        await card.locator(".side.red .name", has_text=red).wait_for()
        await card.locator(".side.black .name", has_text=black).wait_for()

    async def start_round(self, *, minutes_ago: float | None = None) -> None:
        pg = self.arbiter
        if minutes_ago is None:
            await pg.fill("#start-at", "")
        else:
            # the hall clock said the round began that long ago (the page's local time)
            text = await pg.evaluate(
                """(ms) => { const d = new Date(Date.now() - ms);
                   const p = (n) => String(n).padStart(2, '0');
                   return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' +
                     p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' +
                     p(d.getSeconds()); }""",
                int(minutes_ago * 60_000),
            )
            await pg.fill("#start-at", text)
        await self.click("#start-round")  # arms
        await self.click("#start-round")  # sends

    async def select(self, board: str) -> None:
        pg = self.arbiter
        if await pg.locator(f'#board-detail[data-board="{board}"]:not([hidden])').count():
            return
        await self.click(f'#boards .card[data-board="{board}"]')
        await pg.wait_for_selector(f'#board-detail[data-board="{board}"]:not([hidden])')

    async def board_button(self, board: str, cmd: str) -> None:
        await self.select(board)
        await self.click(f'#board-detail button[data-cmd="{cmd}"]')

    async def enter_result(self, board: str, winner: str) -> None:
        await self.select(board)
        pg = self.arbiter
        await pg.select_option("#f-result select[name=winner]", "" if winner == "draw" else winner)
        await self.click("#f-result button[type=submit]")

    # -- the knockout section of the arbiter page ------------------------------------------
    async def ko_read(self) -> dict[str, Any]:
        """The knockout section as shown: its rows (each with the values it carries), the four,
        the colour choice waiting, the places."""
        return dict(await self.arbiter.evaluate(_KO_READ))

    async def ko_start(self, seed: int | None, *, timeout: float = 10.0) -> bool:
        pg = self.arbiter
        await pg.fill("#ko-seed", "" if seed is None else str(seed))
        await self.click("#ko-start")  # the first tap arms it, the second sends it
        await pg.wait_for_selector('#ko-start[data-armed="1"]')
        await asyncio.sleep(0.7)  # not a double click (one tap, knockout.js)
        await self.click("#ko-start")
        try:
            await wait_for(lambda: self.ko_flag("started"), "the knockout started", timeout)
        except AssertionError:
            return False
        return True

    async def ko_flag(self, name: str) -> bool:
        """``started`` / ``finished``: what the knockout section says of itself."""
        flag = f"document.getElementById('ko').dataset.{name} === '1'"
        return bool(await self.arbiter.evaluate(flag))

    async def ko_confirm(self, game: str, board: str, *, timeout: float = 15.0) -> bool:
        """Type the board into the proposed game's row and tap 确认上台 (one turn of the page's
        loop, so no redraw falls between); True when the row shows the game on its board."""
        row = f'#ko-rows tr[data-game="{game}"]'
        await self.arbiter.wait_for_selector(f'{row}[data-state="proposed"]')
        await self.arbiter.evaluate(
            """([row, board]) => { const r = document.querySelector(row);
               const input = r.querySelector('input[name=board]'); input.value = board;
               input.dispatchEvent(new Event('input'));
               r.querySelector('button[data-action=confirm]').click(); }""",
            [row, board],
        )
        try:
            await self.arbiter.wait_for_selector(
                f'{row}[data-state="playing"], {row}[data-state="done"]', timeout=timeout * 1000
            )
        except Exception:  # a Playwright time-out: the caller records it as a problem
            return False
        return True

    async def ko_choose(self, game: str, side: str) -> None:
        """The armageddon's colour: tap 执红方 / 执黑方 on the waiting choice."""
        await self.click(f'#ko-choices li[data-game="{game}"] button[data-side="{side}"]')
        gone = f'#ko-choices li[data-game="{game}"]'
        await self.arbiter.wait_for_selector(gone, state="detached")

    async def adjust(self, board: str, side: str, seconds: int) -> None:
        await self.select(board)
        pg = self.arbiter
        await pg.select_option("#f-adjust select[name=side]", side)
        await pg.fill("#f-adjust input[name=seconds]", str(seconds))
        await self.click("#f-adjust button[type=submit]")
        if abs(seconds) >= 300:  # five minutes or more: the button asks for a second tap
            await pg.wait_for_selector("#f-adjust button[data-armed]")
            await self.click("#f-adjust button[type=submit]")

    async def finished(self, board: str, timeout: float = 10.0) -> None:
        await self.arbiter.wait_for_selector(
            f'#boards .card[data-board="{board}"][data-phase="finished"]', timeout=timeout * 1000
        )

    async def rule(
        self, board: str, kinds: tuple[str, ...], action: str, *, side: str | None = None,
        game: str | None = None, timeout: float = 15.0,
    ) -> str:  # fmt: skip
        """Click ``action`` on the open alert of ``board`` that carries the decision: the first
        of ``kinds`` shown (and of ``side``, when given). Returns the kind ruled."""
        pg = self.arbiter
        deadline = time.monotonic() + timeout
        settled_at: float | None = None
        while True:
            found = [(k, await self._open_rows(board, k, action, side, game)) for k in kinds]
            if any(rows is not None for _, rows in found) and settled_at is None:
                # one act raises its alerts together (迟到 and 判负待裁定): let them all arrive
                settled_at = time.monotonic() + 0.5
            if settled_at is not None and time.monotonic() >= settled_at:
                kind, rows = next((k, r) for k, r in found if r is not None)
                row = rows.first
                alert_id = await row.get_attribute("data-id")
                await row.locator(f'button[data-action="{action}"]').evaluate("b => b.click()")
                await pg.wait_for_function(
                    f"""() => {{ const r = document.querySelector(
                         '#alerts li[data-id="{alert_id}"]');
                       return !r || !r.querySelector('button[data-action="{action}"]'); }}"""
                )
                self.ruled.append((board, kind, action))
                return kind
            if time.monotonic() > deadline:
                shown = await pg.eval_on_selector_all(
                    "#alerts li", "rows => rows.map(r => r.dataset.board + ':' + r.dataset.kind)"
                )
                raise AssertionError(f"board {board}: no open {kinds} alert; shown: {shown}")
            await asyncio.sleep(0.05)

    async def _open_rows(
        self, board: str, kind: str, action: str, side: str | None, game: str | None
    ) -> Any:
        pg = self.arbiter
        sel = f'#alerts li[data-board="{board}"][data-kind="{kind}"]'
        if game is not None:
            sel += f'[data-game="{game}"]'
        rows = pg.locator(sel).filter(has=pg.locator(f'button[data-action="{action}"]'))
        if side is not None:
            # the row names the side in the page's words
            rows = rows.filter(has_text="红方" if side == "red" else "黑方")
        return rows if await rows.count() else None

    # -- the standings page --------------------------------------------------------------------
    async def standings(self, round_no: int | None = None) -> list[dict[str, str]]:
        pg = self.standings_page
        q = "" if round_no is None else f"?round={round_no}"
        await pg.goto(f"{self.url}/standings{q}")
        await pg.wait_for_selector("body[data-loaded]", state="attached")
        await pg.wait_for_function("document.querySelectorAll('#rows tr').length > 0")
        await asyncio.sleep(0.3)  # the table is redrawn once more if a result came in late
        heads = await pg.eval_on_selector_all("#table thead th", "hs => hs.map(h => h.dataset.col)")
        cells = await pg.eval_on_selector_all(
            "#rows tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
        )
        return [dict(zip(heads, row, strict=False)) for row in cells]

    # -- the prize list (奖励名单) ----------------------------------------------------------------
    async def prizes(self, shots: Path) -> dict[str, Any]:
        """The organiser's read of the prize list on the standings page's tab (prize_page.py)."""
        return await read_prizes(self.standings_page, self.url, shots)
