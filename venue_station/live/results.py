"""A game's result and fouls as the station shows them, from its events (pure, no I/O).

The deciding is ``clock_service.outcome.game_outcome``, the one outcome function every view
calls (its docstring has the rule). What the station shows of it:
- ``result``/``winner``/``reason`` are the *confirmed* outcome only: a flag's loss, a pending
  forfeit or a proposed double forfeit (0:0) is ``status: "pending"`` with ``proposed`` /
  ``proposed_reason`` beside, never the result, and it counts nowhere (points, standings,
  exports, knockout) until the arbiter confirms it;
- a double forfeit is the result ``0-0`` (both score the profile's loss) with winner None;
- fouls are counted per side by their latest ruling (pending, confirmed, dismissed);
- a ruling a board sent without the station's command (``unverified``, see guard.py) settles
  nothing: it is left out (an unverified result without ``ref`` stays a pending proposal).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clock_service.outcome import CONFIRMED, DOUBLE_FORFEIT, FACT_TYPES, UNDECIDED, game_outcome
from clock_service.regulation import Scoring

if TYPE_CHECKING:
    from clock_service.regulation import Regulation

__all__ = [
    "DECISIVE_TYPES",
    "Outcome",
    "derive_game",
    "points",
    "result_text",
    "tournament_fouls",
]

DECISIVE_TYPES = FACT_TYPES
SIDES = ("red", "black")


@dataclass(frozen=True)
class Outcome:
    winner: str | None = None  # "red" | "black" | None (a draw or 0-0 when ``result`` is set)
    result: str | None = None  # "1-0" | "0-1" | "1/2-1/2" | "0-0" | None while not confirmed
    reason: str | None = None
    source: str | None = None  # "result" | "flag" | "forfeit"
    seq: int | None = None  # the event that decided
    fouls: dict[str, dict[str, int]] = field(default_factory=dict)
    status: str = UNDECIDED  # "undecided" | "pending" | "confirmed"
    proposed: str | None = None  # a pending proposal's result text, shown as a proposal
    proposed_reason: str | None = None
    forfeit: bool = False  # decided by 立即判负 (incl. a double forfeit)

    @property
    def decided(self) -> bool:
        return self.result is not None

    @property
    def outcome(self) -> str | None:
        """red | black | draw | double_forfeit, confirmed only."""
        return {"1-0": "red", "0-1": "black", "1/2-1/2": "draw", "0-0": DOUBLE_FORFEIT}.get(
            self.result or ""
        )


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
    if outcome_result == "0-0":
        return scoring.loss, scoring.loss
    return None, None


def _unverified_ruling(ev: Mapping[str, Any]) -> bool:
    data = ev["data"]
    return bool(data.get("unverified")) and bool(data.get("ref"))


def derive_game(
    events: Iterable[Mapping[str, Any]], regulation: Regulation | None = None
) -> Outcome:
    """The outcome of one game from its events (any order), by the one outcome function."""
    o = game_outcome((ev for ev in events if not _unverified_ruling(ev)), regulation)
    if o.status == CONFIRMED:
        return Outcome(
            o.winner, o.text, o.reason, o.source, o.seq, o.fouls, o.status, forfeit=o.forfeit
        )
    return Outcome(
        seq=o.seq,
        source=o.source,
        fouls=o.fouls,
        status=o.status,
        proposed=o.text,
        proposed_reason=o.reason,
        forfeit=o.forfeit,
    )


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
