"""A venue's standings at the hub, from the events its boards reported (issue 18).

The ranking is the pure core's (``clock_service.standings``), each game's outcome the one outcome
function (``clock_service.outcome``), as at the venue's station. What the hub has is only what
the bridge carries (docs/federation.md "Standings at the hub"):

- the players: the ``red``/``black`` of the game's latest ``ready`` event (the node echoes the
  station's ``set_game``); a game without both names cannot be ranked and is listed as skipped;
- the round: from the station's game id ``r{round}-b{board}`` (venue_station/store/database.py
  ``game_id``); another id (a knockout game, a hand-made one) is no Swiss game: skipped;
- the decision: a ``result`` that is not ``pending``, or a ``foul``/``forfeit`` confirmed or
  dismissed, decides only when the venue's station published its decision on that very event
  (``station/decision``, wire ``Decision``: only the station account may) and the two agree
  (type, status, winner/side, reason, ref); otherwise it is a proposal, as the station stores
  it (issue 27). A board's txn alone proves nothing: the board sees every txn it is sent.

No byes (the pairing program's byes stay at the venue) and no player tags (not on the wire).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from clock_service.outcome import CONFIRMED, FACT_TYPES, GameOutcome, game_outcome
from clock_service.profile_table import RegulationError
from clock_service.regulation import Regulation
from clock_service.standings import GameRecord, StandingsError, compute_standings
from federation_hub.errors import HubConfigError

__all__ = ["GAME_TYPES", "StandingsError", "VenueProfiles", "venue_standings"]

GAME_TYPES = ("ready", *FACT_TYPES)  # the event types the standings read
_ROUND = re.compile(r"^r(\d{1,3})-b")  # the station's game id: r{round}-b{board}


class FactSource(Protocol):
    async def game_facts(self, venue: str) -> list[dict[str, Any]]: ...

    async def boards_of(self, venue: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class VenueProfiles:
    """The regulation of each venue: ``--regulation`` for all, ``--venue-regulation`` for one."""

    default_name: str
    default: Regulation
    names: Mapping[str, str]
    profiles: Mapping[str, Regulation]

    @classmethod
    def load(cls, default: str, per_venue: Mapping[str, str]) -> VenueProfiles:
        """Every profile read once at start: a bad one stops the hub with its name."""
        try:
            loaded = {venue: Regulation.load(name) for venue, name in per_venue.items()}
            return cls(default, Regulation.load(default), dict(per_venue), loaded)
        except RegulationError as exc:
            raise HubConfigError(f"regulation profile: {exc}") from None

    def of(self, venue: str) -> Regulation:
        return self.profiles.get(venue, self.default)

    def name_of(self, venue: str) -> str:
        return self.names.get(venue, self.default_name)


def _is_decision(type_: str, data: Mapping[str, Any]) -> bool:
    """venue_station/intake/guard.py's ``is_decision``, on the wire."""
    if type_ == "result":
        return data.get("status") != "pending"
    return type_ in ("foul", "forfeit") and data.get("status") in ("confirmed", "dismissed")


def _agrees(decision: Mapping[str, Any], type_: str, data: Mapping[str, Any]) -> bool:
    """The station's decision says what the board's event says."""
    who = "winner" if type_ == "result" else "side"
    return (
        decision.get("type") == type_
        and decision.get("status") == data.get("status", "confirmed")
        and decision.get(who) == data.get(who)
        and decision.get("reason") == data.get("reason")
        and decision.get("ref") == data.get("ref")
    )


def _unverified(fact: Mapping[str, Any]) -> bool:
    """A decision the venue's station did not make (no ``Decision`` of its own on this event,
    or one that says otherwise), or one already marked."""
    body = fact["body"]
    data = body.get("data") or {}
    if data.get("unverified"):
        return True
    if not _is_decision(fact["type"], data):
        return False
    decision = fact.get("decision")
    return not (isinstance(decision, Mapping) and _agrees(decision, fact["type"], data))


def _as_fact(fact: Mapping[str, Any]) -> dict[str, Any]:
    data = dict(fact["body"].get("data") or {})
    if _unverified(fact):
        # As the station stores it: a proposal; a ruling that names its proposal settles nothing.
        data.update(status="pending", unverified=True)
    return {"seq": fact["seq"], "type": fact["type"], "data": data}


@dataclass
class _Game:
    game: str
    board: str
    red: str | None = None
    black: str | None = None
    unverified: bool = False

    def __post_init__(self) -> None:
        self.facts: list[dict[str, Any]] = []


def _games(facts: Iterable[Mapping[str, Any]]) -> dict[str, _Game]:
    games: dict[str, _Game] = {}
    for f in facts:  # in report order (ts, seq): the latest ready names the players
        g = games.setdefault(f["game"], _Game(f["game"], f["board"]))
        if f["type"] == "ready":
            data = f["body"].get("data") or {}
            g.red, g.black, g.board = data.get("red"), data.get("black"), f["board"]
            continue
        fact = _as_fact(f)
        g.unverified |= bool(fact["data"].get("unverified"))
        g.facts.append(fact)
    return games


def _outcome(g: _Game, reg: Regulation) -> GameOutcome:
    # A settled ruling on an unverified decision names it by ref: dropped, as the station does.
    facts = [f for f in g.facts if not (f["data"].get("unverified") and f["data"].get("ref"))]
    return game_outcome(facts, reg)


def _view(g: _Game, rnd: int | None, o: GameOutcome) -> dict[str, Any]:
    confirmed = o.status == CONFIRMED
    return {
        "game": g.game,
        "board": g.board,
        "round": rnd,
        "red": g.red,
        "black": g.black,
        "status": o.status,
        "result": o.text if confirmed else None,
        "reason": o.reason if confirmed else None,
        "proposed": None if confirmed else o.text,
        "proposed_reason": None if confirmed else o.reason,
        "unverified": g.unverified,
    }


def _record(g: _Game, rnd: int, o: GameOutcome) -> GameRecord:
    assert g.red is not None and g.black is not None
    result = o.outcome if o.counts else None
    return GameRecord(
        rnd,
        g.red,
        g.black,
        result,
        forfeit=result is not None and o.forfeit,
        red_fouls=o.fouls.get("red", {}).get("confirmed", 0),
        black_fouls=o.fouls.get("black", {}).get("confirmed", 0),
    )


def _place(
    g: _Game, reg: Regulation, seen: dict[tuple[int, str], str]
) -> tuple[int | None, str, str]:
    """The game's round, or why it cannot be ranked: a code for the pages and the words
    (both "" when it can)."""
    m = _ROUND.match(g.game)
    if m is None:
        return None, "not_swiss", "no Swiss round in the game id (expected r{round}-b{board})"
    rnd = int(m.group(1))
    if not 1 <= rnd <= reg.tournament.rounds:
        rounds = reg.tournament.rounds
        return rnd, "round_out_of_range", f"round {rnd} is not 1..{rounds} of the regulation"
    if not g.red or not g.black:
        why = "the players are not on the wire (no red/black in its ready event or board state)"
        return rnd, "no_players", why
    if g.red == g.black:
        return rnd, "plays_himself", f"{g.red!r} cannot play himself"
    for name in (g.red, g.black):
        if (rnd, name) in seen:
            return rnd, "plays_twice", f"{name!r} already plays round {rnd} in {seen[rnd, name]}"
    return rnd, "", ""


async def venue_standings(
    store: FactSource, venue: str, profiles: VenueProfiles, *, after_round: int | None = None
) -> dict[str, Any]:
    """The venue's standings, its games (pending ones marked) and the games left out (why).
    Raises ``StandingsError`` only for an ``after_round`` past the regulation's rounds."""
    reg = profiles.of(venue)
    games = _games(await store.game_facts(venue))
    for board in await store.boards_of(venue):
        # A hub started after a round was set up never had its ``ready`` events (the mender
        # asks nothing from before it): the board's state names the players of its game.
        state = board.get("body") or {}
        g = games.get(state.get("game") or "")
        if g is not None and not (g.red and g.black) and state.get("red") and state.get("black"):
            g.red, g.black = state["red"], state["black"]
    records: list[GameRecord] = []
    views: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    seen: dict[tuple[int, str], str] = {}
    for g in sorted(games.values(), key=lambda g: g.game):
        o = _outcome(g, reg)
        rnd, code, why = _place(g, reg, seen)
        views.append(_view(g, rnd, o))
        if why:
            skipped.append({"game": g.game, "board": g.board, "code": code, "why": why})
            continue
        assert rnd is not None and g.red is not None and g.black is not None
        seen[rnd, g.red] = seen[rnd, g.black] = g.game
        records.append(_record(g, rnd, o))
    rows = compute_standings(reg, records, after_round=after_round)
    return {
        "venue": venue,
        "regulation": profiles.name_of(venue),
        "after_round": after_round,
        "standings": [r.as_dict() for r in rows],
        "games": views,
        "skipped": skipped,
    }
