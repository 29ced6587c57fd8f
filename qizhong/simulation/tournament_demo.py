"""``qizhong demo --tournament meishan|wulong``: a whole event at high speed, then the prize list.

The venue is the demo's (``LocalVenue``: Mosquitto, the station, node processes with simulated
players who think ``speed`` times faster than life and now and then pause the clock). A
scripted chief arbiter runs the event through the station's HTTP API as the pages do: players
in, each round paired (by the standings so far) and sent, started for all boards at once,
every alert ruled (a pause foul confirmed or dismissed, a proposed forfeit confirmed, a flag
confirmed), a result entered when a game has gone on long enough. Meishan: after round 7 the
top four play the knockout (1v4, 2v3; a drawn semi-final goes to its 10′+3″ armageddon, 和棋黑胜;
the final and the third-place game) while the others play rounds 8–9.

It prints one ``game`` line per game (round, board, red, black, result, confirmed fouls) and one
``knockout`` line per knockout game, then the final standings with each player's prize as the
station's prize list (``/api/prizes``) pays it.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from qizhong.simulation.arbiter_client import ArbiterClient, player_names
from qizhong.simulation.venue import LocalVenue, VenueError

__all__ = ["EVENTS", "TournamentDirector"]


@dataclass(frozen=True)
class Event:
    regulation: str
    title: str
    rounds: int
    knockout_after: int | None


EVENTS = {
    "meishan": Event("meishan-2016", "2016年眉山市第二届“博达杯”公开赛", 9, 7),
    "wulong": Event("wulong-2015", "2015年重庆武隆首届“九巴树避暑山庄杯”象棋公开赛", 9, None),
}


def _say(line: str) -> str:
    print(line, flush=True)
    return line


_RESULT = {"1-0": "red", "0-1": "black", "1/2-1/2": "draw", "0-0": "double"}


class TournamentDirector:
    """The scripted chief arbiter: the whole event through the HTTP API."""

    def __init__(self, venue: LocalVenue, event: Event, *, seed: int, moves: int) -> None:
        self.venue, self.event = venue, event
        self.rng = random.Random(seed)
        self.moves = moves  # full moves after which a game's result is entered
        self.api = ArbiterClient(venue.url)
        self.players = player_names(2 * venue.boards, self.rng)
        self.met: set[tuple[str, str]] = set()
        self.ruled: dict[str, int] = {}

    # -- the HTTP API, as the pages call it --------------------------------------------------
    def call(self, method: str, path: str, body: Any = None, *, raw: bool = False) -> Any:
        return self.api.request(method, path, body, raw=raw)

    def command(self, board: str, cmd: str, args: dict[str, Any] | None = None) -> Any:
        return self.call("POST", f"/api/boards/{board}/cmd", {"cmd": cmd, "args": args or {}})

    def wait_online(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            boards = (self.call("GET", "/api/boards") or {}).get("boards", [])
            if sum(bool(v.get("online")) for v in boards) >= self.venue.boards:
                return
            time.sleep(0.3)
        raise VenueError(f"not every board came online within {timeout_s:.0f} s")

    # -- the event ---------------------------------------------------------------------------
    def run(self) -> list[str]:
        self.api.login("arbiter", self.venue.arbiter_password)
        self.wait_online()
        csv = "name,tags\n" + "".join(f"{p},\n" for p in self.players)
        reply = self.call("POST", "/api/players", csv, raw=True)
        if not reply or reply.get("error"):
            raise VenueError(f"the station refused the players: {reply}")
        lines: list[str] = []
        everyone = list(self.players)
        ko_after = self.event.knockout_after
        placings: list[str] = []
        for round_no in range(1, self.event.rounds + 1):
            if ko_after is not None and round_no == ko_after + 1:
                placings, ko_lines = self.knockout(ko_after)
                lines += ko_lines
                everyone = [p for p in everyone if p not in placings]
            lines += self.swiss_round(round_no, everyone)
        return lines + self.prize_list(placings)

    def standings(self, after: int | None = None) -> list[dict[str, Any]]:
        q = f"?round={after}" if after else ""
        body = self.call("GET", f"/api/standings{q}") or {}
        return list(body.get("standings", []))

    def pair(self, round_no: int, players: list[str]) -> list[tuple[str, str]]:
        """Swiss-like: the standings' order, each against the next one not met yet."""
        if round_no == 1:
            order = list(players)
        else:
            ranked = [r["player"] for r in self.standings(round_no - 1)]
            order = [p for p in ranked if p in players] + [p for p in players if p not in ranked]
        pairs = []
        while order:
            a = order.pop(0)
            b = next((p for p in order if (a, p) not in self.met), order[0])
            order.remove(b)
            pairs.append((a, b) if self.rng.random() < 0.5 else (b, a))
            self.met |= {(a, b), (b, a)}
        return pairs

    def swiss_round(self, round_no: int, players: list[str]) -> list[str]:
        pairs = self.pair(round_no, players)
        rows = ["round,board,red,black"] + [
            f"{round_no},{b},{red},{black}" for b, (red, black) in enumerate(pairs, start=1)
        ]
        reply = self.call("POST", "/api/pairings", "\n".join(rows) + "\n", raw=True)
        if not reply or reply.get("error"):
            raise VenueError(f"the station refused round {round_no}'s pairings: {reply}")
        boards = [str(b) for b in range(1, len(pairs) + 1)]
        for board in boards:
            self.command(board, "start")
        games = self.play(f"r{round_no}-b", boards, round_no)
        return [
            _say(
                f"game r{round_no} b{g['board']} {g['red']} {g['black']} "
                f"{_RESULT[g['result']]} {g['fouls']['red']['confirmed']} "
                f"{g['fouls']['black']['confirmed']}"
            )
            for g in games
        ]

    def play(self, prefix: str, boards: list[str], round_no: int | None) -> list[dict[str, Any]]:
        """Until every game on ``boards`` is decided: rule alerts, enter results."""
        entered: set[str] = set()
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            self.rule_alerts()
            views = {str(v.get("board")): v for v in self.call("GET", "/api/boards")["boards"]}
            for board in boards:
                state = (views.get(board) or {}).get("state") or {}
                if not str(state.get("game", "")).startswith(prefix) or board in entered:
                    continue
                if state.get("phase") == "running" and min(state["moves"].values()) >= self.moves:
                    self.enter_result(board, state)
                    entered.add(board)
                elif state.get("phase") == "paused" and not state.get("pending"):
                    self.command(board, "resume")  # the pause is ruled on: play on
            if round_no is not None:
                games = self.call("GET", f"/api/games?round={round_no}")["games"]
                # decided, and nothing of it left to rule (a pause foul raised as the result
                # was entered): the next round's pairings are refused while a ruling waits
                if (
                    games
                    and all(g["status"] == "confirmed" for g in games)
                    and not self.open_rulings({g["game"] for g in games})
                ):
                    return list(games)
            elif len(entered) == len(boards):
                return []
            time.sleep(0.3)
        raise VenueError(f"round {round_no} was not decided within 10 minutes")

    def enter_result(self, board: str, state: dict[str, Any]) -> None:
        tiebreak = str(state.get("game", "")).endswith("-tb")
        if str(state.get("game", "")) == "ko-sf1" or tiebreak:
            winner = None  # the demo's drawn semi-final and its drawn armageddon
        else:
            winner = self.rng.choices(["red", "black", None], weights=(4, 3, 3))[0]
        self.command(board, "result", {"winner": winner, "reason": "arbiter"})

    def open_rulings(self, games: set[str]) -> bool:
        alerts = (self.call("GET", "/api/alerts?status=open&limit=200") or {}).get("alerts", [])
        return any(a.get("game") in games for a in alerts)

    def rule_alerts(self) -> None:
        body = self.call("GET", "/api/alerts?status=open&limit=200") or {}
        for alert in body.get("alerts", []):
            kind = alert["kind"]
            if kind == "foul_pending":
                action = "confirm" if self.rng.random() < 0.6 else "dismiss"
            elif kind in ("forfeit_pending", "flag", "shutdown", "late"):
                action = "confirm"
            else:
                action = "ack"
            self.call("POST", f"/api/alerts/{alert['id']}", {"action": action})
            key = f"{kind} {action}"
            self.ruled[key] = self.ruled.get(key, 0) + 1
            if kind == "flag":  # the flag's loss, entered if confirming it left it pending
                game = self.call("GET", f"/api/games/{alert['game']}") or {}
                if game.get("status") != "confirmed":
                    winner = "black" if alert.get("side") == "red" else "red"
                    self.command(alert["board"], "result", {"winner": winner, "reason": "flag"})

    # -- the knockout --------------------------------------------------------------------------
    def knockout(self, after: int) -> tuple[list[str], list[str]]:
        view = self.call("POST", "/api/knockout/start", {"seed": 2016})
        if not view or not view.get("started"):
            top = [r["player"] for r in self.standings(after)[:4]]
            view = self.call("POST", "/api/knockout/start", {"seed": 2016, "top": top})
        lines: list[str] = []
        boards = {"ko-sf1": "1", "ko-sf2": "2", "ko-f": "1", "ko-3": "2"}
        while not view.get("finished"):
            if view.get("pending_choices"):
                choice = view["pending_choices"][0]
                # 由慢棋执黑者选择先后: he takes black (和棋黑胜)
                self.call("POST", f"/api/knockout/choices/{choice['game']}", {"side": "black"})
            proposed = self.call("GET", "/api/knockout")["proposed"]
            for game in proposed:
                board = game["board"] or boards[game["id"]]
                self.call("POST", f"/api/knockout/games/{game['id']}/confirm", {"board": board})
                self.command(board, "start")
            if proposed:
                self.play("ko-", [g["board"] or boards[g["id"]] for g in proposed], None)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                view = self.call("GET", "/api/knockout")
                done = {g["id"] for g in view["games"] if g["result"] is not None}
                if all(g["id"] in done for g in proposed) or view.get("finished"):
                    break
                self.rule_alerts()
                time.sleep(0.3)
            else:
                raise VenueError(f"the knockout games {[g['id'] for g in proposed]} stay open")
        for g in view["games"]:
            lines.append(
                _say(f"knockout {g['id']} {g['red']} {g['black']} {g['result']} {g['tc']}")
            )
        return [p["player"] for p in view["placings"]], lines

    def prize_list(self, placings: list[str]) -> list[str]:
        """The final standings, each place with the station's prize (its main list, yuan;
        0: none — Wulong pays only 30 % of the entrants under 80, as /prizes does)."""
        rows = [r for r in self.standings() if r["player"] not in placings]
        main = self.call("GET", "/api/prizes")["lists"][0]
        paid = {r["player"]: r["prize"] or "0" for r in main["rows"]}
        lines = [f"== {self.event.title}: 最终名次 final standings =="]
        place = 0
        for player in placings:
            place += 1
            lines.append(f"standing {place} {player} knockout {paid.get(player, '0')}")
        for r in rows:
            place += 1
            lines.append(
                f"standing {place} {r['player']} {r['points']} {r['progressive']} {r['wins']} "
                f"{r['fouls']} {r['black_games']} {paid.get(r['player'], '0')}"
            )
        ruled = ", ".join(f"{k} {v}" for k, v in sorted(self.ruled.items()))
        lines.append(f"alerts ruled: {ruled or 'none'}")
        for line in lines:
            _say(line)
        return lines


def run_tournament(venue: LocalVenue, name: str, *, seed: int, moves: int) -> int:
    director = TournamentDirector(venue, EVENTS[name], seed=seed, moves=moves)
    director.run()
    return 0
