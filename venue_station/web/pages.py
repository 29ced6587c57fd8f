"""The station's web pages: the live display (``/``), a board's detail (``/board/{id}``) and the
arbiter's station (``/arbiter``), served as plain files from ``venue_station/web/static``
(no build).

The pages are static HTML with their script in ``/static``; everything live comes from the API
(``/api/stream`` and the read routes), every action goes through the API's session + CSRF
checks. The pages themselves carry no secret and no state, so serving them needs no login; the
Content-Security-Policy allows scripts and connections to this origin only, which keeps an
injected board or player name from ever running as script.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from venue_station.resources import static_dir

__all__ = ["SECURITY_HEADERS", "STATIC_DIR", "pages_routes", "routes"]

# The installed package's folder (importlib.resources); a clear ResourceError if it is missing.
STATIC_DIR = static_dir()
_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; font-src 'self'; media-src 'self'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def _page(name: str) -> Response:
    # no-cache: a hall screen left on all weekend picks up a new station version at reload
    headers = {**SECURITY_HEADERS, "Cache-Control": "no-cache"}
    return FileResponse(STATIC_DIR / name, media_type="text/html; charset=utf-8", headers=headers)


async def display(request: Request) -> Response:
    return _page("display.html")


async def board(request: Request) -> Response:
    if not _ID.match(request.path_params["board"]):
        return PlainTextResponse("not a board id", status_code=404, headers=SECURITY_HEADERS)
    return _page("board.html")


async def arbiter(request: Request) -> Response:
    return _page("arbiter.html")


async def record(request: Request) -> Response:
    """The record page (录谱, issue 29): a board to tap, a field to type, the moves."""
    if not _ID.match(request.path_params["board"]):
        return PlainTextResponse("not a board id", status_code=404, headers=SECURITY_HEADERS)
    return _page("record.html")


async def record_sheet(request: Request) -> Response:
    """The chief's printable QR sheet (录谱): a QR code per board that must be recorded."""
    return _page("sheet.html")


async def round_sheet(request: Request) -> Response:
    """The round's sheet for the wall (对阵表 and its results), printable: public."""
    return _page("sheet_round.html")


class _Static(StaticFiles):
    """StaticFiles with the pages' security headers and revalidation on every load."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                for key, value in {**SECURITY_HEADERS, "Cache-Control": "no-cache"}.items():
                    headers.append((key.lower().encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await super().__call__(scope, receive, send_with_headers)


def pages_routes() -> list[BaseRoute]:
    """The page routes and ``/static``; the API's ``build_app`` mounts them (see ``routes``)."""
    return [
        Route("/", display, methods=["GET", "HEAD"]),
        Route("/board/{board}", board, methods=["GET", "HEAD"]),
        Route("/arbiter", arbiter, methods=["GET", "HEAD"]),
        Route("/record/sheet", record_sheet, methods=["GET", "HEAD"]),  # before /record/{board}
        Route("/record/{board}", record, methods=["GET", "HEAD"]),
        Route("/round-sheet", round_sheet, methods=["GET", "HEAD"]),
        Mount("/static", app=_Static(directory=STATIC_DIR), name="static"),
    ]


def routes(station: Any = None) -> list[BaseRoute]:
    """The hook ``venue_station.web.api.build_app`` looks for; the pages need nothing of the
    station."""
    return pages_routes()
