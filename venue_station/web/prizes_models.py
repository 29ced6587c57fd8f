"""The prize list's response (奖励名单) as pydantic models, and its operations for the OpenAPI
document (``openapi.py`` takes ``OPERATIONS``). Routes: ``prizes_view.py``; the drawing:
``domain/prizes.py`` and ``clock_service/prizes.py``; the rules: docs/prizes.md."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from venue_station.web.api_models import Out
from venue_station.web.openapi_params import query_param as _q

__all__ = ["OPERATIONS", "PrizesOut"]

Yuan = str  # "1234.50"


class PrizeRow(Out):
    place: int
    to: int = Field(description="the last place a shared prize covers (== place when not shared)")
    player: str
    prize: Yuan = Field(description='"" while the knockout decides the place (knockout_pending)')
    knockout_pending: bool = Field(
        description="one of the knockout's four while it is played: places 1–4 in an order "
        "not known yet"
    )
    shared: bool
    withdrawn: bool
    knockout_place: int | None
    tags: list[str] = Field(description="the list's groups the player is in (empty: everyone's)")


class Shrunk(Out):
    below: int
    percent: int


class PrizeListOut(Out):
    key: str
    zh: str
    en: str
    tags: list[str]
    places: int = Field(description="the places the regulation pays")
    members: int = Field(description="the list's players (a group may have fewer than places)")
    paid_places: int = Field(description="the places paid after the 30 % rule (shrunk)")
    shrunk: Shrunk | None
    total: Yuan
    paid: Yuan
    rows: list[PrizeRow]


class PrizesOut(Out):
    regulation: str
    final: bool
    provisional: list[Literal["rounds", "undecided", "knockout"]]
    registered: int = Field(description="报名参赛人数: the whole event's standings rows")
    combinable: bool
    total: Yuan
    lists: list[PrizeListOut]


LANG = _q("lang", "zh | en: the header row's language (default: field codes)")

# path -> method -> the keyword arguments of ``openapi.Op``
OPERATIONS: dict[str, dict[str, dict[str, Any]]] = {
    "/api/prizes": {
        "get": {
            "summary": "the prize list (奖励名单) from the standings by the regulation's prizes; "
            "404 no_prizes when it has none",
            "response": PrizesOut,
        }
    },
    "/api/export/prizes.csv": {
        "get": {
            "summary": "the prize list as CSV, a row per prize winner",
            "response": "text/csv",
            "params": (LANG,),
        }
    },
    "/prizes": {"get": {"summary": "the prize list page", "response": "text/html"}},
}
