"""One whole event run through the pages: what the arbiter did, what the pages then showed.

``run_event`` starts a private Mosquitto, the station (SQLite) with its web, three in-process
nodes whose boards have simulated faces (the players), and one chromium context with the
pairing, arbiter and standings pages. Registration → each round (pairs list in, sent, started,
played, alerts ruled, results entered) → Meishan's knockout after round 7 → the rest to round 9
→ (Wulong) the juniors' players list → the prize list read as the organiser reads it (/prizes,
its API and CSV: prize_page.py).
It returns an :class:`EventRecord`; the tests assert on it. A step that the station gets wrong
is recorded, not raised, so every later check still runs (the record says what went wrong).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.broker import MosquittoProcess, new_broker_dir, standard_roster
from support.node import node_config, running_node
from support.station import ARBITER, ARBITER_PASSWORD, station_config
from tournament.hall import ArbiterHall, Players, wait_for
from tournament.script import (
    GROUPS,
    Plan,
    groups_csv,
    pair_round,
    pairs_text,
    player_names,
    players_trf,
)
from tournament.seed_rules import SEEDS, Game, rank

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace
from venue_station.web.web_server import StationWithWeb

__all__ = ["EventRecord", "EventSize", "run_event"]

NODES = {"node-a": ["1", "2"], "node-b": ["3", "4"], "node-c": [str(b) for b in range(5, 13)]}
LATE_ROUND = 3  # the round whose start was announced 14m53s before the boards got it
# Boards 1–3 of rounds 1–3 carry the stories; the rest of the event is played and entered.
STORIES = {
    "meishan-2016": {
        1: ("flag_confirmed", "flag_dismissed", "draw"),
        2: ("pause_confirmed", "pause_dismissed", "switched_off"),
        3: ("late", "no_show", "late_alert"),
        4: ("switched_off_alert",),
    },
    "wulong-2015": {
        1: ("flag_confirmed", "flag_dismissed", "draw"),
        2: ("three_fouls", "pause_dismissed", "switched_off"),
        3: ("late", "no_show"),
    },
}


@dataclass(frozen=True)
class EventSize:
    players: int = 16
    moves: int = 2  # presses per side in a plain game


@dataclass
class EventRecord:
    regulation: str
    players: list[str]
    games: list[Game] = field(default_factory=list)  # the Swiss games as they happened
    plans: list[Plan] = field(default_factory=list)
    station_games: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)  # the pairing page's answers
    standings: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # "7", "final"
    ko_matches: list[tuple[str, str, str, str]] = field(default_factory=list)
    ko_view: dict[str, Any] = field(default_factory=dict)
    ko_top: list[str] = field(default_factory=list)  # the four the station put in
    armageddon: dict[str, Any] = field(default_factory=dict)  # the tie-break game as played
    problems: list[str] = field(default_factory=list)  # steps the station got wrong
    # (round, board, alert kind, action) of every button the arbiter pressed on an alert
    ruled: list[tuple[int, str, str, str]] = field(default_factory=list)
    # the groups the organiser gave (players lists, script.GROUPS): name → tag codes
    tags: dict[str, set[str]] = field(default_factory=dict)
    group_imports: list[str] = field(default_factory=list)  # the pairing page's answers
    prizes: dict[str, Any] = field(default_factory=dict)  # prize_page.read_prizes
    prizes_before: dict[int, Any] = field(default_factory=dict)  # round → /api/prizes before it
    final_title: str = ""  # the standings page's title once the event is over

    @property
    def seed(self) -> Any:
        return SEEDS[self.regulation]

    def station_game(self, round_no: int, board: str) -> dict[str, Any]:
        return next(g for g in self.station_games[round_no] if g["board"] == board)

    def plan(self, kind: str) -> Plan:
        return next(p for p in self.plans if p.kind == kind)


T0 = time.monotonic()


def _t(what: str) -> None:
    if os.environ.get("QZ_EVENT_TRACE"):
        print(f"{time.monotonic() - T0:7.2f} {what}", flush=True)


def _winner(rng: random.Random) -> str:
    return rng.choices(["red", "black", "draw"], weights=(4, 3, 3))[0]


class _OnGame:
    """The hall, ruling only the alerts of one game (a board's older alerts are another's)."""

    def __init__(self, hall: ArbiterHall, game: str) -> None:
        self.hall, self.game = hall, game

    def __getattr__(self, name: str) -> Any:
        return getattr(self.hall, name)

    async def rule(self, board: str, kinds: tuple[str, ...], action: str, **kw: Any) -> str:
        return await self.hall.rule(board, kinds, action, game=self.game, **kw)


class _Event:
    def __init__(self, regulation: str, size: EventSize, hall: ArbiterHall, players: Players):
        self.seed = SEEDS[regulation]
        self.size = size
        self.hall = hall
        self.players = players
        self.rng = random.Random(2016 if regulation.startswith("meishan") else 2015)
        names = player_names(size.players, seed=size.players)
        self.record = EventRecord(regulation, names)
        self.ranks = {n: i for i, n in enumerate(names, start=1)}
        self.shots = Path(".")  # where the prize page's screenshots go (run_event's tmp)

    async def register(self) -> None:
        text = players_trf("棋钟验收赛", self.record.players)
        self.record.imports.append(
            await self.hall.upload("players.trf", text, kind="trf", round_no=None)
        )
        await self.groups(0)

    async def groups(self, stage: int) -> None:
        """The organiser's players list with the groups (组别), on the pairing page."""
        given = GROUPS.get(self.record.regulation, ())
        if stage >= len(given):
            return
        text, tags = groups_csv(self.record.players, given[stage])
        self.record.group_imports.append(
            await self.hall.upload(f"groups-{stage}.csv", text, kind="players", round_no=None)
        )
        for name, codes in tags.items():
            self.record.tags[name] = self.record.tags.get(name, set()) | codes

    # -- a Swiss round -------------------------------------------------------------------------
    async def swiss_round(self, round_no: int, entrants: list[str]) -> None:
        pairs = pair_round(self.seed, entrants, self.record.games, round_no)
        stories = STORIES[self.record.regulation].get(round_no, ())
        plans = []
        for i, (red, black) in enumerate(pairs):
            kind = stories[i] if i < len(stories) else "result"
            winner = _winner(self.rng)
            if kind in ("pause_confirmed",):
                winner = "red"
            elif kind == "pause_dismissed":
                winner = "black"
            plans.append(Plan(round=round_no, board=str(i + 1), red=red, black=black,
                              kind=kind, winner=winner, moves=self.size.moves))  # fmt: skip
        self.record.plans += plans
        text = pairs_text(pairs, self.ranks)
        answer = await self.hall.upload(f"r{round_no}.pairs", text, kind="pairs", round_no=round_no)
        self.record.imports.append(answer)
        _t(f"r{round_no} imported")
        for p in plans:
            await self.hall.card_shows(p.board, p.red, p.black)
        _t("cards")
        late = round_no == LATE_ROUND
        await self.hall.start_round(minutes_ago=15 - 7 / 60 if late else None)
        for p in plans:
            await self.players.running(p.board)
        _t("running")
        for p in plans:  # first what must happen at once (the clock runs out, the late wait)
            await self.opening(p, late=late)
        _t("opened")
        for p in plans:
            await self.story(p)
            _t(f"story {p.board}")
        for p in plans:
            try:
                await self.hall.finished(p.board, timeout=10.0)  # 3 s ran out once, beside a run
            except Exception:
                # what the page said and what the board is: for the one who reads the failure
                log = await self.hall.arbiter.eval_on_selector_all(
                    "#log li", "els => els.slice(0, 4).map((e) => e.textContent)"
                )
                board = (await self.hall.api("GET", f"/api/boards/{p.board}"))["body"]
                state = {k: (board.get("state") or {}).get(k) for k in ("game", "phase", "result")}
                self.record.problems.append(
                    f"r{round_no} board {p.board} ({p.kind}) not finished: {state}; log {log}"
                )
                # the arbiter page has no reset: the board is cleared through the API
                for cmd in ("pause", "reset"):
                    await self.hall.api("POST", f"/api/boards/{p.board}/cmd", {"cmd": cmd})
        self.record.games += [p.expected() for p in plans]
        await self.read_round(round_no)
        self.record.ruled += [(round_no, *r) for r in self.hall.ruled]
        self.hall.ruled.clear()

    async def opening(self, p: Plan, *, late: bool) -> None:
        board, players = p.board, self.players
        if p.kind in ("flag_confirmed", "flag_dismissed"):
            # red, on move, is left four seconds (the arbiter's time adjustment on the page,
            # from the time the card shows)
            snap = players.board(board).snapshot()
            left_s = (snap.red_ms - (time.time_ns() // 1_000_000 - snap.ts)) // 1000
            await self.hall.adjust(board, "red", -(left_s - 5))
        elif p.kind in ("late", "late_alert"):
            await players.press(board, Side.RED)  # red is there; black never comes
        elif p.kind == "no_show":
            pass
        elif late:
            await players.play(board, 1)  # both are seated and move before the 15 minutes

    async def story(self, p: Plan) -> None:
        players, board = self.players, p.board
        hall = _OnGame(self.hall, f"r{p.round}-b{board}")
        if p.kind == "flag_confirmed":
            await hall.rule(board, ("flag",), "confirm")
        elif p.kind == "flag_dismissed":
            await hall.rule(board, ("flag",), "dismiss")
            await hall.enter_result(board, "draw")
        elif p.kind in ("pause_confirmed", "pause_dismissed"):
            await players.play(board, p.moves)
            side = Side.RED
            if p.kind == "pause_dismissed":
                await players.press(board, Side.RED)
                side = Side.BLACK
            players.faces[board].pause_key()
            action = "confirm" if p.kind == "pause_confirmed" else "dismiss"
            await hall.rule(board, ("foul_pending",), action, side=side.value)
            await hall.board_button(board, "resume")
            await players.running(board)
            await players.press(board, side)
            await hall.enter_result(board, p.winner)
        elif p.kind == "three_fouls":
            for n in range(3):
                players.faces[board].pause_key()
                await hall.rule(board, ("foul_pending",), "confirm", side="red")
                if n < 2:
                    await hall.board_button(board, "resume")
                    await players.running(board)
                    await players.play(board, 1)
            # the third confirmed foul: the loss is decided at once (立即判负), or proposed
            game = f"r{p.round}-b{board}"

            async def decided() -> bool:
                g = (await hall.api("GET", f"/api/games/{game}"))["body"]
                return g["status"] == "confirmed"

            try:
                await wait_for(decided, f"{game} decided by the third foul", timeout=2.0)
            except AssertionError:
                await hall.rule(board, ("forfeit_pending",), "confirm", side="red", timeout=5.0)
        elif p.kind in ("switched_off", "switched_off_alert"):
            await players.press(board, Side.RED)  # black on move switches the clock off
            face = players.faces[board]
            face.power_off()
            await asyncio.sleep(0.5)
            face.power_on()
            # the arbiter confirms the proposed loss, or (_alert) the 擅自关闭棋钟 alert itself
            kinds = ("shutdown",) if p.kind == "switched_off_alert" else ("forfeit_pending",)
            await hall.rule(board, (*kinds, "shutdown"), "confirm", side="black")
        elif p.kind in ("late", "late_alert"):
            kinds = ("late",) if p.kind == "late_alert" else ("forfeit_pending",)
            await hall.rule(board, (*kinds, "late"), "confirm", side="black")
        elif p.kind == "no_show":
            await hall.rule(board, ("forfeit_pending", "late"), "confirm", side="red")
            with contextlib.suppress(AssertionError):  # one alert for both is as good
                await hall.rule(board, ("forfeit_pending", "late"), "confirm", side="black",
                                timeout=3.0)  # fmt: skip
        else:
            await players.play(board, p.moves)
            _t("  played")
            await hall.enter_result(board, "draw" if p.kind == "draw" else p.winner)
            _t("  entered")

    async def read_round(self, round_no: int) -> None:
        async def decided() -> bool:
            r = await self.hall.api("GET", f"/api/games?round={round_no}")
            self.record.station_games[round_no] = r["body"]["games"]
            return all(g["status"] == "confirmed" for g in r["body"]["games"])

        try:
            await wait_for(decided, f"round {round_no} decided", timeout=3.0)
        except AssertionError as exc:
            self.record.problems.append(str(exc))
            for g in self.record.station_games[round_no]:
                if g["status"] != "confirmed":
                    self.record.problems.append(f"  {g['game']}: {g['status']} {g['proposed']}")
                    if os.environ.get("QZ_EVENT_TRACE"):
                        b = (await self.hall.api("GET", f"/api/boards/{g['board']}"))["body"]
                        for ev in b.get("events", [])[:12]:
                            print("   ", ev["seq"], ev["type"], ev.get("data"), ev.get("txn"))

    # -- the knockout (Meishan) ----------------------------------------------------------------
    async def knockout(self, after: int) -> None:
        """The knockout on the arbiter page's knockout section: 开始淘汰赛, 确认上台 for each
        game, the armageddon's colour choice; the results on the boards (录入结果)."""
        hall = self.hall
        mine = rank(self.seed, self.record.games, self.record.players, last=after)
        if not await hall.ko_start(2016):  # a shared 4th place: the chief names the four
            self.record.problems.append("knockout start: the page did not start it")
            top = [r.player for r in mine[:4]]
            started = await hall.api("POST", "/api/knockout/start", {"seed": 2016, "top": top})
            self.record.problems.append(f"knockout start with the four named: {started}")
            await wait_for(lambda: hall.ko_flag("started"), "the knockout shown started")
        view = await hall.ko_read()
        self.record.ko_top = list(view["top"])
        semis = {g["id"]: g for g in view["proposed"]}
        sf1 = await self.ko_game(semis["ko-sf1"], "1", "draw")
        sf2 = await self.ko_game(semis["ko-sf2"], "2", "red")

        async def choice() -> Any:
            v = await hall.ko_read()
            return v if v.get("pending_choices") else None

        await wait_for(choice, "the colour choice after the drawn semi-final")
        chooser = (await choice())["pending_choices"][0]["chooser"]
        # 和棋黑胜: the slow game's black takes black
        await hall.ko_choose("ko-sf1", "black")

        async def armageddon() -> Any:
            v = await hall.ko_read()
            return next((g for g in v["proposed"] if g["id"] == "ko-sf1-tb"), None)

        await wait_for(armageddon, "the armageddon proposed")
        tb = await armageddon()
        self.record.armageddon = {"chooser": chooser, **tb}
        # the armageddon is drawn too: black wins the match
        await self.ko_game(tb, tb["board"] or "1", "draw")
        sf1_winner = tb["black"]
        self.record.ko_matches += [
            ("sf1", sf1["red"], sf1["black"], "red" if sf1_winner == sf1["red"] else "black"),
            ("sf2", sf2["red"], sf2["black"], "red"),
        ]

        async def finals() -> Any:
            v = await hall.ko_read()
            ids = {g["id"]: g for g in v["proposed"]}
            return ids if {"ko-f", "ko-3"} <= set(ids) else None

        await wait_for(finals, "the final and the third-place game proposed")
        games = await finals()
        f = await self.ko_game(games["ko-f"], "1", "black")
        third = await self.ko_game(games["ko-3"], "2", "red")
        self.record.ko_matches += [
            ("final", f["red"], f["black"], "black"),
            ("third", third["red"], third["black"], "red"),
        ]

        async def placed() -> bool:
            v = await hall.ko_read()
            self.record.ko_view = v
            return bool(v.get("finished")) and len(v["placings"]) == 4

        try:
            await wait_for(placed, "the knockout finished", timeout=5.0)
        except AssertionError as exc:
            self.record.problems.append(str(exc))

    async def ko_game(self, game: dict[str, Any], board: str, result: str) -> dict[str, Any]:
        hall, players = self.hall, self.players
        if not await hall.ko_confirm(game["id"], board):
            self.record.problems.append(f"{game['id']} confirm: not shown on board {board}")
        await hall.card_shows(board, game["red"], game["black"])
        await hall.board_button(board, "start")
        await players.running(board)
        await players.play(board, self.size.moves)
        await hall.enter_result(board, result)
        await hall.finished(board)
        return game

    async def run(self) -> EventRecord:
        await self.register()
        everyone = list(self.record.players)
        ko_after = self.seed.knockout_after
        for round_no in range(1, self.seed.rounds + 1):
            if round_no in (self.seed.rounds, (ko_after or 0) + 1):  # the list while provisional
                self.record.prizes_before[round_no] = await self.hall.api("GET", "/api/prizes")
            if ko_after is not None and round_no == ko_after + 1:
                self.record.standings[str(ko_after)] = await self.hall.standings(ko_after)
                await self.knockout(ko_after)
                everyone = [p for p in everyone if p not in self.record.ko_top]
            await self.swiss_round(round_no, everyone)
        self.record.standings["final"] = await self.hall.standings()
        self.record.final_title = await self.hall.standings_page.inner_text("#title")
        await self.groups(1)  # the juniors, told before the prize-giving (script.GROUPS)
        self.record.prizes = await self.hall.prizes(self.shots)
        return self.record


async def run_event(browser: Any, tmp: Path, regulation: str, size: EventSize) -> EventRecord:
    """The whole event; everything started here is stopped before it returns."""
    boards = [str(b) for b in range(1, size.players // 2 + 1)]
    directory = new_broker_dir()
    broker = MosquittoProcess.from_roster(standard_roster(), directory, start=False).start()
    station = StationWithWeb(station_config(tmp, broker, regulation=regulation))
    faces = {b: SimulatedFace(mode="idle") for b in boards}
    try:
        await station.start()
        async with contextlib.AsyncExitStack() as stack:
            nodes = []
            for node, allowed in NODES.items():
                mine = [b for b in boards if b in allowed]
                if mine:
                    config = node_config(broker, node, mine, tmp / node, regulation=regulation)
                    sub = {b: faces[b] for b in mine}
                    nodes.append(await stack.enter_async_context(running_node(config, sub)))
            context = await browser.new_context(
                viewport={"width": 1366, "height": 768}, bypass_csp=True
            )
            stack.push_async_callback(context.close)
            errors: list[str] = []
            pages = []
            for _ in range(3):
                pg = await context.new_page()
                pg.on("pageerror", lambda exc: errors.append(str(exc)))
                pg.set_default_timeout(15_000)
                pages.append(pg)
            arbiter, pairing, standings = pages
            url = station.http_url
            await arbiter.goto(f"{url}/arbiter")
            await arbiter.fill("#username", ARBITER)
            await arbiter.fill("#password", ARBITER_PASSWORD)
            await arbiter.click("#login-submit")
            await arbiter.wait_for_selector("#station:not([hidden])")
            await pairing.goto(f"{url}/pairing")
            await pairing.wait_for_selector("#login-needed[hidden]", state="attached")
            hall = ArbiterHall(arbiter, pairing, standings, url)
            event = _Event(regulation, size, hall, Players(faces, nodes))
            event.shots = tmp
            record = await event.run()
            record.problems += [f"JavaScript error: {e}" for e in errors]
            return record
    finally:
        await station.stop()
        broker.close()
        shutil.rmtree(directory, ignore_errors=True)
