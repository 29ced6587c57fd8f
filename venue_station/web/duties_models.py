"""The recording duties' (录谱, the arbiter's view) responses and body as pydantic models, and
their operations for the OpenAPI document (``openapi.py`` takes ``OPERATIONS``). Routes:
``duties_view.py``; the duties themselves: ``domain/record_duties.py``."""

from __future__ import annotations

from typing import Any, Literal

from venue_station.web.api_action_models import Body
from venue_station.web.api_models import Out
from venue_station.web.openapi_params import path_param as _p
from venue_station.web.openapi_params import query_param as _q
from venue_station.web.records_models import PairingOut

__all__ = ["OPERATIONS", "ConsentBody", "DutiesOut", "DutyOut"]

Ms = int


class Responsible(Out):
    side: Literal["red", "black"]
    player: str


class ConsentOut(Out):
    by: str | None
    ms: Ms | None


class DutyAlert(Out):
    id: int
    status: Literal["open", "acked", "confirmed", "dismissed", "cleared"]
    by: str | None


class DutyOut(Out):
    """One game that must be recorded: where its record stands and who must record it."""

    game: str
    board: str
    round: int
    red: str
    black: str
    because: Literal["top", "tag"]  # boards 1..N, or a player with one of the rule's tags
    responsible: Responsible | None  # None: no confirmed result yet
    state: Literal["due", "recorded", "late", "missing", "allowed"]
    plies: int  # moves recorded
    presses: int  # the clock's presses
    pairing: PairingOut  # the record against the clock: never merged, a mismatch said
    recorded_ms: Ms | None  # when the record was complete
    consent: ConsentOut | None  # the chief allowed a later or no record
    alert: DutyAlert | None  # the record_missing alert raised at the grace's end


class RuleOut(Out):
    top_boards: int
    player_tags: list[str]
    on_draw: Literal["red", "black"]
    chief_consent: bool
    foul: str


class DutiesOut(Out):
    round: int | None
    rule: RuleOut | None  # None: the profile has no [recording]
    grace_ends_ms: Ms | None  # the next round's start (None: not started yet)
    duties: list[DutyOut]


class ConsentBody(Body):
    """The chief allows a later or no record (``allow: false`` withdraws it, while the grace
    runs)."""

    allow: bool = True


# path -> method -> the keyword arguments of ``openapi.Op``
OPERATIONS: dict[str, dict[str, dict[str, Any]]] = {
    "/api/record-duties": {
        "get": {
            "summary": "the round's boards that must be recorded (录谱): due | recorded | late | "
            "missing | allowed, the responsible player, the alert raised at the grace's end",
            "response": DutiesOut,
            "params": (_q("round", "round number (default: the latest started)", "integer"),),
            "auth": "reader",
        }
    },
    "/api/record-duties/{game}/consent": {
        "post": {
            "summary": "the chief allows a later or no record (Meishan); clears the pending "
            "foul; 409 no_consent_rule | already_ruled | grace_over | record_not_required, "
            "404 no_game",
            "response": DutyOut,
            "params": (_p("game", "game id"),),
            "body": ConsentBody,
            "auth": "action",
        }
    },
}
