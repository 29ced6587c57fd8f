"""The station's HTTP API (Starlette): read routes, the SSE stream, metrics, health.

Every error is JSON ``{"error": "...", "where": "..."}`` with a 4xx/5xx status; a 4xx is logged
at WARNING and counted in ``/metrics`` by kind. The OpenAPI document is ``/api/openapi.json``.
The actions (commands, imports, alerts, login) are in ``api_actions.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from venue_station.auth import COOKIE, Sessions
from venue_station.domain import exports
from venue_station.errors import StoreUnavailable
from venue_station.live.alerts import ALERT_STATUSES
from venue_station.live.fanout import FanoutFull, format_sse
from venue_station.live.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from venue_station.live.privacy import is_private_event, public_board, public_message
from venue_station.live.results import derive_game, points
from venue_station.web import (
    duties_view,
    knockout_flow,
    pages,
    prizes_view,
    reasons_view,
    records_view,
    round_clock,
    round_pgn,
    standby,
    standings_view,
    tournament_view,
    trf_view,
)
from venue_station.web.access import client_address, reader_of, require_reader
from venue_station.web.api_actions import action_routes
from venue_station.web.http_base import (
    ApiError,
    KeyedLocks,
    int_param,
    json_response,
    path_int,
    station_of,
)
from venue_station.web.login_guard import LoginGuard
from venue_station.web.openapi import SCHEMA
from venue_station.web.recorder_fence import RecorderFence
from wire_contract.messages import EVENT_DATA

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["ApiError", "build_app", "json_response"]

log = logging.getLogger(__name__)
Handler = Callable[[Request], Awaitable[Response]]


# -- read routes -------------------------------------------------------------------------------
async def healthz(request: Request) -> Response:
    health = station_of(request).health()
    return json_response(health, 200 if health["ok"] else 503)


async def metrics(request: Request) -> Response:
    require_reader(request)
    return Response(station_of(request).metrics.exposition(), media_type=METRICS_CONTENT_TYPE)


async def openapi(request: Request) -> Response:
    return json_response(SCHEMA)


async def info(request: Request) -> Response:
    return json_response(station_of(request).info())


def _is_reader(request: Request) -> bool:
    return reader_of(request) is not None


def _views(request: Request) -> list[dict[str, Any]]:
    views = station_of(request).board_views()
    return views if _is_reader(request) else [public_board(v) for v in views]


async def boards(request: Request) -> Response:
    return json_response({"boards": _views(request)})


async def board(request: Request) -> Response:
    station = station_of(request)
    board_id = request.path_params["board"]
    view = next((b for b in _views(request) if b["board"] == board_id), None)
    if view is None:
        raise ApiError(404, f"no board {board_id!r}", kind="not_found", where="path.board")
    assert station.store is not None
    rows = await station.store.events(board=board_id, limit=50, newest_first=True)
    if not _is_reader(request):
        rows = [r for r in rows if not is_private_event(r)]
    view["events"] = _events_json(rows)
    return json_response(view)


def _events_json(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            **r,
            "clock": {
                "red_ms": r.pop("red_ms"),
                "black_ms": r.pop("black_ms"),
                "running": r.pop("running"),
            },
        }
        for r in rows
    ]


async def events(request: Request) -> Response:
    station = station_of(request)
    assert station.store is not None
    limit = int_param(request, "limit", default=100, low=1, high=1000) or 100
    types = request.query_params.get("type")
    type_list = [t for t in types.split(",") if t] if types else None
    for t in type_list or []:
        if t not in EVENT_DATA:
            raise ApiError(400, f"unknown event type {t!r}", where="query.type")
    order = request.query_params.get("order", "asc")
    if order not in ("asc", "desc"):
        raise ApiError(400, "order must be asc or desc", where="query.order")
    rows = await station.store.events(
        board=request.query_params.get("board") or None,
        round=int_param(request, "round", low=1, high=999),
        game=request.query_params.get("game") or None,
        types=type_list,
        after=int_param(request, "after"),
        before=int_param(request, "before"),
        limit=limit,
        newest_first=order == "desc",
    )
    nxt = rows[-1]["id"] if len(rows) == limit else None
    if not _is_reader(request):  # pending fouls and forfeits are the arbiter's until ruled
        rows = [r for r in rows if not is_private_event(r)]
    return json_response({"events": _events_json(rows), "next": nxt})


def _game_json(game: dict[str, Any], outcome: Any, scoring: Any) -> dict[str, Any]:
    red_pts, black_pts = points(outcome.result, scoring)
    return {
        **game,
        "result": outcome.result,
        "winner": outcome.winner,
        "reason": outcome.reason,
        "decided_by": outcome.source,
        "fouls": outcome.fouls,
        "status": outcome.status,  # undecided | pending | confirmed (clock_service.outcome)
        "proposed": outcome.proposed,
        "proposed_reason": outcome.proposed_reason,
        "red_points": red_pts,
        "black_points": black_pts,
    }


async def games(request: Request) -> Response:
    station = station_of(request)
    round_no = int_param(request, "round", low=1, high=999)
    return json_response(
        {"games": [_game_json(g, o, station.scoring) for g, o in await station.outcomes(round_no)]}
    )


async def _game_or_404(
    station: Station, game_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    assert station.store is not None
    # a Swiss game, or a knockout game put on a board (exported alike)
    game = await station.store.game(game_id) or await station.knockout.game_row(game_id)
    if game is None:
        raise ApiError(404, f"no game {game_id!r}", kind="not_found", where="path.game")
    return game, await station.store.game_events(game_id)


async def game(request: Request) -> Response:
    station = station_of(request)
    row, evs = await _game_or_404(station, request.path_params["game"])
    body = _game_json(row, derive_game(evs, station.regulation), station.scoring)
    body["clock_log"] = [vars(r) for r in exports.clock_log(evs)]
    return json_response(body)


async def results(request: Request) -> Response:
    station = station_of(request)
    round_no = int_param(request, "round", low=1, high=999)
    rows = exports.round_results(await station.outcomes(round_no), station.scoring)
    return json_response({"round": round_no, "results": rows})


async def fouls(request: Request) -> Response:
    return json_response({"players": await station_of(request).player_fouls()})


async def rounds(request: Request) -> Response:
    station = station_of(request)
    assert station.store is not None
    out = []
    pairs = await station.store.pairings()
    # when each round's clocks started (its first started event): the rounds table's own
    # column was never written (an outsider read started_ms null for every started round)
    starts = await station.store.reads.round_starts()
    for r in await station.store.rounds():
        started = starts.get(int(r["round"]), r.get("started_ms"))
        out.append(
            {**r, "started_ms": started, "pairings": [p for p in pairs if p["round"] == r["round"]]}
        )
    return json_response({"rounds": out})


async def alerts(request: Request) -> Response:
    require_reader(request)
    station = station_of(request)
    assert station.store is not None
    status = request.query_params.get("status") or None
    if status is not None and status not in (*ALERT_STATUSES, "active"):
        raise ApiError(
            400,
            f"status must be one of {', '.join((*ALERT_STATUSES, 'active'))}",
            where="query.status",
        )
    limit = int_param(request, "limit", default=200, low=1, high=1000) or 200
    # Decided and already on the stream, not yet committed: a page (re)loading now sees them.
    # Taken before the store is read: one the writer commits meanwhile is in the one or the
    # other (taken after, it was in neither).
    unstored = []
    if station.ingest is not None and status in (None, "open", "active"):
        unstored = station.ingest.alert_ledger.unstored()
    rows = await station.store.alerts(status=status, limit=limit)
    if unstored:
        stored = {a["id"] for a in rows}
        early = [a for a in unstored if a["id"] not in stored]
        if early:
            rows = sorted(early + rows, key=lambda a: a["id"], reverse=True)[:limit]
    return json_response({"alerts": rows})


async def set_aside(request: Request) -> Response:
    """What the writer could not store, newest first, with the reason (docs/security.md).
    Arbiter-only data, like the alerts it raised."""
    require_reader(request)
    station = station_of(request)
    assert station.store is not None
    limit = int_param(request, "limit", default=200, low=1, high=1000) or 200
    return json_response({"set_aside": await station.store.set_aside_rows(limit)})


async def stream(request: Request) -> Response:
    station = station_of(request)
    private = _is_reader(request)
    # A login that ends (logged out, expired) ends its stream at the next news: arbiter-only
    # news stops, and the page, reconnected as anyone, learns its login ended.
    sid, logins = request.cookies.get(COOKIE), request.app.state.sessions
    try:
        queue = station.hub.subscribe(private=private, address=client_address(request))
    except FanoutFull as exc:
        raise ApiError(503, str(exc), kind="streams_full", headers={"Retry-After": "30"}) from None
    hello = {"station": station.info(), "boards": station.board_views()}

    async def body() -> AsyncIterator[str | bytes]:
        try:
            yield format_sse(
                "hello", hello if private else dict(public_message("hello", hello) or {})
            )
            if not private:
                # The public feed writes at most once a tick, pings when idle, ends with None.
                while (chunk := await queue.get()) is not None:
                    yield chunk
                return
            while True:
                try:
                    async with asyncio.timeout(15):
                        item = await queue.get()
                except TimeoutError:
                    yield format_sse("ping", {})
                    continue
                if item is None:
                    return
                # What queued up while this stream waited for the loop goes as one write.
                batch, ended = [item], False
                while not queue.empty() and not ended:
                    more = queue.get_nowait()
                    ended = more is None
                    if not ended:
                        batch.append(more)
                # checked as it is written, not as it was begun: news queued after the login
                # ended never goes out in the batch of news from before (a loaded CI run)
                if logins.get(sid) is None:
                    return
                yield "".join(batch)
                if ended:
                    return
        finally:
            station.hub.unsubscribe(queue)

    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


# -- exports -----------------------------------------------------------------------------------
async def export_results(request: Request) -> Response:
    station = station_of(request)
    round_no = path_int(request, "round")
    fmt = request.path_params["fmt"]
    outcomes = await station.outcomes(round_no)
    if not outcomes:
        raise ApiError(404, f"no games in round {round_no}", kind="not_found", where="path.round")
    rows = exports.round_results(outcomes, station.scoring)
    name = f"{station.config.venue}-round{round_no}"
    if fmt == "csv":
        lang = request.query_params.get("lang")
        lang = lang if lang in exports.RESULT_HEADERS else None
        words = exports.reason_words(station.regulation, lang) if lang else None
        text = exports.round_results_csv(rows, lang=lang, reason_words=words)
        return _download(text, "text/csv; charset=utf-8", f"{name}.csv")
    if fmt == "json":
        text = exports.round_results_json(round_no, station.config.regulation, rows)
        return _download(text, "application/json", f"{name}.json")
    raise ApiError(404, f"no export format {fmt!r} (csv, json)", kind="not_found", where="path.fmt")


async def export_clock(request: Request) -> Response:
    station = station_of(request)
    row, evs = await _game_or_404(station, request.path_params["game"])
    log_rows = exports.clock_log(evs)
    fmt = request.path_params["fmt"]
    if fmt == "csv":
        return _download(
            exports.clock_log_csv(log_rows), "text/csv; charset=utf-8", f"{row['game']}-clock.csv"
        )
    if fmt == "pgn":
        outcome = derive_game(evs, station.regulation)
        text = exports.clock_log_pgn(
            row, log_rows, outcome, event=station.event_title, date=exports.pgn_date(evs)
        )
        return _download(text, "application/x-chess-pgn; charset=utf-8", f"{row['game']}.pgn")
    raise ApiError(404, f"no export format {fmt!r} (csv, pgn)", kind="not_found", where="path.fmt")


def _download(text: str, media: str, filename: str) -> Response:
    return Response(
        exports.with_bom(text) if media.startswith("text/csv") else text,
        media_type=media,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


# -- the app -----------------------------------------------------------------------------------
def read_routes() -> list[BaseRoute]:
    # Imported here: both modules build on this one (ApiError, station_of).
    return [
        Route("/healthz", healthz),
        Route("/metrics", metrics),
        Route("/api/openapi.json", openapi),
        Route("/api/station", info),
        Route("/api/boards", boards),
        Route("/api/boards/{board}", board),
        Route("/api/events", events),
        Route("/api/games", games),
        Route("/api/games/{game}", game),
        Route("/api/results", results),
        Route("/api/fouls", fouls),
        Route("/api/rounds", rounds),
        Route("/api/alerts", alerts),
        Route("/api/set_aside", set_aside),
        Route("/api/stream", stream),
        Route("/api/export/rounds/{round}/results.{fmt}", export_results),
        Route("/api/export/games/{game}/clock.{fmt}", export_clock),
        *standings_view.routes(),
        *prizes_view.routes(),
        *knockout_flow.routes(),
        *reasons_view.routes(),
        *round_clock.routes(),
        *trf_view.routes(),
        *round_pgn.routes(),
        *tournament_view.routes(),
        *standby.routes(),
        *duties_view.routes(),
        *records_view.routes(),
    ]


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    response = _error(request, exc.status, exc.message, exc.kind, exc.where, exc.extra)
    response.headers.update(exc.headers)
    return response


async def _store_unavailable(request: Request, exc: Exception) -> Response:
    """The station serves without its database for now (a full disk at start): 503, retry."""
    response = _error(request, 503, str(exc), "store_unavailable", None, {})
    response.headers["Retry-After"] = "5"
    return response


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "bad_request")
    return _error(request, exc.status_code, str(exc.detail), kind, None, {})


def _error(
    request: Request, status: int, message: str, kind: str, where: str | None, extra: dict[str, Any]
) -> Response:
    if status < 500:
        station_of(request).metrics.bad_requests[kind] += 1
        log.warning("HTTP %d %s %s: %s", status, request.method, request.url.path, message)
    else:
        log.warning("HTTP %d %s %s: %s", status, request.method, request.url.path, message)
    # ``code``: what the pages translate (the message is the English for logs and tools).
    body = {"error": message, "code": kind, **({"where": where} if where else {}), **extra}
    return json_response(body, status)


def build_app(station: Station) -> Starlette:
    """The app over a started (or starting) station. The web's own state lives on it: the
    logged-in sessions and the login guard (its hashing threads: ``login_guard.close()``)."""
    routes = read_routes() + action_routes() + list(pages.routes(station))
    app = Starlette(
        routes=routes,
        middleware=[Middleware(RecorderFence)],  # a recorder records and does nothing else
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            StoreUnavailable: _store_unavailable,
        },
    )
    config = station.config
    http = config.http
    app.state.station = station
    app.state.sessions = Sessions(
        ((a.username, a.password_hash, a.role) for a in config.account),
        boards={a.username: a.boards for a in config.account if a.boards is not None},
    )
    app.state.alert_locks = KeyedLocks()  # one ruling of an alert at a time (api_actions)
    app.state.login_guard = LoginGuard(
        per_address=http.login_per_address,
        per_account=http.login_per_account,
        window_s=http.login_window_s,
        concurrency=http.hash_concurrency,
        queue=http.hash_queue,
    )
    return app
