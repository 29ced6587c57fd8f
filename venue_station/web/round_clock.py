"""What the hall screens show of the round: ``GET /api/round``.

- the current round: the highest round with a ``started`` event stored, and when it started
  (its first ``started`` event's ``ts``: a round started "at 13:30" starts every board then;
  a round whose announced start had already passed when the chief started the clocks started
  at that announced time, ``Reads.announced_start``: the boards count 迟到 from it too);
- its late deadline: that instant plus the regulation's ``late.minutes`` (DESIGN.md §2);
- the next start on the schedule: the regulation's ``[[tournament.sessions]]`` (date, start,
  rounds), as the first round of the first session after the current round. A round that is
  not a session's first has no announced time (it follows the one before), so the screen
  shows the next announced one.

The screen learns of a newly started round from the stream's ``started`` event at once and
asks here again; this module reads the store (``Store.current_round``) and the regulation only.
"""

from __future__ import annotations

import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from clock_service.regulation import Tournament
from venue_station.web.http_base import json_response, station_of
from wire_contract.wallclock import wall_ms

__all__ = ["next_session", "routes"]


def next_session(tournament: Tournament, after_round: int) -> dict[str, Any] | None:
    """The first session whose first round comes after ``after_round`` (0: none played)."""
    first = 1
    for session in tournament.sessions:
        if first > after_round:
            start = datetime.datetime.combine(session.date, session.start).astimezone()
            return {
                "round": first,
                "date": session.date.isoformat(),
                "time": session.start.strftime("%H:%M"),
                "start_ms": int(start.timestamp() * 1000),
            }
        first += session.rounds
    return None


async def round_view(request: Request) -> Response:
    station = station_of(request)
    reg = station.regulation
    reads = station.require_store().reads
    current = await reads.current_round()
    if current is not None:
        announced = await reads.announced_start(current[1])
        if announced is not None:
            current = (current[0], announced)
    body: dict[str, Any] = {
        "round": None,
        "rounds": reg.tournament.rounds,
        "started_ms": None,
        "late_ms": reg.late.ms,
        "late_deadline_ms": None,
        "station_ts": wall_ms(),
    }
    if current is not None:
        round_no, started = current
        body.update(round=round_no, started_ms=started, late_deadline_ms=started + reg.late.ms)
    body["next"] = next_session(reg.tournament, current[0] if current else 0)
    return json_response(body)


def routes() -> list[BaseRoute]:
    return [Route("/api/round", round_view)]
