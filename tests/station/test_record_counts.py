"""The natural move limit and the early-draw check counted on the game records (录谱, issue 29
Build 3: "The natural move limit and the early-draw check can then use real moves (checks
counted per the profile) where a record exists"), through a real broker, a real node (its
simulated faces pressed as players do), the station's HTTP API and its store (SQLite and
PostgreSQL).

- Meishan 二、1 "自然限着为40回合，提出方的'将军'着数不计": a count of 4 moves, red claims. Board 1
  is recorded (red checks at plies 5 and 7): the node's count is reached at ply 8, the record's
  at ply 12, and the station says so then, once — also across two restarts, one while it waits,
  and with a move recorded before its press (a record ahead is counted up to the presses).
  Board 2 has no record: the clock's count raises the alert at ply 8 (the fallback).
- Wulong 三、1 "严禁20回合内无故协议和棋": a draw agreed after 7 moves; the warning says it
  counted the record where the record matches the presses, the presses where there is none.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.node import node_config, running_node
from support.station import ARBITER, ARBITER_PASSWORD, station_config, wait_until

from clock_service import Side

pytestmark = [pytest.mark.broker]

# A legal game of 14 plies (tests/xiangqi/test_counts.py): red checks at plies 5 and 7 only.
CHECKS_GAME = [
    "a0a1", "e9e8", "b2b5", "b9c7", "b5e5", "e8d8", "a1d1",
    "h7d7", "h2h7", "h9i7", "h7h1", "g6g5", "d1d3", "i6i5",
]  # fmt: skip


class Venue:
    """A station (restartable on its own store) with an HTTP client logged in as the chief,
    and one node with boards 1 and 2."""

    def __init__(self, config: Any, start_station: Any, node: Any) -> None:
        self.config, self.start_station, self.node = config, start_station, node
        self.station: Any = None
        self.client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        self.station = await self.start_station(self.config)
        self.client = httpx.AsyncClient(base_url=self.station.http_url, timeout=20)
        r = await self.client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        assert r.status_code == 200, r.text
        self.client.headers["X-CSRF-Token"] = r.json()["csrf"]

    async def restart(self) -> None:
        assert self.client is not None
        await self.client.aclose()
        await self.station.stop()
        await self.start()

    async def post(self, path: str, body: Any) -> dict[str, Any]:
        assert self.client is not None
        r = await self.client.post(path, json=body)
        assert r.status_code == 200, (path, body, r.text)
        return dict(r.json())

    async def press(self, board: str, ply: int) -> None:
        side = Side.RED if ply % 2 == 1 else Side.BLACK
        clock = self.node.boards[board].clock
        before = clock.moves(side)
        await asyncio.sleep(0.02)
        self.node.boards[board].face.press(side)
        await wait_until(lambda: clock.moves(side) == before + 1, 5.0, f"{board}: press {ply}")

    async def record(self, board: str, ply: int) -> None:
        await self.post(
            f"/api/records/{board}/moves", {"move": CHECKS_GAME[ply - 1], "ply": ply - 1}
        )

    async def alerts(self, kind: str, reason: str | None = None) -> dict[str, dict[str, Any]]:
        """board -> its alert of ``kind`` (and ``reason``; one at most per board)."""
        assert self.client is not None
        rows = (await self.client.get("/api/alerts?limit=200")).json()["alerts"]
        out: dict[str, dict[str, Any]] = {}
        for a in rows:
            if a["kind"] == kind and (reason is None or a["detail"].get("reason") == reason):
                assert a["board"] not in out, f"two {kind} alerts on board {a['board']}"
                out[a["board"]] = a
        return out


@contextlib.asynccontextmanager
async def venue(
    broker: Any, tmp: Path, db_url: str, start_station: Any, regulation: str
) -> AsyncIterator[Venue]:
    config = node_config(broker, "node-a", ["1", "2"], tmp / "node", regulation=regulation)
    async with running_node(config) as node:
        station = station_config(
            tmp, broker, regulation=regulation, database_url=db_url, command_timeout_s=3.0
        )
        v = Venue(station, start_station, node)
        await v.start()
        try:
            await v.station.import_players("name\n甲\n乙\n丙\n丁\n")
            await v.station.import_pairings("round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n")
            await v.post("/api/venue/cmd", {"cmd": "start", "args": {}})
            for b in ("1", "2"):
                await wait_until(
                    lambda b=b: node.boards[b].snapshot().phase == "running", 5.0, f"{b} running"
                )
            yield v
        finally:
            if v.client is not None:
                await v.client.aclose()


async def until(predicate: Callable[[], Any], what: str, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not await predicate():
            await asyncio.sleep(0.05)


async def test_the_move_limit_counts_the_records_moves_without_the_claimants_checks(
    broker_factory: Callable[..., Any], tmp_path: Path, db_url: str, start_station: Any
) -> None:
    async with venue(broker_factory(), tmp_path, db_url, start_station, "meishan-2016") as v:
        for b in ("1", "2"):
            await v.post(
                f"/api/boards/{b}/cmd",
                {"cmd": "move_count", "args": {"limit": 4, "claimant": "red"}},
            )
        for ply in range(1, 9):
            for b in ("1", "2"):
                await v.press(b, ply)
            await v.record("1", ply)
        # Board 2, no record: the clock's count at ply 8, at once.
        await until(lambda: _has(v, "2"), "board 2's move_limit alert")
        detail = (await v.alerts("move_limit"))["2"]["detail"]
        assert (detail["status"], detail["limit"], detail["count"]) == ("reached", 4, "presses")
        # Board 1: the node's count is reached too, the record's is 2 回合: held.
        await wait_until(lambda: len(v.station.counts.held) == 1, 5.0, "board 1 held")
        assert "1" not in await v.alerts("move_limit")

        await v.restart()  # the station stops while it holds board 1's count
        await wait_until(lambda: len(v.station.counts.held) == 1, 5.0, "held again at start")
        assert "1" not in await v.alerts("move_limit")
        # Move 9 recorded before its press (or before the press reaches the station): the
        # record, a move ahead, is counted up to the presses (2 回合), not left to the clock
        await v.record("1", 9)
        assert await v.station.counts.decide() == []
        assert "1" not in await v.alerts("move_limit")
        await v.press("1", 9)
        for ply in range(10, 12):
            await v.press("1", ply)
            await v.record("1", ply)
        await v.press("1", 12)  # the record a move behind: at the limit only with this press
        await until(lambda: _stored_presses(v, "1", 12), "press 12 at the station")
        assert await v.station.counts.decide() == []  # what the desk does every second
        assert "1" not in await v.alerts("move_limit")
        await v.record("1", 12)
        await until(lambda: _has(v, "1"), "board 1's move_limit alert")
        detail = (await v.alerts("move_limit"))["1"]["detail"]
        assert {k: detail[k] for k in ("count", "counted", "plies", "checks")} == {
            "count": "record", "counted": 4, "plies": 12, "checks": 2,
        }  # fmt: skip
        assert (detail["uncounted_checks"], detail["claimant"]) == (2, "red")
        assert not v.station.counts.held

        await v.restart()  # raised once: nothing held, nothing raised again
        assert not v.station.counts.held and await v.station.counts.decide() == []
        assert sorted(await v.alerts("move_limit")) == ["1", "2"]


async def _has(v: Venue, board: str) -> bool:
    return board in await v.alerts("move_limit")


async def _stored_presses(v: Venue, board: str, presses: int) -> bool:
    return bool((await v.station.records.view(board)).pairing.presses == presses)


async def test_an_early_draw_is_counted_on_a_record_that_matches_the_presses(
    broker_factory: Callable[..., Any], tmp_path: Path, db_url: str, start_station: Any
) -> None:
    async with venue(broker_factory(), tmp_path, db_url, start_station, "wulong-2015") as v:
        for ply in range(1, 15):
            for b in ("1", "2"):
                await v.press(b, ply)
            await v.record("1", ply)
        for b in ("1", "2"):
            await v.post(
                f"/api/boards/{b}/cmd",
                {"cmd": "result", "args": {"winner": None, "reason": "agreed_draw"}},
            )

        async def both() -> bool:
            return len(await v.alerts("warning", "draw_too_early")) == 2

        await until(both, "two draw_too_early warnings")
        warned = await v.alerts("warning", "draw_too_early")
        one, two = warned["1"]["detail"], warned["2"]["detail"]
        assert (one["count"], one["full_moves"], one["min_moves"]) == ("record", 7, 20)
        assert two["count"] == "presses" and "moves=7" in two["detail"]
