"""HTTP for the chief's changes to the tournament (``domain/tournament_desk.py``): withdraw
(退赛) and re-admit a player, give a bye, read the audit, undo the last change.

Each change needs the chief's (or the admin's) session; a refused change is a 409 (404 for an
unknown player) with a ``code`` and its ``args``, and changes nothing.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from venue_station.domain import tournament_desk as desk
from venue_station.domain.trf_state import load_state
from venue_station.errors import ImportRefused
from venue_station.web.access import require_reader
from venue_station.web.api_action_models import (
    AuditLog,
    ByeBody,
    ByeGiven,
    PlayerBody,
    UndoBody,
    Undone,
    Withdrawn,
)
from venue_station.web.api_actions import require_session
from venue_station.web.bodies import parse_body
from venue_station.web.http_base import (
    ApiError,
    import_refused,
    model_response,
    station_of,
    tournament_changed,
)

__all__ = ["routes"]


def _refused(exc: ImportRefused) -> ApiError:
    error = import_refused(exc)
    if exc.code == "no_player":
        error.status = 404
    return error


async def _withdraw(request: Request, *, withdrawn: bool) -> Response:
    user = require_session(request, "chief").user
    body = await parse_body(request, PlayerBody)
    try:
        out = await desk.set_withdrawn(
            station_of(request), body.player, withdrawn=withdrawn, user=user
        )
    except ImportRefused as exc:
        raise _refused(exc) from None
    tournament_changed(request)
    return model_response(Withdrawn(**out))


async def withdraw(request: Request) -> Response:
    return await _withdraw(request, withdrawn=True)


async def readmit(request: Request) -> Response:
    return await _withdraw(request, withdrawn=False)


async def bye(request: Request) -> Response:
    user = require_session(request, "chief").user
    body = await parse_body(request, ByeBody)
    try:
        out = await desk.give_bye(
            station_of(request), body.round, body.player, body.kind, user=user
        )
    except ImportRefused as exc:
        raise _refused(exc) from None
    tournament_changed(request)
    return model_response(ByeGiven(**out))


async def undo(request: Request) -> Response:
    user = require_session(request, "chief").user
    await parse_body(request, UndoBody)
    try:
        out = await desk.undo_last(station_of(request), user=user)
    except ImportRefused as exc:
        raise _refused(exc) from None
    tournament_changed(request)
    return model_response(Undone(**out))


async def audit(request: Request) -> Response:
    require_reader(request, "viewer")
    store = station_of(request).require_store()
    entries = list(reversed(await desk.audit_log(store)))  # newest first
    withdrawn = (await load_state(store)).withdrawn
    return model_response(AuditLog.model_validate({"audit": entries, "withdrawn": withdrawn}))


def routes() -> list[BaseRoute]:
    return [
        Route("/api/tournament/audit", audit),
        Route("/api/tournament/withdraw", withdraw, methods=["POST"]),
        Route("/api/tournament/readmit", readmit, methods=["POST"]),
        Route("/api/tournament/bye", bye, methods=["POST"]),
        Route("/api/tournament/undo", undo, methods=["POST"]),
    ]
