"""What the hall screens show of the round: ``GET /api/round``.

- the current round: the highest round with a ``started`` event stored, and when it started
  (its first ``started`` event's ``ts``: a round started "at 13:30" starts every board then);
- its late deadline: that instant plus the regulation's ``late.minutes`` (DESIGN.md §2);
- the next start on the schedule: the regulation's ``[[tournament.sessions]]`` (date, start,
  rounds), as the first round of the first session after the current round. A round that is
  not a session's first has no announced time (it follows the one before), so the screen
  shows the next announced one.

The screen learns of a newly started round from the stream's ``started`` event at once and
asks here again; this module reads the store and the regulation only.
"""

from __future__ import annotations

import datetime
import functools
from typing import Any

import sqlalchemy as sa
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from clock_service.regulation import Regulation, Tournament
from venue_station import tables as t
from venue_station.http_base import json_response, station_of
from venue_station.store import Store
from wire_contract.wallclock import wall_ms

__all__ = ["current_round", "next_session", "routes"]


@functools.cache
def _regulation(name: str) -> Regulation:
    return Regulation.load(name)


async def current_round(store: Store) -> tuple[int, int] | None:
    """(round, started ms) of the highest round that has started, or None."""
    ev = t.events
    query = (
        sa.select(ev.c.round, sa.func.min(ev.c.ts))
        .where(ev.c.type == "started", ev.c.round.is_not(None))
        .group_by(ev.c.round)
        .order_by(ev.c.round.desc())
        .limit(1)
    )
    async with store.engine.connect() as conn:
        row = (await conn.execute(query)).first()
    return (int(row[0]), int(row[1])) if row is not None else None


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
    assert station.store is not None
    reg = _regulation(station.config.regulation)
    current = await current_round(station.store)
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
