"""A 让二先 game recorded on a phone (an outsider at a Wulong event: the record page refused the
receiver's second move — “马二进三”是另一方的着法：现在轮到黑方走 — so no handicap game on a
recorded board could have its record, and its responsible player was proposed a foul).

Wulong 2015: a woman (or a junior) receives 让二先 from an adult man (“通让二先”): she makes her
first two moves in a row. A real station, broker and node; the players' tags imported; the
round sent to the boards (the station decides the handicap); the clock pressed as played; the
moves entered on the record page at 390×844 through the board's QR key.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.record_hall import open_hall, until

from clock_service import Side

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

COUNT = "n => document.querySelectorAll('#moves li').length === n"


async def test_the_receivers_two_moves_are_recorded_as_played(
    page: Any, broker_factory: Callable[..., Any], tmp_path: Path
) -> None:
    players = ["王琳娜", "张强", "李四", "赵五"]
    async with open_hall(
        broker_factory(), tmp_path, "wulong-2015", ["node-a"], players, {"王琳娜": "women"}
    ) as hall:
        pairs = "round,board,red,black\n1,1,王琳娜,张强\n1,2,李四,赵五\n"
        r = await hall.post("/api/pairings?send=1", content=pairs.encode())
        assert r.status_code == 200, r.text
        r = await hall.post("/api/venue/cmd", {"cmd": "start", "args": {}})
        assert r.status_code == 200, r.text
        board = hall.board("1")
        await until(lambda: board.snapshot().phase == "running", "board 1 running")
        handicap = board.snapshot().handicap
        assert handicap is not None and (handicap.receiver, handicap.moves) == ("red", 2)
        for side in (Side.RED, Side.RED, Side.BLACK):  # her two moves, then his
            await hall.press("1", side)

        keys = (await hall.get("/api/record-keys?round=1"))["keys"]
        path = next(k["path"] for k in keys if k["board"] == "1")
        phone = await page.context.browser.new_context(
            bypass_csp=True, viewport={"width": 390, "height": 844}
        )
        try:
            mobile = await phone.new_page()
            await mobile.goto(hall.station.http_url + path + "&lang=zh")
            await mobile.wait_for_selector('#xq button.pc[data-sq="e0"]')
            for n, move in enumerate(["炮二平五", "马二进三", "马8进7"], start=1):
                await mobile.fill("#move-text", move)
                await mobile.press("#move-text", "Enter")
                await mobile.wait_for_function(COUNT, arg=n)
            assert "另一方" not in str(await mobile.text_content("#msg"))
        finally:
            await phone.close()

        view = await hall.get("/api/records/1")
        assert [m["chinese"] for m in view["moves"]] == ["炮二平五", "马二进三", "马８进７"]
        assert view["to_move"] == "red"
        # the record meets the clock: three moves, three presses, the same movers
        assert view["pairing"]["verdict"] == "matched", view["pairing"]
        pgn = (await hall.client.get("/api/export/games/r1-b1/record.pgn")).text
        assert '[Handicap "red 2"]' in pgn, pgn
        # A draw agreed now (Wulong 三、1: none before move 20): the warning counts the record,
        # her given move left out as the referee leaves it out — 3 plies, 1 full move.
        r = await hall.post(
            "/api/boards/1/cmd",
            {"cmd": "result", "args": {"winner": None, "reason": "agreed_draw"}},
        )
        assert r.status_code == 200, r.text

        async def warned() -> Any:
            alerts = (await hall.get("/api/alerts?limit=50"))["alerts"]
            return next((a for a in alerts if a["kind"] == "warning" and a["board"] == "1"), None)

        await until(warned, "the early-draw warning")
        detail = (await warned())["detail"]
        assert (detail["count"], detail["full_moves"]) == ("record", 1), detail
