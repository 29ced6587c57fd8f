"""A recorder (录谱) may do nothing but record its boards: the fence around every route.

An ASGI middleware in front of the routes: a request carrying a recorder session (a
``role = "recorder"`` account, or a board's record key) reaches only its boards' records
(``/api/records/{board}`` and its moves and undo, the record page ``/record/{board}``, never
the chief's QR sheet ``/record/sheet`` nor its ``/api/record-keys/qr.svg``), the
pages' static files, its own session (``/api/auth/*``) and the alarms every page's banner
polls (``/api/station``). Everything else, even what an anonymous reader may see, is refused
before any route runs: 403 with code ``recorder_only`` — for a page (not ``/api/``) a page in
words, both languages, leading back to its record page (a recorder tapping 返回总览 met raw
JSON: an outsider) — nothing stored, counted in ``/metrics`` like every refused request.
Dropping the cookie (the record page's 退出录谱账号) makes the phone an anonymous reader again;
the fence is about what the recorder's session does.
"""

from __future__ import annotations

import html
import logging
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from venue_station.auth import COOKIE, RECORDER, Session

__all__ = ["RecorderFence", "recorder_may"]

log = logging.getLogger(__name__)
_BOARD_ROUTES = (
    re.compile(r"^/api/records/(?P<board>[^/]+)(?:/moves|/undo)?$"),
    re.compile(r"^/record/(?!sheet$)(?P<board>[^/]+)$"),  # the chief's sheet is no board
)
# its own session, and the station's alarms (the banner every page polls: a record phone is
# told when the station cannot store what it sends; public, and only that)
_OPEN = (
    "/api/auth/session",
    "/api/auth/logout",
    "/api/auth/login",
    "/api/auth/record-key",
    "/api/station",
)


def recorder_may(session: Session, path: str) -> bool:
    """Whether a recorder's request for ``path`` passes the fence."""
    if path in _OPEN or path.startswith("/static/"):
        return True
    for pattern in _BOARD_ROUTES:
        match = pattern.match(path)
        if match is not None:
            return session.boards is None or match.group("board") in session.boards
    return False


class RecorderFence:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        app: Any = scope["app"]
        session = app.state.sessions.get(request.cookies.get(COOKIE))
        if session is None or session.role != RECORDER or recorder_may(session, scope["path"]):
            await self.app(scope, receive, send)
            return
        boards = ", ".join(session.boards) if session.boards is not None else "every board"
        message = f"the recorder {session.user!r} may only record ({boards})"
        app.state.station.metrics.bad_requests["recorder_only"] += 1
        log.warning("HTTP 403 %s %s: %s", request.method, scope["path"], message)
        if not scope["path"].startswith("/api/"):
            await HTMLResponse(_page(session), status_code=403)(scope, receive, send)
            return
        body = {"error": message, "code": "recorder_only", "args": {"boards": session.boards}}
        await JSONResponse(body, status_code=403)(scope, receive, send)


def _page(session: Session) -> str:
    boards = list(session.boards or [])
    links = "".join(
        f'<li><a href="/record/{html.escape(b)}">第{html.escape(b)}台录谱页 · '
        f"board {html.escape(b)}'s record</a></li>"
        for b in boards[:20]
    )
    return (
        '<!doctype html><html lang="zh-CN"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<title>棋钟 · 录谱账号</title><link rel="stylesheet" href="/static/style.css"></head>'
        '<body class="record"><main class="record-main">'
        "<p>此手机登录的是录谱账号，只能打开本台的录谱页。要看其他页面，请在录谱页按"
        "“退出录谱账号”。</p>"
        "<p lang=\"en\">This phone holds a recorder's login: it opens its boards' record pages "
        "only. To see other pages, tap “Leave the recorder's login” on the record page.</p>"
        f"<ul>{links}</ul></main></body></html>"
    )
