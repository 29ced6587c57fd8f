"""The hub's read-only federation page and API (Starlette): venues → boards → clocks, results.

Nothing here writes: no route takes a body, and the store is only read. Path ids are checked
against the wire's id pattern (400 otherwise), so a crafted address never reaches SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from federation_hub.store import HubStore
from wire_contract.messages import WireError, check_id

__all__ = ["build_app"]


def _venue(request: Request) -> str | Response:
    try:
        return check_id("venue", request.path_params["venue"])
    except WireError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)


def build_app(store: HubStore, counters: Callable[[], dict[str, Any]]) -> Starlette:
    page = files("federation_hub").joinpath("static/hub.html").read_text(encoding="utf-8")

    async def index(request: Request) -> Response:
        return HTMLResponse(page)

    async def venues(request: Request) -> Response:
        return JSONResponse(await store.venues())

    async def boards(request: Request) -> Response:
        venue = _venue(request)
        if isinstance(venue, Response):
            return venue
        rows = await store.boards_of(venue)
        return JSONResponse([{"board": r["board"], "state": r["body"]} for r in rows])

    async def results(request: Request) -> Response:
        venue = _venue(request)
        if isinstance(venue, Response):
            return venue
        return JSONResponse(await store.results(venue))

    async def gaps(request: Request) -> Response:
        return JSONResponse(await store.gaps())

    async def metrics(request: Request) -> Response:
        return JSONResponse(counters())

    return Starlette(
        routes=[
            Route("/", index),
            Route("/api/venues", venues),
            Route("/api/venues/{venue}/boards", boards),
            Route("/api/venues/{venue}/results", results),
            Route("/api/gaps", gaps),
            Route("/api/metrics", metrics),
        ]
    )
