"""The one outcome function: a game's recorded facts and rulings in, its outcome out.

Every view (games, results, exports, standings, the knockout) asks this function, so they
cannot disagree. The rule for what a view shows:

- **confirmed**: the latest confirmed ``result`` not dismissed; without one, confirmed
  forfeits (立即判负): the other side wins, or both lose (0:0) when both sides are forfeited.
  Only a confirmed outcome counts: it has points, it goes into the standings, the exports'
  result columns and the knockout.
- **pending**: a proposal that would decide the game and that the arbiter has not ruled on
  (a flag's loss before confirmation, a pending forfeit, a proposed double forfeit: while one
  waits, one side's confirmed lateness alone decides nothing). Views
  show it marked as a proposal, never as the result; it counts nowhere.
- **undecided**: nothing decides the game (a dismissed result decides nothing, and a dismissed
  flag result takes the flag's loss away with it).

Facts are event-like mappings ``{"seq": int, "type": str, "data": {...}}`` of the types
``flag``, ``forfeit``, ``result`` and ``foul`` (DESIGN.md §4); a ruling names the proposal it
settles by ``data.ref``. A ``result`` without ``status`` is confirmed (the original contract).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clock_service.regulation import Regulation

__all__ = [
    "CONFIRMED",
    "DOUBLE_FORFEIT",
    "FACT_TYPES",
    "PENDING",
    "UNDECIDED",
    "GameOutcome",
    "game_outcome",
]

FACT_TYPES = ("flag", "forfeit", "result", "foul")
DOUBLE_FORFEIT = "double_forfeit"
CONFIRMED, PENDING, UNDECIDED = "confirmed", "pending", "undecided"
_SIDES = ("red", "black")
_TEXT = {"red": "1-0", "black": "0-1", "draw": "1/2-1/2", DOUBLE_FORFEIT: "0-0"}


@dataclasses.dataclass(frozen=True)
class GameOutcome:
    """``outcome``: ``red`` | ``black`` (the winner) | ``draw`` | ``double_forfeit`` | None.

    ``points`` (red, black) only when confirmed and a regulation was given; ``forfeit``: decided
    by an immediate loss (立即判负), not over the board; ``fouls`` per side by latest ruling."""

    status: str = UNDECIDED
    outcome: str | None = None
    reason: str | None = None
    source: str | None = None  # "result" | "flag" | "forfeit"
    seq: int | None = None  # the fact that decided (or proposes)
    forfeit: bool = False
    points: tuple[int, int] | None = None
    fouls: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)

    @property
    def counts(self) -> bool:
        """Only a confirmed outcome counts (standings, exports, knockout)."""
        return self.status == CONFIRMED

    @property
    def winner(self) -> str | None:
        return self.outcome if self.outcome in _SIDES else None

    @property
    def text(self) -> str | None:
        """``1-0`` | ``0-1`` | ``1/2-1/2`` | ``0-0`` of the outcome (confirmed or proposed)."""
        return None if self.outcome is None else _TEXT[self.outcome]


def game_outcome(
    facts: Iterable[Mapping[str, Any]], regulation: Regulation | None = None
) -> GameOutcome:
    """The outcome of one game from its facts (any order; sorted by seq here)."""
    ordered = sorted((f for f in facts if f["type"] in FACT_TYPES), key=_seq)
    fouls = {side: {"pending": 0, "confirmed": 0, "dismissed": 0} for side in _SIDES}
    for status, data in _rulings(ordered, "foul").values():
        if data.get("side") in fouls and status in fouls[data["side"]]:
            fouls[data["side"]][status] += 1
    forfeit_reasons = regulation.forfeits.reasons if regulation is not None else ()

    def make(status: str, outcome: str, reason: str, source: str, seq: int) -> GameOutcome:
        by_forfeit = source == "forfeit" or reason in forfeit_reasons or outcome == DOUBLE_FORFEIT
        points = None
        if status == CONFIRMED and regulation is not None:
            points = _points(outcome, regulation)
        return GameOutcome(status, outcome, reason, source, seq, by_forfeit, points, fouls)

    # Each result by its first report (a ruling names it by ref), as its latest ruling left it,
    # in the order they were first reported: the referee's standing result is the newest not
    # dismissed. (A flag confirmed, then taken back, has three reports: the latest decides.)
    by_key: dict[int, Mapping[str, Any]] = {}
    for f in ordered:
        if f["type"] == "result":
            by_key[f["data"].get("ref") or _seq(f)] = f
    dismissed = [f for f in by_key.values() if f["data"].get("status") == "dismissed"]
    results = [f for f in by_key.values() if f["data"].get("status") != "dismissed"]
    flag_struck = any(f["data"].get("reason") == "flag" for f in dismissed)
    confirmed = [f for f in results if f["data"].get("status", CONFIRMED) == CONFIRMED]
    forfeits = _rulings(ordered, "forfeit")

    if confirmed:
        last = confirmed[-1]
        return make(CONFIRMED, _result_outcome(last), last["data"]["reason"], "result", _seq(last))
    pending = [f for f in results if f["data"].get("status") == PENDING]
    # A proposed double forfeit (both sides late) is one decision: one side's confirmed
    # lateness decides nothing while the other's is still to be ruled (not 0-1 for a moment).
    waiting_double = any(f["data"].get("reason") == DOUBLE_FORFEIT for f in pending)
    decided = None if waiting_double else _by_forfeits(forfeits, CONFIRMED)
    if decided is not None:
        return make(CONFIRMED, *decided)
    if pending:
        last = pending[-1]
        return make(PENDING, _result_outcome(last), last["data"]["reason"], "result", _seq(last))
    flag = next((f for f in ordered if f["type"] == "flag"), None)
    if flag is not None and not flag_struck:
        loser = flag["data"]["side"]
        return make(PENDING, _other(loser), "flag", "flag", _seq(flag))
    decided = _by_forfeits(forfeits, PENDING)
    if decided is not None:
        return make(PENDING, *decided)
    return GameOutcome(fouls=fouls)


def _seq(fact: Mapping[str, Any]) -> int:
    return int(fact["seq"])


def _other(side: str) -> str:
    return "black" if side == "red" else "red"


def _result_outcome(fact: Mapping[str, Any]) -> str:
    data = fact["data"]
    if data.get("reason") == DOUBLE_FORFEIT:
        return DOUBLE_FORFEIT
    winner = data.get("winner")
    return winner if winner in _SIDES else "draw"


def _rulings(facts: Iterable[Mapping[str, Any]], kind: str) -> dict[int, tuple[str, Any]]:
    """Offence seq -> (latest status, data of the first report) for fouls or forfeits."""
    out: dict[int, tuple[str, Any]] = {}
    for fact in facts:
        if fact["type"] != kind:
            continue
        data = fact["data"]
        key = int(data.get("ref") or fact["seq"])
        first = out.get(key, (data.get("status"), data))[1]
        out[key] = (data.get("status"), first)
    return out


def _by_forfeits(
    forfeits: Mapping[int, tuple[str, Any]], status: str
) -> tuple[str, str, str, int] | None:
    """Forfeits of this status (confirmed ones also count as pending: a pending double forfeit
    is one side confirmed, the other proposed): the earliest per side decides."""
    wanted = (CONFIRMED,) if status == CONFIRMED else (CONFIRMED, PENDING)
    first: dict[str, tuple[int, str]] = {}
    for key in sorted(forfeits):
        st, data = forfeits[key]
        side = data.get("side")
        if st in wanted and side in _SIDES and side not in first:
            first[side] = (key, data.get("reason") or "forfeit")
    if not first:
        return None
    if len(first) == 2:
        seq = max(key for key, _ in first.values())
        return DOUBLE_FORFEIT, DOUBLE_FORFEIT, "forfeit", seq
    ((loser, (seq, reason)),) = first.items()
    return _other(loser), reason, "forfeit", seq


def _points(outcome: str, regulation: Regulation) -> tuple[int, int]:
    s = regulation.scoring
    if outcome == "red":
        return s.win, s.loss
    if outcome == "black":
        return s.loss, s.win
    if outcome == "draw":
        return s.draw, s.draw
    return s.loss, s.loss  # a double forfeit: both lose
