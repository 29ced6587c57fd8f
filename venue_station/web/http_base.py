"""What every route module shares: the API's error, JSON responses, the station of a request
(the domain), the web's own sessions and login guard, and bounded whole numbers from the query
and the path. Imports no route module, so none of them
import each other through it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse

from venue_station.errors import StationError

if TYPE_CHECKING:
    from venue_station.auth import Sessions
    from venue_station.domain.station import Station
    from venue_station.web.login_guard import LoginGuard

__all__ = [
    "ApiError",
    "KeyedLocks",
    "int_param",
    "json_response",
    "login_guard_of",
    "model_response",
    "path_int",
    "sessions_of",
    "station_of",
]


class ApiError(StationError):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str = "bad_request",
        where: str | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.where, self.extra = (
            status,
            message,
            kind,
            where,
            extra or {},
        )
        self.headers = headers or {}


def json_response(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


def model_response(model: BaseModel, status: int = 200) -> JSONResponse:
    """A response built through its model (the one the OpenAPI document shows): a field the
    model does not name cannot be sent. For the small replies; the lists the hall screens poll
    stay plain dicts (docs/web.md)."""
    return JSONResponse(model.model_dump(mode="json"), status_code=status)


def station_of(request: Request) -> Station:
    station: Station = request.app.state.station
    return station


def tournament_changed(request: Request) -> None:
    """The players, their groups or withdrawals, or a round's pairing changed: the standings,
    prize list and round sheet read their table again (SSE ``tournament``; they showed a new
    group only after a reload, the wall's round sheet the old round)."""
    station_of(request).hub.publish("tournament", {})


def sessions_of(request: Request) -> Sessions:
    """The logged-in sessions: the web's, not the domain's (``api.build_app`` makes them)."""
    sessions: Sessions = request.app.state.sessions
    return sessions


def login_guard_of(request: Request) -> LoginGuard:
    guard: LoginGuard = request.app.state.login_guard
    return guard


def int_param(
    request: Request, name: str, *, default: int | None = None, low: int = 0, high: int = 10**12
) -> int | None:
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        if not text.isascii() or len(text) > 20:
            raise ValueError
        value = int(text)
    except ValueError:
        raise ApiError(
            400, f"{name} must be a whole number, not {text!r}", where=f"query.{name}"
        ) from None
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be from {low} to {high}", where=f"query.{name}")
    return value


def path_int(request: Request, name: str, *, high: int = 999) -> int:
    """A whole number from the path, 0..``high`` (ASCII digits only: ``²`` is no number)."""
    text = request.path_params[name]
    if not (text.isascii() and text.isdigit() and len(text) <= 12) or int(text) > high:
        raise ApiError(400, f"{name} must be a whole number from 0 to {high}", where=f"path.{name}")
    return int(text)


def flag_param(request: Request, name: str, *, default: bool = False) -> bool:
    """A yes/no query parameter (1/true/yes, 0/false/no)."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    if text in ("1", "true", "yes"):
        return True
    if text in ("0", "false", "no"):
        return False
    raise ApiError(400, f"{name} must be 1 or 0, not {text!r}", where=f"query.{name}")


def import_refused(exc: Any) -> ApiError:
    """An ``ImportRefused`` as its 409: the code and arguments the pairing page translates."""
    return ApiError(409, exc.message, kind=exc.code, extra={"args": exc.args_})


class KeyedLocks:
    """One lock per key (an alert's id) while anyone holds or waits for it; none kept after."""

    def __init__(self) -> None:
        self._locks: dict[Any, tuple[asyncio.Lock, int]] = {}

    def __len__(self) -> int:
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, key: Any) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
