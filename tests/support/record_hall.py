"""A hall of boards for the records' tests (tests/web/test_record_duties.py): a private
Mosquitto, in-process nodes with simulated faces, the station with its web, and the helpers
that play, record and read the round through the station's HTTP API and the arbiter page."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from tournament.hall import wait_for
from tournament.seed_rules import Game

from clock_service import Side
from support.broker import STANDARD_NODES
from support.node import node_config, running_node
from support.station import ARBITER, ARBITER_PASSWORD, station_config
from venue_station.web.web_server import StationWithWeb

MASTER = "大师甲"


class Hall:
    """The station (restartable on its own database), the nodes, an HTTP client as the chief."""

    def __init__(self, broker: Any, tmp: Path, regulation: str) -> None:
        self.broker, self.tmp, self.regulation = broker, tmp, regulation
        self.config = station_config(tmp, broker, regulation=regulation, command_timeout_s=3.0)
        self.station: Any = None
        self.client: httpx.AsyncClient | None = None
        self.csrf: dict[str, str] = {}
        self.nodes: dict[str, Any] = {}
        self.stack = contextlib.AsyncExitStack()

    async def start(self) -> None:
        self.station = StationWithWeb(self.config)
        await self.station.start()
        self.client = httpx.AsyncClient(base_url=self.station.http_url, timeout=20)
        r = await self.client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        assert r.status_code == 200, r.text
        self.csrf = {"X-CSRF-Token": r.json()["csrf"]}

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        await self.station.stop()

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def post(self, path: str, body: Any = None, **kw: Any) -> httpx.Response:
        assert self.client is not None
        return await self.client.post(path, json=body, headers=self.csrf, **kw)

    async def get(self, path: str) -> Any:
        assert self.client is not None
        r = await self.client.get(path)
        assert r.status_code == 200, (path, r.text)
        return r.json()

    def board(self, board: str) -> Any:
        return next(n.boards[board] for n in self.nodes.values() if board in n.boards)

    async def press(self, board: str, side: Side) -> None:
        clock = self.board(board).clock
        before = clock.moves(side)
        self.board(board).face.press(side)
        await until(lambda: clock.moves(side) == before + 1, f"board {board}: {side} pressed")

    async def play_round(
        self, round_no: int, pairs: list[tuple[str, str]], results: dict[str, str | None]
    ) -> None:
        """Import and send the round, start it, two moves a side, enter the results."""
        text = "round,board,red,black\n" + "".join(
            f"{round_no},{b},{red},{black}\n" for b, (red, black) in enumerate(pairs, 1)
        )
        r = await self.post("/api/pairings?send=1", content=text.encode())
        assert r.status_code == 200, r.text
        r = await self.post("/api/venue/cmd", {"cmd": "start", "args": {}})
        assert r.status_code == 200, r.text
        for b in results:
            await until(lambda b=b: self.board(b).snapshot().phase == "running", f"{b} running")
        for b in results:
            for _ in range(2):
                await self.press(b, Side.RED)
                await self.press(b, Side.BLACK)
        for b, winner in results.items():
            r = await self.post(
                f"/api/boards/{b}/cmd",
                {"cmd": "result", "args": {"winner": winner, "reason": "arbiter"}},
            )
            assert r.status_code == 200, r.text

    async def record(self, board: str, moves: list[str], *, game: str | None = None) -> None:
        for ply, move in enumerate(moves):
            body: dict[str, Any] = {"move": move, "ply": ply}
            if game is not None:
                body["game"] = game
            r = await self.post(f"/api/records/{board}/moves", body)
            assert r.status_code == 200, (board, move, r.text)

    async def duties(self, round_no: int) -> dict[str, dict[str, Any]]:
        view = await self.get(f"/api/record-duties?round={round_no}")
        return {d["board"]: d for d in view["duties"]}

    async def record_alerts(self, round_no: int = 1) -> dict[str, dict[str, Any]]:
        """board -> the record_missing alert of its game of ``round_no``."""
        alerts = (await self.get("/api/alerts?limit=500"))["alerts"]
        return {
            a["board"]: a
            for a in alerts
            if a["kind"] == "record_missing" and a["game"] == f"r{round_no}-b{a['board']}"
        }


async def until(predicate: Callable[[], Any], what: str, timeout: float = 15.0) -> None:
    """``tournament.hall.wait_for`` with this hall's longer patience (twelve boards)."""
    await wait_for(predicate, what, timeout)


@contextlib.asynccontextmanager
async def open_hall(
    broker: Any,
    tmp: Path,
    regulation: str,
    nodes: list[str],
    players: list[str],
    tags: dict[str, str],
) -> Any:
    """The station and the nodes named, the players imported (``tags``: name -> tags)."""
    hall = Hall(broker, tmp, regulation)
    await hall.start()
    try:
        async with hall.stack:
            for node in nodes:
                config = node_config(
                    broker, node, STANDARD_NODES[node], tmp / node, regulation=regulation
                )
                hall.nodes[node] = await hall.stack.enter_async_context(running_node(config))
            csv = "name,tags\n" + "".join(f"{p},{tags.get(p, '')}\n" for p in players)
            r = await hall.post("/api/players", content=csv.encode())
            assert r.status_code == 200, r.text
            yield hall
    finally:
        await hall.stop()


def seated(players: list[str], boards: int) -> list[tuple[str, str]]:
    return [(players[2 * b], players[2 * b + 1]) for b in range(boards)]


def swapped(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(black, red) for red, black in pairs]


def responsible(red: str, black: str, winner: str | None) -> str:
    """The seeds' rule: 由胜方录谱，和棋由红方录谱."""
    return black if winner == "black" else red


def games_of(
    round_no: int, pairs: list[tuple[str, str]], results: dict[str, str | None],
    fouls: dict[str, int],
) -> list[Game]:  # fmt: skip
    out = []
    for b, winner in results.items():
        red, black = pairs[int(b) - 1]
        out.append(
            Game(
                round=round_no, red=red, black=black, result=winner or "draw",
                red_fouls=fouls.get(red, 0), black_fouls=fouls.get(black, 0),
            )
        )  # fmt: skip
    return out


def table(rows: list[Any]) -> list[tuple[str, int, int, int, int, int]]:
    return [(r.player, r.points, r.progressive, r.wins, r.fouls, r.black_games) for r in rows]


def shown(rows: list[dict[str, Any]]) -> list[tuple[str, int, int, int, int, int]]:
    keys = ("player", "points", "progressive", "wins", "fouls", "black_games")
    return [tuple(r[k] for k in keys) for r in rows]  # type: ignore[misc]


async def rule_on_page(page: Any, board: str, action: str) -> None:
    """Tap 确认 / 驳回 on the open record_missing alert of ``board``, wait until it is ruled."""
    row = page.locator(f'#alerts li[data-kind="record_missing"][data-board="{board}"]')
    await row.locator(f'button[data-action="{action}"]').wait_for()
    alert_id = await row.first.get_attribute("data-id")
    await row.first.locator(f'button[data-action="{action}"]').evaluate("b => b.click()")
    await page.wait_for_function(
        f"""() => {{ const r = document.querySelector('#alerts li[data-id="{alert_id}"]');
           return !r || !r.querySelector('button[data-action="{action}"]'); }}"""
    )


WULONG_RESULTS: dict[str, str | None] = {
    "1": "red", "2": "black", "3": None, "4": "red", "5": "black", "6": None,
    "7": "red", "8": "black", "9": "red", "10": None, "11": "red", "12": "black",
}  # fmt: skip


async def record_alerts_at_least(hall: Hall, n: int, round_no: int = 1) -> bool:
    return len(await hall.record_alerts(round_no)) >= n


def hall_web(hall: Hall) -> Any:
    """What support.web.login needs of a served station: its URL."""

    class _Web:
        url = hall.station.http_url

    return _Web()
