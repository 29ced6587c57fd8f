"""The hub's read-only federation page and API (Starlette): venues → boards → clocks, results,
standings; and the public live-clock page (``/live``), whose browsers read the centre's NATS
WebSocket listener themselves (docs/federation.md "Live clocks for the public").

Nothing here writes: no route takes a body, and the store is only read. Path ids are checked
against the wire's id pattern (400 otherwise), so a crafted address never reaches SQL. The
pages carry the station's security headers (a CSP without inline script); the live page's CSP
may connect to the one configured WebSocket URL besides the hub itself.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from federation_hub.errors import HubConfigError
from federation_hub.standings import StandingsError, VenueProfiles, venue_standings
from federation_hub.store import HubStore
from wire_contract.http_guard import HEADER_TIMEOUT_S, header_deadline_protocol
from wire_contract.messages import WireError, check_id
from wire_contract.wallclock import wall_ms

__all__ = ["LiveConfig", "build_app", "security_headers", "server_config"]

MAX_LIVE_BOARDS = 10_000  # the highest --live-max-boards: a page drawing more would crawl
_WS_URL = re.compile(r"^wss?://[A-Za-z0-9.\-\[\]:]+(/[A-Za-z0-9._~/\-]*)?$")
_ROUND = re.compile(r"^[0-9]{1,3}$")
LIVE_STATES_MS = 12 * 3600 * 1000  # /api/live/states: the boards heard of today, not last month's

_STATIC = {
    "hub.js": "text/javascript",
    "live.js": "text/javascript",
    "words.js": "text/javascript",
    "live.css": "text/css",
}


@dataclass(frozen=True)
class LiveConfig:
    """What the public page needs: the NATS WebSocket URL (None: not offered), the venues'
    subject prefix, and how many boards one page keeps (past it, new boards are ignored)."""

    ws_url: str | None = None
    prefix: str = "fed"
    max_boards: int = 1000

    def __post_init__(self) -> None:
        if self.ws_url is not None and not _WS_URL.match(self.ws_url):
            raise HubConfigError(f"--public-ws {self.ws_url!r}: expected ws://host:port[/path]")
        if not 1 <= self.max_boards <= MAX_LIVE_BOARDS:
            raise HubConfigError(f"--live-max-boards {self.max_boards}: 1..{MAX_LIVE_BOARDS}")


def security_headers(connect: str | None = None) -> dict[str, str]:
    """The venue station's page headers (venue_station/web/pages.py), ``connect`` added to
    ``connect-src`` (the live page's WebSocket)."""
    extra = f" {connect}" if connect else ""
    return {
        "Content-Security-Policy": (
            "default-src 'none'; script-src 'self'; style-src 'self'; "
            f"connect-src 'self'{extra}; img-src 'self' data:; base-uri 'none'; "
            "form-action 'self'; frame-ancestors 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-cache",
    }


def _text(name: str) -> str:
    return files("federation_hub").joinpath(f"static/{name}").read_text(encoding="utf-8")


def _error(message: str) -> Response:
    return JSONResponse({"error": message}, status_code=400)


def _venue(request: Request) -> str | Response:
    try:
        return check_id("venue", request.path_params["venue"])
    except WireError as exc:
        return _error(str(exc))


class _Recent:
    """Each venue's standings answer kept ``ttl_s``: one costs 0.15–0.35 s for a 360-game event
    (docs/benchmarks.md, hub_standings), and every open federation page asks every 2 s. At most
    ``MAX_CACHED`` answers are kept; past it the oldest is dropped."""

    MAX_CACHED = 256

    def __init__(self, ttl_s: float, clock: Callable[[], float]) -> None:
        self.ttl_s, self.clock = ttl_s, clock
        self._kept: dict[tuple[str, int | None], tuple[float, dict[str, Any]]] = {}

    def get(self, key: tuple[str, int | None]) -> dict[str, Any] | None:
        hit = self._kept.get(key)
        return hit[1] if hit is not None and self.clock() - hit[0] < self.ttl_s else None

    def put(self, key: tuple[str, int | None], value: dict[str, Any]) -> None:
        self._kept.pop(key, None)
        if len(self._kept) >= self.MAX_CACHED:
            del self._kept[next(iter(self._kept))]
        self._kept[key] = (self.clock(), value)


def build_app(
    store: HubStore,
    counters: Callable[[], dict[str, Any]],
    *,
    profiles: VenueProfiles | None = None,
    live: LiveConfig = LiveConfig(),
    records: Callable[[], list[dict[str, Any]]] = list,
    names: Mapping[str, str] | None = None,
    standings_ttl_s: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
) -> Starlette:
    profiles = profiles or VenueProfiles.load("meishan-2016", {})
    recent = _Recent(standings_ttl_s, clock)
    pages = {name: _text(name) for name in ("hub.html", "live.html")}
    statics = {name: _text(name) for name in _STATIC}
    plain = security_headers()
    live_headers = security_headers(live.ws_url)

    async def index(request: Request) -> Response:
        return HTMLResponse(pages["hub.html"], headers=plain)

    async def live_page(request: Request) -> Response:
        return HTMLResponse(pages["live.html"], headers=live_headers)

    async def game_page(request: Request) -> Response:
        # One board's game for spectators (issue 29): the live page, told which board to show.
        try:
            venue = check_id("venue", request.path_params["venue"])
            board = check_id("board", request.path_params["board"])
        except WireError as exc:
            return Response(str(exc), status_code=400, headers=plain)
        html = (
            pages["live.html"]
            .replace('href="static/', 'href="../../static/')
            .replace('src="static/', 'src="../../static/')
            .replace('<body class="live">', f'<body class="live one" data-venue="{venue}" '
                     f'data-board="{board}" data-base="../../">')
        )  # fmt: skip
        return HTMLResponse(html, headers=live_headers)

    async def live_records(request: Request) -> Response:
        return JSONResponse(records())

    kept_states: dict[str, Any] = {"at": -1.0, "body": b"[]"}

    async def live_states(request: Request) -> Response:
        # Each page load and each reconnect asks: one read a second serves them all.
        if clock() - kept_states["at"] >= 1.0:
            since = wall_ms() - LIVE_STATES_MS
            rows = await store.live_states(live.max_boards, since_ms=since)
            kept_states["body"] = JSONResponse(
                [{"venue": r["venue"], "board": r["board"], "state": r["body"]} for r in rows]
            ).body
            kept_states["at"] = clock()
        return Response(kept_states["body"], media_type="application/json", headers=plain)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in statics:
            return Response("not found", status_code=404, headers=plain)
        return Response(statics[name], media_type=_STATIC[name], headers=plain)

    async def live_config(request: Request) -> Response:
        # ``now``: the page's clock reference. The snapshots are stamped in the venues' wall ms,
        # and a viewer's own clock may be off by minutes: the page corrects by the hub's.
        return JSONResponse(
            {"ws": live.ws_url, "prefix": live.prefix.replace("/", "."),
             "max_boards": live.max_boards, "now": wall_ms(), "names": named}
        )  # fmt: skip

    named = dict(names or {})  # what the public pages call a venue (its id when unnamed)

    async def venues(request: Request) -> Response:
        return JSONResponse([{**v, "name": named.get(v["venue"])} for v in await store.venues()])

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

    async def standings(request: Request) -> Response:
        venue = _venue(request)
        if isinstance(venue, Response):
            return venue
        rounds = profiles.of(venue).tournament.rounds
        text = request.query_params.get("round")
        after = None
        if text is not None:
            if not _ROUND.match(text) or not 0 <= int(text) <= rounds:
                return _error(f"round {text!r}: an integer 0..{rounds} (the venue's regulation)")
            after = int(text)
        answer = recent.get((venue, after))
        if answer is None:
            try:
                answer = await venue_standings(store, venue, profiles, after_round=after)
            except StandingsError as exc:  # the games were checked; only a round is refused
                return _error(f"cannot compute the standings: {exc}")
            recent.put((venue, after), answer)
        return JSONResponse(answer)

    async def gaps(request: Request) -> Response:
        return JSONResponse(await store.gaps())

    async def metrics(request: Request) -> Response:
        return JSONResponse(counters())

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/live", live_page),
            Route("/static/{name}", static),
            Route("/live/{venue}/{board}", game_page),
            Route("/api/live", live_config),
            Route("/api/live/records", live_records),
            Route("/api/live/states", live_states),
            Route("/api/venues", venues),
            Route("/api/venues/{venue}/boards", boards),
            Route("/api/venues/{venue}/results", results),
            Route("/api/venues/{venue}/standings", standings),
            Route("/api/gaps", gaps),
            Route("/api/metrics", metrics),
        ]
    )
    app.state.recent = recent  # the standings cache, for its bound's test
    return app


def server_config(
    app: Starlette, *, host: str, port: int, header_timeout_s: float = HEADER_TIMEOUT_S
) -> uvicorn.Config:
    """The hub's HTTP server: a request head is due within ``header_timeout_s`` of the
    connection (or of the last response), else it is closed (wire_contract/http_guard.py);
    an idle kept-alive connection goes after uvicorn's 5 s."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        http=header_deadline_protocol(header_timeout_s),
    )
