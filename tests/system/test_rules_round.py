"""Issue 15 from the node to the standings: a Wulong round with a handicap game (让二先), a double
no-show (开赛15分钟未到场者判负, both players) and a second move-rule violation (违反行棋规定2次的).

A real broker, a real node with three simulated clock faces, a real station (SQLite). The
players file says who is a junior or a woman; the station decides the handicap from it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.node import node_config, running_node
from support.station import station_config

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace
from venue_station.domain import exports
from wire_contract.messages import to_payload

pytestmark = pytest.mark.broker

WULONG = "wulong-2015"
PLAYERS = "name,tags\n张男,\n李少,u14\n王男,\n赵男,\n钱女,women master\n孙男,\n"
PAIRINGS = "round,board,red,black\n1,5,张男,李少\n1,6,王男,赵男\n1,7,钱女,孙男\n"
MIN = 60_000


async def _wait(predicate: Callable[[], Any], what: str, timeout: float = 10.0) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not await _true(predicate()):
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


async def _true(value: Any) -> bool:
    return bool(await value) if asyncio.iscoroutine(value) else bool(value)


async def test_a_round_with_a_handicap_a_double_no_show_and_a_second_violation(
    broker_factory: Callable[..., Any], start_station: Callable[..., Any], tmp_path: Any
) -> None:
    broker = broker_factory()
    faces = {b: SimulatedFace(mode="idle") for b in ("5", "6", "7")}  # node-c's boards
    config = node_config(broker, "node-c", list(faces), tmp_path / "node", regulation=WULONG)
    station = await start_station(station_config(tmp_path, broker, regulation=WULONG))
    store = station.store

    async with running_node(config, faces) as node:
        await station.import_players(PLAYERS)
        replies = (await station.import_pairings(PAIRINGS, send=True))["set_game"]
        assert all(r["ok"] for r in replies.values()), replies

        # 成年男子 vs 少儿: the junior (black) receives two moves; 钱女 is a master: none.
        assert to_payload(node.boards["5"].snapshot())["handicap"] == {
            "receiver": "black",
            "moves": 2,
        }
        assert "handicap" not in to_payload(node.boards["7"].snapshot())
        await _wait(lambda: store.game_events("r1-b5", ("ready",)), "the ready event stored")
        ready = await store.game_events("r1-b5", ("ready",))
        assert ready[0]["data"]["handicap"] == {"receiver": "black", "moves": 2}

        now = int(time.time() * 1000)
        for board in ("5", "7"):
            assert (await station.send_command(board, "start", {"at": now})).ok
        # Board 6: the round was started 16 minutes ago and nobody has pressed: both are late.
        assert (await station.send_command("6", "start", {"at": now - 16 * MIN})).ok

        # -- board 5, 让二先: red moves, black moves twice, then red again -----------------
        b5 = node.boards["5"]
        for side in (Side.RED, Side.BLACK, Side.BLACK, Side.RED):
            before = b5.clock.moves(side)
            faces["5"].press(side)
            await _wait(lambda s=side, n=before: b5.clock.moves(s) == n + 1, f"{side} pressed")
        assert (b5.clock.moves(Side.RED), b5.clock.moves(Side.BLACK)) == (2, 2)
        assert b5.clock.running is Side.BLACK
        assert b5.referee.full_moves(2, 2) == 1  # the given move is no full move
        assert (
            await station.send_command("5", "result", {"winner": "black", "reason": "resignation"})
        ).ok

        # -- board 7: the second move-rule violation loses at once (the total is only 2 < 3) ---
        faces["7"].press(Side.RED)
        await _wait(lambda: node.boards["7"].clock.moves(Side.RED) == 1, "board 7 moved")
        for _ in range(2):
            args = {"side": "red", "reason": "move_rule_violation", "note": "摸子走子"}
            assert (await station.send_command("7", "foul", args)).ok
        await _wait(lambda: store.game_events("r1-b7", ("forfeit",)), "the forfeit stored")
        forfeits = await store.game_events("r1-b7", ("forfeit",))
        assert [(f["data"]["side"], f["data"]["reason"]) for f in forfeits] == [
            ("red", "move_rule_violations")
        ]

        # -- board 6: two late events, two pending forfeits, a proposed 0:0 -------------------
        async def pending_double() -> bool:
            results = await store.game_events("r1-b6", ("result",))
            return any(r["data"]["reason"] == "double_forfeit" for r in results)

        await _wait(pending_double, "the proposed double forfeit")
        late = await store.game_events("r1-b6", ("late",))
        assert sorted(e["data"]["side"] for e in late) == ["black", "red"]
        games = {g["game"]: o for g, o in await station.outcomes(1)}
        assert (games["r1-b6"].status, games["r1-b6"].proposed, games["r1-b6"].result) == (
            "pending",
            "0-0",
            None,
        )
        rows = {r.player: r for r in await station.standings()}
        assert rows["王男"].games == rows["赵男"].games == 0  # a proposal counts nowhere

        # The arbiter confirms both lateness forfeits: the 0:0 is confirmed.
        for ev in await store.game_events("r1-b6", ("forfeit",)):
            if ev["data"]["status"] == "pending":
                args = {"seq": ev["seq"], "status": "confirmed"}
                assert (await station.send_command("6", "resolve", args)).ok

        async def all_decided() -> bool:
            # The first confirmation alone decides board 6 for a moment (0-1, late); the
            # round is done when the second one has turned it into the 0:0.
            outcomes = await station.outcomes(1)
            b6 = next(o for g, o in outcomes if g["game"] == "r1-b6")
            return all(o.decided for _, o in outcomes) and b6.reason == "double_forfeit"

        await _wait(all_decided, "every game of the round confirmed")

    results = {g["game"]: o for g, o in await station.outcomes(1)}
    assert (results["r1-b5"].result, results["r1-b5"].reason) == ("0-1", "resignation")
    assert (results["r1-b6"].result, results["r1-b6"].reason) == ("0-0", "double_forfeit")
    assert (results["r1-b7"].result, results["r1-b7"].reason) == ("0-1", "move_rule_violations")

    csv = exports.round_results_csv(
        exports.round_results(await station.outcomes(1), station.scoring)
    )
    assert "r1-b6,王男,赵男,0-0,0,0,double_forfeit" in csv

    rows = {r.player: r for r in await station.standings()}
    assert {name: rows[name].points for name in rows} == {
        "李少": 2,
        "孙男": 2,
        "张男": 0,
        "钱女": 0,
        "王男": 0,  # both lost: 0:0
        "赵男": 0,
    }
    assert rows["王男"].games == rows["赵男"].games == 1
    assert rows["钱女"].fouls == 2  # both violations are confirmed fouls
