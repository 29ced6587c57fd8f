"""The standings from what the station stored: games, confirmed results and fouls, colours, tags.

The ranking itself is ``clock_service.standings`` (pure); this module only turns the store into
its inputs (the route and the page are ``standings_view.py``; the TRF export and the knockout's
four players read the same standings from here).

Only what is settled counts, by the one outcome function (``clock_service.outcome``, through
``results.derive_game``): a proposal still pending (a flag's loss, a forfeit, a double forfeit)
or a dismissed result is ignored, a forfeit counts once confirmed, a confirmed double forfeit
is a loss for both, and only confirmed fouls reach the standings: the board's, and the
``not_recording`` fouls the arbiter confirmed after the game (``record_duties.record_fouls``).
Byes are the pairing program's (a TRF's or a pairs list's, kept by ``trf_io``).

``final_standings_of`` is the final list of an event with a knockout (Meishan): the knockout's
places 1–4 first, then the others ranked among themselves from 5 (``merge_standings``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from clock_service.knockout import Placing, merge_standings
from clock_service.regulation import Regulation
from clock_service.standings import GameRecord, Standing, compute_standings
from venue_station.domain.record_duties import record_fouls
from venue_station.domain.trf_state import load_state, station_byes
from venue_station.live.results import Outcome, derive_game

if TYPE_CHECKING:
    from venue_station.store.database import Store

__all__ = ["final_standings_of", "game_records", "standings_of", "with_final_places"]


def _record(
    game: Mapping[str, Any], outcome: Outcome, late: Mapping[str, int] | None = None
) -> GameRecord:
    result = outcome.outcome  # red | black | draw | double_forfeit, confirmed only
    fouls = outcome.fouls
    late = late or {}  # the confirmed not_recording fouls after the game (record_duties.py)
    return GameRecord(
        int(game["round"]),
        game["red"],
        game["black"],
        result,
        forfeit=result is not None and outcome.forfeit,
        red_fouls=fouls.get("red", {}).get("confirmed", 0) + late.get("red", 0),
        black_fouls=fouls.get("black", {}).get("confirmed", 0) + late.get("black", 0),
    )


async def game_records(store: Store, regulation: Regulation | None = None) -> list[GameRecord]:
    """Every paired Swiss game of the store as a ``GameRecord`` (undecided ones: result None)."""
    games = await store.games()
    events = await store.reads.decisive_events(g["game"] for g in games)
    late = await record_fouls(store, regulation) if regulation is not None else {}
    return [
        _record(g, derive_game(events[g["game"]], regulation), late.get(g["game"])) for g in games
    ]


async def standings_of(
    store: Store,
    regulation: Regulation,
    *,
    after_round: int | None = None,
    tag: str | tuple[str, ...] | None = None,
    without: Collection[str] = (),
) -> list[Standing]:
    """The standings after ``after_round`` (default: the last round with a game), optionally
    only the players holding ``tag`` (any of several), leaving out ``without``. Raises
    ``StandingsError``."""
    records = await game_records(store, regulation)
    players: dict[str, frozenset[str]] = dict(await store.reads.player_tags())
    for rec in records:  # a name paired before the player list was imported has no tags
        players.setdefault(rec.red, frozenset())
        players.setdefault(rec.black, frozenset())
    # Byes come from the pairing program (TRF 240 records, a pairs list's "N 0").
    scoring = regulation.scoring
    byes = station_byes(await load_state(store), scoring.win, scoring.draw)
    for bye in byes:
        players.setdefault(bye.player, frozenset())
    return compute_standings(
        regulation,
        records,
        players=players,
        byes=byes,
        after_round=after_round,
        tag=tag,
        without=without,
    )


async def final_standings_of(
    store: Store,
    regulation: Regulation,
    placings: Sequence[Placing],
    *,
    after_round: int | None = None,
) -> list[Standing]:
    """The knockout's places first (their rows carry ``knockout_place``), then everyone else
    ranked among themselves over the rounds they played (rounds 8–9 included), from 5.
    Raises ``StandingsError`` (or ``KnockoutError`` when a placed player has no row)."""
    placed = [p.player for p in placings]
    everyone = await standings_of(store, regulation, after_round=after_round)
    rest = await standings_of(store, regulation, after_round=after_round, without=placed)
    four = [s for s in everyone if s.player in set(placed)]
    return merge_standings(four + rest, placings)


def with_final_places(rows: Sequence[Standing], final: Sequence[Standing]) -> list[Standing]:
    """A group's table with each player's place in the whole event (``event_rank``) as the
    final list has it once the knockout is finished (it kept the Swiss place: a reviewer)."""
    place = {s.player: s.rank for s in final}
    return [dataclasses.replace(s, event_rank=place.get(s.player, s.event_rank)) for s in rows]
