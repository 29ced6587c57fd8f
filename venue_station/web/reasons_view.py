"""The regulation's reason codes for the arbiter page: ``GET /api/regulation/reasons``.

Every foul, immediate-loss (立即判负) and result reason of the station's profile with the seed's
Chinese wording and an English one, and the count that makes a reason a loss, so the page
offers a choice instead of free text (a mistyped reason was an ``ok: false``). The handicap
rule is there too, for the page to explain 让二先.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from clock_service.reasons import KINDS
from clock_service.regulation import Regulation
from venue_station.web.http_base import json_response, station_of

__all__ = ["reasons_json", "routes"]


def reasons_json(regulation: Regulation) -> dict[str, Any]:
    body: dict[str, Any] = {"regulation": regulation.name, "title": regulation.title}
    for kind in KINDS:
        body[kind] = [r.as_dict() for r in regulation.reasons(kind)]
    rule = regulation.handicap
    body["handicap"] = None if rule is None else {"moves": rule.moves}
    body["fouls_forfeit_at"] = regulation.fouls.forfeit_at
    body["move_limit"] = regulation.move_limit.moves  # 自然限着, full moves: the page's default
    body["knockout"] = regulation.knockout is not None  # the arbiter page's 淘汰赛 section
    return body


async def reasons(request: Request) -> Response:
    return json_response(reasons_json(station_of(request).regulation))


def routes() -> list[BaseRoute]:
    return [Route("/api/regulation/reasons", reasons)]
