"""Who may do what on the web port: the session a request carries, its role, its CSRF token.

- ``require_session(request, role)``: an action (state-changing). 401 without a valid session
  cookie, 403 without the session's CSRF token in ``X-CSRF-Token``, 403 when the account's role
  is below ``role`` (see ``auth.ROLES``).
- ``require_reader(request)``: arbiter-only data (alerts, pending fouls and forfeits, metrics);
  any logged-in account (a ``viewer`` at least), no CSRF token needed for a read.
- ``require_recorder(request, board)``: an action on a board's game record (录谱): a recorder
  of that board or an arbiter and above, with the CSRF token.
- ``reader_of(request)``: the same without refusing: None for an anonymous request (the public
  stream and event list leave the arbiter-only items out for it).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from venue_station.auth import COOKIE, CSRF_HEADER, RECORDER, Session, role_allows
from venue_station.web.api_models import SessionInfo
from venue_station.web.http_base import ApiError, model_response, sessions_of

__all__ = [
    "client_address",
    "reader_of",
    "require_reader",
    "require_recorder",
    "require_session",
    "session_response",
]


def client_address(request: Request) -> str:
    return request.client.host if request.client is not None else "?"


def reader_of(request: Request) -> Session | None:
    session = sessions_of(request).get(request.cookies.get(COOKIE))
    if session is None or not role_allows(session.role, "viewer"):
        return None
    return session


def require_reader(request: Request, role: str = "viewer") -> Session:
    session = reader_of(request)
    if session is None:
        raise ApiError(401, "log in first (arbiter-only data)", kind="unauthenticated")
    if not role_allows(session.role, role):
        raise ApiError(
            403, f"the {session.role} account may not read this (needs {role})", kind="forbidden"
        )
    return session


def require_session(request: Request, role: str | None = "arbiter") -> Session:
    """``role`` None: any logged-in session, a recorder's too (logging out)."""
    sessions = sessions_of(request)
    sid = request.cookies.get(COOKIE)
    session = sessions.get(sid)
    if session is None:
        raise ApiError(401, "log in first (no valid session cookie)", kind="unauthenticated")
    if sessions.check(sid, request.headers.get(CSRF_HEADER)) is None:
        raise ApiError(403, f"missing or wrong {CSRF_HEADER} header", kind="csrf")
    if role is not None and not role_allows(session.role, role):
        raise ApiError(
            403,
            f"the {session.role} account {session.user!r} may not do this (needs {role})",
            kind="forbidden",
        )
    return session


def require_recorder(request: Request, board: str) -> Session:
    """An action on ``board``'s record: a recorder of that board, or an arbiter or above
    (cookie and CSRF token as every action)."""
    session = require_session(request, None)
    if session.role == RECORDER and not session.records(board):
        raise ApiError(
            403,
            f"{session.user!r} records board(s) {', '.join(session.boards or ())} only",
            kind="recorder_only",
            where="path.board",
        )
    if not session.records(board):
        raise ApiError(
            403,
            f"the {session.role} account {session.user!r} may not record (needs arbiter)",
            kind="forbidden",
        )
    return session


def session_response(session: Session, *, secure: bool) -> Response:
    """A session just opened (a login, a board's record key): its ``SessionInfo`` and the
    session cookie (HttpOnly, SameSite=Strict, Secure when the station says so)."""
    boards = list(session.boards) if session.boards is not None else None
    info = SessionInfo(user=session.user, role=session.role, csrf=session.csrf, boards=boards)
    response = model_response(info)
    response.set_cookie(
        COOKIE, session.sid, httponly=True, samesite="strict", path="/", secure=secure
    )
    return response
