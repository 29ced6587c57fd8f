"""300 slow-header connections (slowloris) against the station's and the hub's HTTP servers
(issue 27): each sends its request line and then one header byte at a time, never finishing
its head. Each is closed once the header timeout has passed; an honest client is served
meanwhile, and a kept-alive connection that asks in time goes on being served."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from support.station import station_config

from federation_hub.web import server_config
from venue_station.web.web_server import StationWithWeb

SLOW = 300
TIMEOUT_S = 3.0  # roomy: a loaded 2-core machine delays the loop by a second at times


async def slowloris(host: str, port: int, *, count: int, give_up_s: float) -> list[float]:
    """``count`` connections dripping a header; seconds until the server closed each one
    (``give_up_s`` for one still open then)."""
    opened, since = [], []
    for _ in range(count):
        opened.append(await asyncio.open_connection(host, port))
        since.append(time.monotonic())
        opened[-1][1].write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    start = time.monotonic()
    closed: dict[int, float] = {}

    async def watch(i: int, reader: asyncio.StreamReader) -> None:
        try:
            while await reader.read(1024):
                pass
        except ConnectionError:
            pass
        closed[i] = time.monotonic() - since[i]

    watchers = [asyncio.create_task(watch(i, r)) for i, (r, _) in enumerate(opened)]
    try:
        while len(closed) < count and time.monotonic() - start < give_up_s:
            for i, (_, writer) in enumerate(opened):
                if i not in closed and not writer.is_closing():
                    writer.write(b"a")  # a byte at a time: the head is never complete
            await asyncio.sleep(0.2)
    finally:
        for task in watchers:
            task.cancel()
        for _, writer in opened:
            writer.close()
    return [closed.get(i, give_up_s + start - since[i]) for i in range(count)]


async def honest_during(url: str) -> float:
    """The slowest of a few requests made while the attack is on (seconds)."""
    worst = 0.0
    async with httpx.AsyncClient(base_url=url, timeout=5) as client:
        # one kept-alive connection: its next request, asked in time, is served too
        for _ in range(5):
            t0 = time.monotonic()
            r = await client.get("/healthz")
            worst = max(worst, time.monotonic() - t0)
            assert r.status_code == 200
            await asyncio.sleep(0.5)
    return worst


def check_cut(times: list[float]) -> None:
    # none well before the deadline (the drip is not what closes them), all soon after it;
    # "since" is taken when the client's connect returns, which a loaded loop delays
    assert min(times) >= TIMEOUT_S - 1.0, min(times)
    assert max(times) <= TIMEOUT_S + 4.0, max(times)


async def test_the_station_closes_300_slow_header_connections(tmp_path: Path) -> None:
    config = station_config(tmp_path, http={"header_timeout_s": TIMEOUT_S})
    station = StationWithWeb(config, connect=False)
    await station.start()
    try:
        host, port = config.http.host, station.web.port
        assert port is not None
        attack = asyncio.create_task(slowloris(host, port, count=SLOW, give_up_s=TIMEOUT_S + 8))
        await asyncio.sleep(0.3)
        worst = await honest_during(station.http_url)
        check_cut(await attack)
        assert worst < 2.0, worst  # served meanwhile (a loaded machine adds its own wait)
    finally:
        await station.stop()


@asynccontextmanager
async def hub_web() -> AsyncIterator[str]:
    async def healthz(_: object) -> PlainTextResponse:
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/healthz", healthz)])
    server = uvicorn.Server(
        server_config(app, host="127.0.0.1", port=0, header_timeout_s=TIMEOUT_S)
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await asyncio.wait([task], timeout=5)


async def test_the_hubs_server_closes_300_slow_header_connections() -> None:
    async with hub_web() as url:
        port = int(url.rsplit(":", 1)[1])
        attack = asyncio.create_task(
            slowloris("127.0.0.1", port, count=SLOW, give_up_s=TIMEOUT_S + 8)
        )
        await asyncio.sleep(0.3)
        await honest_during(url)
        check_cut(await attack)
