"""A game's result and fouls derived from its events (pure functions, no I/O).

The rules (DESIGN.md §2, principle 5):
- a ``result`` event (entered by the arbiter, or proposed by the board) decides; the latest wins;
- without one, the earliest decisive fact decides: the first ``flag`` (a loss for the flagged
  side; later flags are ignored) or a ``forfeit`` whose latest ruling is ``confirmed`` (ordered
  by the seq of the offence it rules on);
- fouls are counted per side by their latest ruling (pending, confirmed, dismissed); a ruling
  names the foul it settles by ``ref``;
- a decision a board sent without the station's command (``unverified``, see guard.py) is a
  proposal: an unverified result or ruling decides and settles nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DECISIVE_TYPES",
    "Outcome",
    "Scoring",
    "derive_game",
    "points",
    "result_text",
    "tournament_fouls",
]

DECISIVE_TYPES = ("flag", "forfeit", "result", "foul")
SIDES = ("red", "black")


@dataclass(frozen=True)
class Scoring:
    win: int = 2
    draw: int = 1
    loss: int = 0


@dataclass(frozen=True)
class Outcome:
    winner: str | None = None  # "red" | "black" | None (a draw when ``result`` is set)
    result: str | None = None  # "1-0" | "0-1" | "1/2-1/2" | None while undecided
    reason: str | None = None
    source: str | None = None  # "result" | "flag" | "forfeit"
    seq: int | None = None  # the event that decided
    fouls: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def decided(self) -> bool:
        return self.result is not None


def result_text(winner: str | None) -> str:
    return {"red": "1-0", "black": "0-1"}.get(winner or "", "1/2-1/2")


def points(outcome_result: str | None, scoring: Scoring) -> tuple[int | None, int | None]:
    """(red, black) points of a result text; (None, None) while undecided."""
    if outcome_result == "1-0":
        return scoring.win, scoring.loss
    if outcome_result == "0-1":
        return scoring.loss, scoring.win
    if outcome_result == "1/2-1/2":
        return scoring.draw, scoring.draw
    return None, None


def _rulings(
    events: Iterable[Mapping[str, Any]], kind: str
) -> dict[int, tuple[str, dict[str, Any]]]:
    """Offence seq -> (latest status, data of the first report) for fouls or forfeits."""
    out: dict[int, tuple[str, dict[str, Any]]] = {}
    for ev in events:
        if ev["type"] != kind:
            continue
        data = ev["data"]
        key = int(data.get("ref") or ev["seq"])
        first = out.get(key, (data["status"], data))[1]
        out[key] = (data["status"], first)
    return out


def _unverified_decision(ev: Mapping[str, Any]) -> bool:
    data = ev["data"]
    return bool(data.get("unverified")) and (ev["type"] == "result" or bool(data.get("ref")))


def derive_game(events: Iterable[Mapping[str, Any]]) -> Outcome:
    """The outcome of one game from its events (any order; sorted by seq here)."""
    ordered = sorted(
        (ev for ev in events if not _unverified_decision(ev)), key=lambda ev: int(ev["seq"])
    )
    fouls = {side: {"pending": 0, "confirmed": 0, "dismissed": 0} for side in SIDES}
    for status, data in _rulings(ordered, "foul").values():
        fouls[data["side"]][status] += 1

    # A result the arbiter dismissed (its ruling names it in ``ref``) decides nothing, and a
    # dismissed flag result takes the flag's loss away with it.
    results = [ev for ev in ordered if ev["type"] == "result"]
    dismissed = [ev for ev in results if ev["data"].get("status") == "dismissed"]
    struck = {ev["data"].get("ref") for ev in dismissed}
    results = [ev for ev in results if ev not in dismissed and int(ev["seq"]) not in struck]
    flag_struck = any(ev["data"].get("reason") == "flag" for ev in dismissed)
    if results:
        last = results[-1]
        winner = last["data"]["winner"]
        return Outcome(
            winner, result_text(winner), last["data"]["reason"], "result", int(last["seq"]), fouls
        )

    candidates: list[tuple[int, str, str, str]] = []  # (seq, loser, reason, source)
    flag = next((ev for ev in ordered if ev["type"] == "flag"), None)
    if flag is not None and not flag_struck:
        candidates.append((int(flag["seq"]), flag["data"]["side"], "flag", "flag"))
    for key, (status, data) in _rulings(ordered, "forfeit").items():
        if status == "confirmed":
            candidates.append((key, data["side"], data["reason"], "forfeit"))
    if not candidates:
        return Outcome(fouls=fouls)
    seq, loser, reason, source = min(candidates)
    winner = "black" if loser == "red" else "red"
    return Outcome(winner, result_text(winner), reason, source, seq, fouls)


def tournament_fouls(
    games: Iterable[tuple[Mapping[str, Any], Outcome]],
) -> dict[str, dict[str, int]]:
    """Fouls per player over the games given: name -> {pending, confirmed, dismissed}."""
    totals: dict[str, dict[str, int]] = {}
    for game, outcome in games:
        for side in SIDES:
            counts = outcome.fouls.get(side)
            if not counts:
                continue
            mine = totals.setdefault(game[side], {"pending": 0, "confirmed": 0, "dismissed": 0})
            for status, n in counts.items():
                mine[status] += n
    return totals
