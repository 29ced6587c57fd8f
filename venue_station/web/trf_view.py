"""HTTP for the pairing program: export the TRF of any round (read access, like the standings
exports), import a TRF or a pairs list (the chief arbiter's or an admin's session)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from clock_service.trf.document import TrfError
from venue_station.domain import engine_run
from venue_station.domain.trf_export import export_trf
from venue_station.domain.trf_io import import_pairs, import_trf
from venue_station.domain.trf_state import load_state
from venue_station.errors import ImportRefused
from venue_station.resources import static_dir
from venue_station.web.api_actions import require_session
from venue_station.web.bodies import read_body
from venue_station.web.http_base import (
    ApiError,
    flag_param,
    import_refused,
    int_param,
    json_response,
    station_of,
    tournament_changed,
)
from venue_station.web.pages import SECURITY_HEADERS

__all__ = ["routes"]

MAX_BODY = 2 * 1024 * 1024  # a TRF of 9999 players and 99 rounds is ~11 MB; 2 MB is ~1800


def _error(exc: TrfError, what: str) -> ApiError:
    where = None
    if exc.line is not None:
        where = f"line {exc.line}"
        if exc.columns is not None:
            where += f", columns {exc.columns[0]}-{exc.columns[1]}"
    extra = {"line": exc.line, "columns": list(exc.columns) if exc.columns else None}
    return ApiError(400, f"{what}: {exc}", kind="bad_trf", where=where, extra=extra)


def _absent(request: Request) -> list[int]:
    text = request.query_params.get("absent") or ""
    out = []
    for part in filter(None, (x.strip() for x in text.split(","))):
        if not part.isdigit() or not 1 <= int(part) <= 9999:
            raise ApiError(
                400, f"absent: {part!r} is not a start rank 1..9999", where="query.absent"
            )
        out.append(int(part))
    return out


async def export(request: Request) -> Response:
    station = station_of(request)
    after = int_param(request, "round", low=0, high=99)
    try:
        text = await export_trf(station, after_round=after, absent_next=_absent(request))
    except TrfError as exc:
        raise _error(exc, "cannot write the TRF") from None
    name = f"{station.config.venue}" + (f"-round{after}" if after is not None else "")
    return Response(
        text,
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}.trf"'},
    )


async def _body(request: Request) -> bytes:
    # Refused while streaming past the limit, never read whole first (docs/security.md).
    return await read_body(request, MAX_BODY)


def _chief(request: Request) -> str:
    # The chief's (or the admin's): roles are ranked, see venue_station/web/access.py.
    return require_session(request, "chief").user


def _send(request: Request) -> bool:
    return request.query_params.get("send", "1") not in ("0", "false", "no")


async def import_file(request: Request) -> Response:
    user = _chief(request)
    body = await _body(request)
    try:
        out = await import_trf(
            station_of(request), body, send=_send(request), user=user, **_guarded(request)
        )
    except TrfError as exc:
        raise _error(exc, "cannot import the TRF") from None
    except ImportRefused as exc:
        raise import_refused(exc) from None
    if not out.get("dry_run"):
        tournament_changed(request)
    return json_response(out)


def _guarded(request: Request) -> dict[str, Any]:
    """``replace_round=N`` (the chief chose to replace round N, voiding its results) and
    ``dry_run=1`` (check and preview, store nothing)."""
    return {
        "replace": int_param(request, "replace_round", low=1, high=99),
        "dry_run": flag_param(request, "dry_run"),
    }


async def import_pairs_list(request: Request) -> Response:
    user = _chief(request)
    body = await _body(request)
    round_no = int_param(request, "round", low=1, high=99)
    try:
        out = await import_pairs(
            station_of(request), body, round_no=round_no, send=_send(request), user=user,
            **_guarded(request),
        )  # fmt: skip
    except TrfError as exc:
        raise _error(exc, "cannot import the pairs list") from None
    except ImportRefused as exc:
        raise import_refused(exc) from None
    if not out.get("dry_run"):
        tournament_changed(request)
    return json_response(out)


def _engine_error(exc: engine_run.PairingEngineError) -> ApiError:
    return ApiError(
        exc.status, f"pairing engine: {exc}", kind="pairing_engine", extra={"reason": exc.code}
    )


async def propose(request: Request) -> Response:
    _chief(request)
    try:
        out = await engine_run.propose(station_of(request))
    except engine_run.PairingEngineError as exc:
        raise _engine_error(exc) from None
    return json_response(out)


async def _state(request: Request) -> Response:
    station = station_of(request)
    kept = await engine_run.proposal(station)
    return json_response({"engine": station.config.pairing.engine, "proposal": kept})


async def proposal(request: Request) -> Response:
    return await _state(request)


async def approve(request: Request) -> Response:
    user = _chief(request)
    try:
        out = await engine_run.approve(station_of(request), send=_send(request), user=user)
    except engine_run.PairingEngineError as exc:
        raise _engine_error(exc) from None
    except TrfError as exc:
        raise _error(exc, "cannot import the proposal") from None
    tournament_changed(request)
    return json_response(out)


async def discard(request: Request) -> Response:
    _chief(request)
    await engine_run.discard(station_of(request))
    return await _state(request)


async def entrants(request: Request) -> Response:
    store = station_of(request).require_store()
    state = await load_state(store)
    rows = [
        {
            "start_rank": e["start_rank"],
            "player": e["key"],
            "name": e["name"],
            "withdrawn": e["key"] in state.withdrawn,
        }
        for e in sorted(state.entrants, key=lambda e: int(e["start_rank"]))
    ]
    return json_response({"entrants": rows, "byes": state.byes})


async def page(request: Request) -> Response:
    headers = dict(SECURITY_HEADERS)
    headers["Cache-Control"] = "no-cache"
    return FileResponse(
        static_dir() / "pairing.html", media_type="text/html; charset=utf-8", headers=headers
    )


def routes() -> list[BaseRoute]:
    return [
        Route("/pairing", page, methods=["GET", "HEAD"]),
        Route("/api/export/tournament.trf", export),
        Route("/api/trf/entrants", entrants),
        Route("/api/trf", import_file, methods=["POST"]),
        Route("/api/pairs", import_pairs_list, methods=["POST"]),
        Route("/api/pairing/propose", propose, methods=["POST"]),
        Route("/api/pairing/proposal", proposal),
        Route("/api/pairing/approve", approve, methods=["POST"]),
        Route("/api/pairing/discard", discard, methods=["POST"]),
    ]
