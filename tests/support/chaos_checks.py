"""The chaos suite's verdicts, read from the files the parts left behind.

- :func:`read_journals`: every event every node journaled, by ``(board, session, seq)``.
- :func:`compare_store`: the station's store against the journals (missing, extra, twice,
  different).
- :func:`check_results`: each game's stored result against ``derive_game`` of the node's events.
- :func:`check_clocks`: each power-cut board's clock across the restart (the last event
  before the kill, run on to the kill instant, against the restored paused clock).
- :func:`summary_table`: the faults injected and the events checked, as a text table.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from board_nodes.journal import Journal
from venue_station.live.results import derive_game

__all__ = [
    "ClockCheck",
    "Comparison",
    "check_clocks",
    "check_results",
    "compare_store",
    "read_journals",
    "read_store",
    "summary_table",
]

Key = tuple[str, int, int]
# The parts of an event that must arrive unchanged (``replay`` may differ: it says how).
COMPARED = ("node", "game", "ts", "type", "data")


def read_journals(paths: Iterable[Path]) -> dict[Key, dict[str, Any]]:
    events: dict[Key, dict[str, Any]] = {}
    for path in paths:
        with Journal(path) as journal:
            for row in journal.all_events():
                payload = json.loads(row.payload)
                key = (payload["board"], int(payload["session"]), int(payload["seq"]))
                assert key not in events, f"{path}: {key} journaled twice"
                events[key] = payload
    return events


def read_store(db_file: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and round-1 games of the station's SQLite store (the station stopped)."""
    db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    try:
        events = [dict(r) for r in db.execute("SELECT * FROM events ORDER BY id")]
        games = [dict(r) for r in db.execute("SELECT * FROM games WHERE round = 1")]
    finally:
        db.close()
    for ev in events:
        ev["data"] = json.loads(ev["data"]) if isinstance(ev["data"], str) else ev["data"]
    return events, games


@dataclass
class Comparison:
    journaled: int
    stored: int
    missing: list[Key] = field(default_factory=list)
    extra: list[Key] = field(default_factory=list)
    twice: list[Key] = field(default_factory=list)
    different: list[tuple[Key, str]] = field(default_factory=list)
    replayed: int = 0

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.twice or self.different)


def compare_store(
    journal: Mapping[Key, dict[str, Any]], stored: list[dict[str, Any]]
) -> Comparison:
    out = Comparison(journaled=len(journal), stored=len(stored))
    seen: set[Key] = set()
    for row in stored:
        key = (row["board"], int(row["session"]), int(row["seq"]))
        if key in seen:
            out.twice.append(key)
            continue
        seen.add(key)
        out.replayed += bool(row["replay"])
        mine = journal.get(key)
        if mine is None:
            out.extra.append(key)
            continue
        clock = mine["clock"]
        theirs = (row["red_ms"], row["black_ms"], row["running"])
        if (clock["red_ms"], clock["black_ms"], clock["running"]) != theirs:
            out.different.append((key, f"clock {clock} != {theirs}"))
        for name in COMPARED:
            if mine[name] != row[name]:
                out.different.append((key, f"{name}: {mine[name]!r} != {row[name]!r}"))
    out.missing = sorted(set(journal) - seen)
    return out


def check_results(
    journal: Mapping[Key, dict[str, Any]], games: list[dict[str, Any]]
) -> tuple[int, list[str]]:
    """(games checked, what is wrong): every game decided, its stored result as derived."""
    by_game: dict[str, list[dict[str, Any]]] = {}
    for ev in journal.values():
        if ev["game"]:
            by_game.setdefault(ev["game"], []).append(ev)
    wrong = []
    for game in games:
        outcome = derive_game(by_game.get(game["game"], []))
        if not outcome.decided:
            wrong.append(f"{game['game']}: the node's events decide nothing")
            continue
        want = (outcome.winner, outcome.result, outcome.reason)
        have = (game["winner"], game["result"], game["reason"])
        if want != have:
            wrong.append(f"{game['game']}: stored {have}, the node's events say {want}")
    return len(games), wrong


@dataclass(frozen=True)
class ClockCheck:
    board: str
    node: str
    expected: tuple[int, int]  # red, black at the kill instant, from the last event before
    restored: tuple[int, int]  # red, black of the shutdown(node_restart) event
    outage_ms: int  # what the restored node says it was without power

    @property
    def jump_ms(self) -> int:
        """The largest difference on either side: time given back (+) or lost (−)."""
        diffs = [r - e for r, e in zip(self.restored, self.expected, strict=True)]
        return max(diffs, key=abs)


def check_clocks(
    journal: Mapping[Key, dict[str, Any]],
    cuts: Iterable[tuple[str, list[str], int, int]],
) -> tuple[list[ClockCheck], list[str]]:
    """For each power cut ``(node, boards, kill_wall_ms, session_before)``: every board whose
    game was in progress has a ``shutdown`` of cause ``node_restart`` in the next session, and
    its restored times continue the times before the kill."""
    by_board: dict[str, list[dict[str, Any]]] = {}
    for ev in journal.values():
        by_board.setdefault(ev["board"], []).append(ev)
    checks, wrong = [], []
    for node, boards, kill_ms, session in cuts:
        for board in boards:
            events = sorted(by_board.get(board, []), key=lambda ev: ev["seq"])
            before = [ev for ev in events if ev["session"] <= session]
            after = [ev for ev in events if ev["session"] > session]
            shutdown = next(
                (
                    ev
                    for ev in after
                    if ev["type"] == "shutdown" and ev["data"].get("cause") == "node_restart"
                ),
                None,
            )
            if not before:
                continue
            last = before[-1]
            game = [ev for ev in before if ev["game"] == last["game"]]
            in_progress = any(ev["type"] == "started" for ev in game) and not any(
                ev["type"] in ("flag", "result") for ev in game
            )
            if shutdown is None:
                if in_progress:
                    wrong.append(f"board {board} ({node}): restarted mid-game without a shutdown")
                continue
            clock = last["clock"]
            expected = {"red": clock["red_ms"], "black": clock["black_ms"]}
            if clock["running"] in expected:
                ran = max(0, kill_ms - last["ts"])
                expected[clock["running"]] = max(0, expected[clock["running"]] - ran)
            restored = shutdown["clock"]
            check = ClockCheck(
                board,
                node,
                (expected["red"], expected["black"]),
                (restored["red_ms"], restored["black_ms"]),
                int(shutdown["data"].get("duration_ms") or 0),
            )
            checks.append(check)
            if restored["running"] is not None:
                wrong.append(f"board {board}: restored running, not paused")
            if abs(check.jump_ms) > 1000:
                wrong.append(
                    f"board {board} ({node}): clock jumped {check.jump_ms} ms across the restart "
                    f"(expected {check.expected}, restored {check.restored})"
                )
    return checks, wrong


def summary_table(
    plan_name: str,
    faults: list[Any],
    comparison: Comparison,
    games: tuple[int, int],
    clocks: list[ClockCheck],
    extra: Mapping[str, Any],
) -> str:
    """Markdown tables: the faults injected, then the events checked."""
    kinds: dict[str, list[Any]] = {}
    for fault in faults:
        kinds.setdefault(fault.kind, []).append(fault)
    lines = [
        f"Chaos round ({plan_name})",
        "",
        "| fault | count | targets | kill to restarted (s, each) |",
        "|---|---|---|---|",
    ]
    for kind, items in kinds.items():
        targets = sorted({f.target for f in items})
        downs = ", ".join(f"{f.down_s:.1f}" for f in items)
        lines.append(f"| {kind} | {len(items)} | {', '.join(targets)} | {downs} |")
    worst = max((abs(c.jump_ms) for c in clocks), default=0)
    rows = [
        ("events journaled by the nodes", comparison.journaled),
        ("events in the station's store", comparison.stored),
        ("of which arrived as replays", comparison.replayed),
        ("missing from the store", len(comparison.missing)),
        ("stored but never journaled", len(comparison.extra)),
        ("stored twice", len(comparison.twice)),
        ("stored differently", len(comparison.different)),
        ("games checked / results right", f"{games[0]} / {games[1]}"),
        ("restarted clocks checked", len(clocks)),
        ("largest clock jump across a restart (ms)", worst),
        *extra.items(),
    ]
    lines += ["", "| check | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)
