"""``qizhong demo``: a simulated venue on this machine, with the display and arbiter pages.

A private Mosquitto, the station and one node process per four boards; simulated players with
realistic move times (a few in time trouble, a few who pause the clock, one clock switched off
mid-game), one node killed and restarted (a power cut), and an arbiter bot that pairs round 1,
starts it, and enters results as games end. Stops cleanly on Ctrl-C or after ``--duration``.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from qizhong.simulation.arbiter_client import ArbiterClient, player_names
from qizhong.simulation.venue import LocalVenue, VenueError

__all__ = ["add_arguments", "run"]


class Director:
    """The demo's arbiter bot and fault injector."""

    def __init__(self, venue: LocalVenue, *, seed: int) -> None:
        self.venue = venue
        self.rng = random.Random(seed)
        self.api = ArbiterClient(venue.url)
        self.results_entered = 0
        self.restarted: str | None = None

    def wait_online(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if sum(bool(view.get("online")) for view in self.boards()) >= self.venue.boards:
                return
            time.sleep(0.3)
        raise VenueError(f"not every board came online within {timeout_s:.0f} s")

    def pair_and_start_round(self) -> None:
        self.api.login("arbiter", self.venue.arbiter_password)
        self.wait_online()
        names = player_names(2 * self.venue.boards, self.rng)
        rows = ["round,board,red,black"] + [
            f"1,{b},{names[2 * b - 2]},{names[2 * b - 1]}" for b in range(1, self.venue.boards + 1)
        ]
        reply = self.api.request("POST", "/api/pairings", "\n".join(rows) + "\n", raw=True)
        if not reply or reply.get("error"):
            raise VenueError(f"the station refused the demo pairings: {reply}")
        start_at = int(time.time() * 1000) + 2000
        self.api.request("POST", "/api/venue/cmd", {"cmd": "start", "args": {"at": start_at}})

    def boards(self) -> list[dict[str, Any]]:
        body = self.api.request("GET", "/api/boards")
        if isinstance(body, dict):
            body = body.get("boards", [])
        return body if isinstance(body, list) else []

    def enter_results(self, boards: list[dict[str, Any]]) -> None:
        for view in boards:
            state = view.get("state") or {}
            board = str(view.get("board") or state.get("board"))
            plan = self.venue.plans.get(board)
            if plan is None or state.get("phase") != "running":
                continue
            if min(state["moves"]["red"], state["moves"]["black"]) < plan.moves:
                continue
            winner = self.rng.choices(["red", "black", None], weights=(4, 3, 3))[0]
            # the profile's codes (clock_service/profiles): one spelling per reason in the
            # results CSV (an outsider found `resigned` beside the arbiter page's `resignation`)
            reason = "resignation" if winner else "agreed_draw"
            args = {"winner": winner, "reason": reason}
            self.api.request("POST", f"/api/boards/{board}/cmd", {"cmd": "result", "args": args})
            self.results_entered += 1

    def summary(self, boards: list[dict[str, Any]], elapsed: float) -> str:
        phases: dict[str, int] = {}
        online = 0
        for view in boards:
            phase = (view.get("state") or {}).get("phase", "?")
            phases[phase] = phases.get(phase, 0) + 1
            online += bool(view.get("online"))
        alerts = self.api.request("GET", "/api/alerts?status=open") or []
        if isinstance(alerts, dict):
            alerts = alerts.get("alerts", [])
        shown = " ".join(f"{k} {v}" for k, v in sorted(phases.items()))
        return (
            f"{elapsed:6.0f}s | online {online}/{self.venue.boards} | {shown} | "
            f"results {self.results_entered} | open alerts {len(alerts)}"
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--boards", type=int, default=None, help="simulated boards (default 40; --tournament 8)"
    )
    parser.add_argument("--speed", type=float, default=10.0, help="players think X times faster")
    parser.add_argument("--duration", type=float, default=None, help="stop after S seconds")
    parser.add_argument("--info", type=Path, default=None, help="write URLs and accounts as JSON")
    parser.add_argument("--dir", type=Path, default=None, help="working folder (default: /tmp)")
    parser.add_argument("--seed", type=int, default=2016)
    parser.add_argument("--quiet", action="store_true", help="no live summary line")
    parser.add_argument(
        "--tournament",
        choices=("meishan", "wulong"),
        default=None,
        help="play a whole event (every round; Meishan's knockout) and print the prize list",
    )
    parser.add_argument(
        "--moves", type=int, default=8, help="--tournament: full moves before a result is entered"
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="--tournament: keep the station up after the event (its pages) until Ctrl-C",
    )


# The demo's clocks run in real time; only the players think faster. A player in time trouble
# must use the whole main time (30 min, 35 in Wulong) within the moves of his game, whatever
# the speed: his mean thinking, in simulated seconds, is scaled so that the flag falls about
# half-way through the game (Fischer 5 s a move included).
MAIN_S = 35 * 60
INCREMENT_S = 5.0


def time_trouble_mean_s(moves: int, speed: float) -> float:
    """The mean simulated thinking per move that runs a player out of time by move moves/2."""
    return speed * (INCREMENT_S + MAIN_S / max(moves / 2, 1))


def tune_time_trouble(venue: LocalVenue) -> list[str]:
    """The venue's slow players (mean above 60 s) get thinking that really flags at its speed."""
    slow = []
    for board, plan in venue.plans.items():
        if plan.mean_move_s >= 60:
            plan.mean_move_s = time_trouble_mean_s(plan.moves, venue.speed)
            slow.append(board)
    return slow


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM (``kill``, a closed terminal) stops the venue as Ctrl-C does


def _stop(venue: LocalVenue) -> None:
    """Stop the venue, deaf to a second Ctrl-C or SIGTERM meanwhile (one would leave it half
    stopped, its children running)."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    venue.stop()


def run(args: argparse.Namespace) -> int:
    work = args.dir or Path(tempfile.mkdtemp(prefix="qizhong-demo-"))
    signal.signal(signal.SIGTERM, _interrupted)
    if args.tournament:
        return _run_tournament(args, work)
    venue = LocalVenue(work, boards=args.boards or 40, speed=args.speed, seed=args.seed)
    tune_time_trouble(venue)
    stop = threading.Event()
    try:
        venue.start()
        director = Director(venue, seed=args.seed)
        director.pair_and_start_round()
        info = venue.info()
        if args.info:
            args.info.write_text(json.dumps(info, ensure_ascii=False, indent=2), encoding="utf-8")
        print(
            f"\n棋钟 qizhong demo — {venue.boards} boards, players ×{venue.speed:g}\n"
            f"  display 显示屏:   {info['station']['display']}\n"
            f"  hall screen 大屏: {info['station']['display']}?page_s=20  (or ?boards=1-40)\n"
            f"  arbiter 裁判台:   {info['station']['arbiter']}  "
            f"(user {info['arbiter']['username']}, password {info['arbiter']['password']})\n"
            f"  broker:           {info['broker']['url']} "
            f"(read-only: {info['read_only']['username']})\n"
            f"  files and logs:   {work}\n"
            "Ctrl-C stops everything.\n",
            flush=True,
        )
        started = time.monotonic()
        restart_at = started + 90 / max(args.speed / 10, 0.1)
        while not stop.is_set():
            elapsed = time.monotonic() - started
            if args.duration is not None and elapsed >= args.duration:
                break
            if director.restarted is None and time.monotonic() >= restart_at:
                node = list(venue.node_boards)[len(venue.node_boards) // 2]
                venue.kill_node(node)  # a power cut on one Pi
                time.sleep(1.0)
                venue.start_node(node)
                director.restarted = node
            boards = director.boards()
            director.enter_results(boards)
            if not args.quiet:
                print("\r" + director.summary(boards, elapsed), end="", flush=True)
            stop.wait(1.0)
    except KeyboardInterrupt:
        pass
    except (VenueError, OSError) as exc:  # (OSError: the station gone, its API unreachable)
        print(f"\nqizhong demo: {exc}; stopping the venue (logs in {work})", file=sys.stderr)
        _stop(venue)  # its nodes too: they were left running after a traceback (an outsider)
        return 2
    print("\nstopping…", flush=True)
    _stop(venue)
    return 0


def _run_tournament(args: argparse.Namespace, work: Path) -> int:
    from qizhong.simulation.tournament_demo import EVENTS, run_tournament

    event = EVENTS[args.tournament]
    venue = LocalVenue(
        work, boards=args.boards or 8, speed=args.speed, seed=args.seed, regulation=event.regulation
    )
    for i, plan in enumerate(venue.plans.values()):
        plan.mean_move_s = min(plan.mean_move_s, 25.0)  # the games end by results entered
        if i % 3 == 1:
            plan.pause_probability = 0.05  # now and then a pause: a foul for the arbiter
    try:
        venue.start()
        info = venue.info()
        if args.info:
            args.info.write_text(json.dumps(info, ensure_ascii=False, indent=2), encoding="utf-8")
        print(f"棋钟 qizhong demo --tournament {args.tournament}: {2 * venue.boards} players, "
              f"{venue.boards} boards, arbiter {info['station']['arbiter']} (user "
              f"{info['arbiter']['username']}, password {info['arbiter']['password']})",
              flush=True)  # fmt: skip
        code = run_tournament(venue, args.tournament, seed=args.seed, moves=args.moves)
        if args.keep and code == 0:
            # the organiser's evening: the pages of the finished event, until Ctrl-C
            print(f"the station stays up: {venue.url}/standings  {venue.url}/prizes  "
                  f"(files and logs: {work}); Ctrl-C stops everything", flush=True)  # fmt: skip
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                pass  # the organiser is done: the event's outcome stands (make saw Error 130)
        return code
    except (VenueError, OSError) as exc:  # (OSError: the station gone, its API unreachable)
        print(f"qizhong demo: {exc}; stopping the venue (logs in {work})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        _stop(venue)
