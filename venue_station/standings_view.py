"""The standings from what the station stored: games, confirmed results and fouls, colours, tags.

The ranking itself is ``clock_service.standings`` (pure); this module only turns the store into
its inputs and serves the result: ``GET /api/standings``, the CSV/JSON exports and the
``/standings`` page (a static file; it refreshes itself on the SSE ``game`` messages).

Only what is settled counts, by the one outcome function (``clock_service.outcome``): a
proposal still pending (a flag's loss, a forfeit, a double forfeit) or a dismissed result is
ignored, a forfeit counts once confirmed, a confirmed double forfeit is a loss for both, and
only confirmed fouls reach the standings. Byes are the pairing program's (a TRF's or a pairs
list's, kept by ``trf_io``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from clock_service.regulation import Regulation
from clock_service.standings import (
    GameRecord,
    Standing,
    StandingsError,
    compute_standings,
    standings_csv,
    standings_json,
)
from venue_station import tables as t
from venue_station.http_base import ApiError, int_param, json_response, station_of
from venue_station.pages import SECURITY_HEADERS
from venue_station.resources import static_dir
from venue_station.results import DECISIVE_TYPES, Outcome, derive_game
from venue_station.trf_state import load_state, station_byes

if TYPE_CHECKING:
    from venue_station.station import Station
    from venue_station.store import Store

__all__ = [
    "confirmed_outcome",
    "game_records",
    "player_tags",
    "regulation_of",
    "routes",
    "standings_of",
]


@functools.lru_cache(maxsize=8)
def _load(name: str) -> Regulation:
    return Regulation.load(name)


def regulation_of(station: Station) -> Regulation:
    """The station's regulation profile (loaded once per name; the config was checked at start)."""
    return _load(station.config.regulation)


def confirmed_outcome(
    events: Iterable[Mapping[str, Any]], regulation: Regulation | None = None
) -> Outcome:
    """The game's outcome; only a confirmed one is ``decided`` (a pending proposal or a
    dismissed result decides nothing)."""
    return derive_game(events, regulation)


async def decisive_events(store: Store, games: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The decisive events of these games in one query (not one per game: 360 games at 9 rounds)."""
    wanted = list(games)
    out: dict[str, list[dict[str, Any]]] = {g: [] for g in wanted}
    if not wanted:
        return out
    e = t.events
    q = sa.select(e.c.game, e.c.seq, e.c.type, e.c.data).where(
        e.c.type.in_(DECISIVE_TYPES), e.c.game.in_(wanted)
    )
    async with store.engine.connect() as conn:
        for row in await conn.execute(q.order_by(e.c.game, e.c.seq)):
            out[row.game].append(dict(row._mapping))
    return out


def _record(game: Mapping[str, Any], outcome: Outcome) -> GameRecord:
    result = outcome.outcome  # red | black | draw | double_forfeit, confirmed only
    fouls = outcome.fouls
    return GameRecord(
        int(game["round"]),
        game["red"],
        game["black"],
        result,
        forfeit=result is not None and outcome.forfeit,
        red_fouls=fouls.get("red", {}).get("confirmed", 0),
        black_fouls=fouls.get("black", {}).get("confirmed", 0),
    )


async def game_records(store: Store, regulation: Regulation | None = None) -> list[GameRecord]:
    """Every paired Swiss game of the store as a ``GameRecord`` (undecided ones: result None)."""
    games = await store.games()
    events = await decisive_events(store, (g["game"] for g in games))
    return [_record(g, confirmed_outcome(events[g["game"]], regulation)) for g in games]


async def player_tags(store: Store) -> dict[str, frozenset[str]]:
    """name -> tags of every imported player."""
    p = t.players
    async with store.engine.connect() as conn:
        rows = await conn.execute(sa.select(p.c.name, p.c.tags))
        return {r.name: frozenset((r.tags or "").split()) for r in rows}


async def standings_of(
    station: Station, *, after_round: int | None = None, tag: str | tuple[str, ...] | None = None
) -> list[Standing]:
    """The standings after ``after_round`` (default: the last round with a game), optionally
    only the players holding ``tag`` (any of several). Raises ``StandingsError``."""
    store = station.store
    assert store is not None
    records = await game_records(store, station.regulation)
    players: dict[str, frozenset[str]] = dict(await player_tags(store))
    for rec in records:  # a name paired before the player list was imported has no tags
        players.setdefault(rec.red, frozenset())
        players.setdefault(rec.black, frozenset())
    reg = regulation_of(station)
    # Byes come from the pairing program (TRF 240 records, a pairs list's "N 0").
    byes = station_byes(await load_state(store), reg.scoring.win, reg.scoring.draw)
    for bye in byes:
        players.setdefault(bye.player, frozenset())
    return compute_standings(
        reg, records, players=players, byes=byes, after_round=after_round, tag=tag
    )


# -- HTTP ---------------------------------------------------------------------------------------
def _query(request: Request) -> tuple[int | None, str | tuple[str, ...] | None, str | None]:
    station = station_of(request)
    rounds = regulation_of(station).tournament.rounds
    after = int_param(request, "round", low=0, high=rounds)
    text = request.query_params.get("tag") or None
    if text is None:
        return after, None, None
    tags = tuple(sorted({x.strip() for x in text.split(",")} - {""}))
    if not tags or any(len(x) > 32 for x in tags):
        raise ApiError(400, f"tag {text!r}: one or more tags (comma separated)", where="query.tag")
    return after, tags[0] if len(tags) == 1 else tags, text


async def _compute(request: Request) -> tuple[list[Standing], int | None, str | None]:
    after, tag, tag_text = _query(request)
    try:
        rows = await standings_of(station_of(request), after_round=after, tag=tag)
    except StandingsError as exc:
        raise ApiError(400, f"cannot compute the standings: {exc}", kind="bad_standings") from None
    return rows, after, tag_text


async def standings(request: Request) -> Response:
    rows, after, tag = await _compute(request)
    station = station_of(request)
    return json_response(
        {
            "regulation": station.config.regulation,
            "after_round": after,
            "tag": tag,
            "standings": [r.as_dict() for r in rows],
        }
    )


async def export_standings(request: Request) -> Response:
    fmt = request.path_params["fmt"]
    if fmt not in ("csv", "json"):
        raise ApiError(
            404, f"no export format {fmt!r} (csv, json)", kind="not_found", where="path.fmt"
        )
    rows, after, tag = await _compute(request)
    station = station_of(request)
    name = f"{station.config.venue}-standings" + (f"-round{after}" if after is not None else "")
    if fmt == "csv":
        text, media = standings_csv(rows), "text/csv; charset=utf-8"
    else:
        reg = regulation_of(station)
        text = standings_json(rows, regulation=reg, after_round=after, tag=tag)
        media = "application/json"
    return Response(
        text,
        media_type=media,
        headers={"Content-Disposition": f'attachment; filename="{name}.{fmt}"'},
    )


async def page(request: Request) -> Response:
    headers = dict(SECURITY_HEADERS)
    headers["Cache-Control"] = "no-cache"
    return FileResponse(
        static_dir() / "standings.html", media_type="text/html; charset=utf-8", headers=headers
    )


def routes() -> list[BaseRoute]:
    return [
        Route("/api/standings", standings),
        Route("/api/export/standings.{fmt}", export_standings),
        Route("/standings", page, methods=["GET", "HEAD"]),
    ]
