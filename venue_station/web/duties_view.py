"""The arbiter's view of the records (录谱, issue 29): ``GET /api/record-duties[?round=]`` (any
logged-in account) and the chief's ``POST /api/record-duties/{game}/consent`` ``{"allow"}``
(with the CSRF token). The duties are ``domain/record_duties.py``'s; refusals are its
``DutyRefused``: status, ``code`` and ``args``."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from venue_station.domain.record_duties import DutyRefused
from venue_station.web.access import require_reader, require_session
from venue_station.web.bodies import parse_body
from venue_station.web.duties_models import ConsentBody, DutiesOut, DutyOut
from venue_station.web.http_base import ApiError, int_param, model_response, station_of
from wire_contract.messages import ID_PATTERN

__all__ = ["routes"]


def _rule(station: Any) -> dict[str, Any] | None:
    rule = station.regulation.recording
    if rule is None:
        return None
    return {
        "top_boards": rule.top_boards,
        "player_tags": list(rule.player_tags),
        "on_draw": rule.on_draw.value,
        "chief_consent": rule.chief_consent,
        "foul": rule.foul,
    }


async def duties(request: Request) -> Response:
    require_reader(request)
    station = station_of(request)
    round_no = int_param(request, "round", low=1, high=999)
    if round_no is None:
        current = await station.require_store().reads.current_round()
        round_no = current[0] if current is not None else None
    rows = [] if round_no is None else await station.duties.round_duties(round_no)
    ends = None if round_no is None else await station.duties.grace_ends(round_no)
    body = {
        "round": round_no,
        "rule": _rule(station),
        "grace_ends_ms": ends,
        "duties": [d.as_dict() for d in rows],
    }
    return model_response(DutiesOut.model_validate(body))


async def consent(request: Request) -> Response:
    session = require_session(request, "chief")
    game = str(request.path_params["game"])
    if not re.match(ID_PATTERN, game):
        raise ApiError(400, f"game {game!r} is not a valid id", where="path.game")
    allow = (await parse_body(request, ConsentBody)).allow
    try:
        duty = await station_of(request).duties.consent(game, allow=allow, by=session.user)
    except DutyRefused as exc:
        raise ApiError(exc.status, exc.message, kind=exc.code, extra={"args": exc.args_}) from None
    return model_response(DutyOut.model_validate(duty.as_dict()))


def routes() -> list[BaseRoute]:
    return [
        Route("/api/record-duties", duties),
        Route("/api/record-duties/{game}/consent", consent, methods=["POST"]),
    ]
