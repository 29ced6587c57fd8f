"""A round's games as one PGN file: ``GET /api/export/rounds/{round}/games.pgn``.

Each game is what ``/api/export/games/{game}/clock.pgn`` writes (its clock after every move
and its result by the one outcome function), one after another with a blank line between, as
PGN readers expect of a file of many games, the knockout's games played beside the round
first (an outsider chief found the final in no round's file). The arbiter and standings pages
link it.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from venue_station.domain import exports
from venue_station.live.results import derive_game
from venue_station.web.http_base import ApiError, path_int, station_of

__all__ = ["routes"]


async def round_pgn(request: Request) -> Response:
    station = station_of(request)
    round_no = path_int(request, "round")
    store = station.require_store()
    # Meishan's knockout games played beside the round (on its top boards) are the round's too
    games = await station.knockout.rows_of_round(round_no) + await store.games(round_no)
    if not games:
        raise ApiError(404, f"no games in round {round_no}", kind="not_found", where="path.round")
    parts = []
    for row in games:
        evs = await store.game_events(row["game"])
        outcome = derive_game(evs, station.regulation)
        log_rows = exports.clock_log(evs)
        parts.append(
            exports.clock_log_pgn(
                row, log_rows, outcome, event=station.event_title, date=exports.pgn_date(evs)
            )
        )
    name = f"{station.config.venue}-round{round_no}.pgn"
    return Response(
        "\n".join(p if p.endswith("\n") else p + "\n" for p in parts),
        media_type="application/x-chess-pgn; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def routes() -> list[BaseRoute]:
    return [Route("/api/export/rounds/{round}/games.pgn", round_pgn)]
