"""The station's web, started beside its domain: ``WebServer`` builds the Starlette app over a
``Station`` (``api.build_app``) and serves it with uvicorn on ``[http]``'s address, with TLS
when configured.

    station = Station(config)
    web = WebServer(station, on_failure=station.request_stop)
    await station.open(); await web.start(); ...
    web.begin_stop(); await station.stop_work(); await web.stop(); await station.close_store()

``StationWithWeb`` is both in one call, for the CLI, the benchmarks and tests: a ``Station``
(so all of the domain is at hand) whose start and stop also start and stop its ``web`` at the
right moments. The domain (``station.py`` and what it imports) imports nothing of this
(tests/system/test_station_layers.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette

from venue_station.config import StationConfig
from venue_station.domain.station import Station
from venue_station.errors import ConfigError, StationError
from venue_station.web.api import build_app
from venue_station.web.session_keep import SessionKeeper
from wire_contract.http_guard import header_deadline_protocol

__all__ = ["StationWithWeb", "WebServer"]

log = logging.getLogger(__name__)
STOP_S = 1.5  # at most this long in ``stop`` (the old bound): the station stops within ~5 s
DRAIN_S = 1.0  # of which waiting for the server to finish; then it is cancelled


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the CLI owns the signals, not the library


async def _serve(server: _Server) -> None:
    try:
        await server.serve()
    except SystemExit as exc:  # uvicorn exits the process when it cannot bind; we are a library
        raise StationError(f"the HTTP server exited (status {exc.code})") from None


class WebServer:
    """The HTTP API, pages and SSE of one station. ``on_failure`` is called when the server
    stops by itself (the CLI stops the station then: a station nobody can reach is down)."""

    def __init__(self, station: Station, *, on_failure: Callable[[], None] | None = None) -> None:
        self.station = station
        self.app: Starlette = build_app(station)
        self.keeper = SessionKeeper(self.app.state.sessions, lambda: station.store)
        self.port: int | None = None
        self._on_failure = on_failure
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def url(self) -> str:
        scheme = "https" if self.station.config.http.tls else "http"
        return f"{scheme}://{self.station.config.http.host}:{self.port}"

    async def start(self) -> None:
        http = self.station.config.http
        await self.keeper.restore()  # logged in before a restart: still logged in
        tls: dict[str, Any] = {}
        if http.tls_cert is not None and http.tls_key is not None:
            for key, path in (("tls_cert", http.tls_cert), ("tls_key", http.tls_key)):
                if not path.is_file():
                    raise ConfigError("station config", f"http.{key}", f"{path}: no such file")
            tls = {"ssl_certfile": str(http.tls_cert), "ssl_keyfile": str(http.tls_key)}
        cfg = uvicorn.Config(
            self.app,
            host=http.host,
            port=http.port,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=1,
            access_log=False,
            # Each SSE stream and keep-alive connection is a socket: the hub caps the streams;
            # uvicorn's own cap keeps the total (streams + API) under the unit's LimitNOFILE.
            limit_concurrency=http.sse_max + 1000,
            http=header_deadline_protocol(http.header_timeout_s),
            **tls,
        )
        self._server = server = _Server(cfg)
        self._task = task = asyncio.create_task(_serve(server), name="station-http")
        task.add_done_callback(self._done)
        while not server.started:
            if task.done():
                self._stopping = True
                cause = None if task.cancelled() else task.exception()
                raise StationError(
                    f"the HTTP server did not start on {http.host}:{http.port}"
                ) from cause
            await asyncio.sleep(0.01)
        self.port = server.servers[0].sockets[0].getsockname()[1]
        log.info("station %s: web on %s", self.station.config.venue, self.url)

    def _done(self, task: asyncio.Task[None]) -> None:
        exc = None if task.cancelled() else task.exception()  # retrieved in every case
        if task.cancelled() or self._stopping or self.port is None:
            return  # stopped on purpose, or failing to start: ``start`` raises that
        log.error("the HTTP server stopped by itself: %r", exc, exc_info=exc)
        if self._on_failure is not None:
            self._on_failure()

    def begin_stop(self) -> None:
        """Take no new connections and end the streams; the server drains meanwhile."""
        self._stopping = True
        if self._server is not None:
            self._server.should_exit = True
        self.station.hub.close()  # ends the SSE streams, so the server can drain

    async def stop(self) -> None:
        """Stop serving within ~1.5 s of ``begin_stop``: what is still open is cancelled."""
        self.begin_stop()
        await self.keeper.close()
        task = self._task
        if task is not None and not task.done():
            # It has drained since begin_stop (uvicorn's own grace is 1 s); the rest is cut.
            await asyncio.wait([task], timeout=DRAIN_S)
            task.cancel()
            await asyncio.wait([task], timeout=STOP_S - DRAIN_S)
        self.app.state.login_guard.close()  # its hashing threads


class StationWithWeb(Station):
    """A ``Station`` and its ``WebServer`` (``web``) in one call: started together, the web
    before the wait for the broker (``/healthz`` answers meanwhile), and stopped web first."""

    def __init__(
        self, config: StationConfig, *, connect: bool = True, serve_http: bool = True
    ) -> None:
        super().__init__(config, connect=connect)
        self.web = WebServer(self, on_failure=self.request_stop) if serve_http else None

    async def start(self, *, timeout: float = 15.0) -> None:
        await self.open()
        if self.web is not None:
            try:
                await self.web.start()
            except BaseException:
                await super().stop(clean=False)  # the domain alone: the web never started
                raise
        await self.wait_connected(timeout)
        log.info(  # the line operators (and tests/station/test_attack_writer.py) read
            "station %s up: session %d, db %s, http port %s",
            self.config.venue,
            self.session,
            self.store.dialect if self.store is not None else "not open yet",
            None if self.web is None else self.web.port,
        )

    async def stop(self, *, clean: bool = True) -> None:
        """The web drains while the domain stores what it received; the web is gone before
        the store closes (a request in flight never meets a closed store). Within ~5 s."""
        if self.web is not None:
            self.web.begin_stop()
        await self.stop_work(clean=clean)
        if self.web is not None:
            await self.web.stop()
        await self.close_store()

    @property
    def app(self) -> Starlette:
        return self._web().app

    @property
    def http_port(self) -> int | None:
        return self._web().port

    @property
    def http_url(self) -> str:
        return self._web().url

    def _web(self) -> WebServer:
        if self.web is None:
            raise StationError("this station serves no HTTP (serve_http=False)")
        return self.web
