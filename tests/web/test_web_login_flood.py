"""Login limits (issue 12): per address and per account, 429 with Retry-After; password checks
off the event loop, so 32 clients sending wrong logins do not keep a flag alert from the arbiter.

Performed against a real station on a real Mosquitto, the flag published by a node's real
broker account; the flood comes from 32 clients on their own loopback addresses.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, FakeNode, station_config

from venue_station.domain.station import Station

pytestmark = [pytest.mark.broker]


def _client(station: Station, address: str, **kw: Any) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(base_url=station.http_url, transport=transport, timeout=30, **kw)


async def _station(
    tmp_path: Path, start_station: Callable[..., Any], broker: Any = None, **http: Any
) -> Station:
    config = station_config(tmp_path, broker, http=http)
    station: Station = await start_station(config, connect=broker is not None)
    return station


async def _try(client: httpx.AsyncClient, user: str, password: str) -> httpx.Response:
    return await client.post("/api/auth/login", json={"username": user, "password": password})


async def test_logins_are_limited_per_address(tmp_path: Path, start_station: Any) -> None:
    station = await _station(tmp_path, start_station, login_per_address=5, login_window_s=600)
    async with _client(station, "127.0.0.2") as eve, _client(station, "127.0.0.3") as arb:
        for i in range(5):  # five guesses at five different accounts
            assert (await _try(eve, f"user{i}", "guess")).status_code == 401
        r = await _try(eve, "user9", "guess")
        assert r.status_code == 429, r.text
        assert int(r.headers["Retry-After"]) >= 1
        assert "try again" in r.json()["error"]
        # even the right password waits: the limit is checked before any hashing
        assert (await _try(eve, ARBITER, ARBITER_PASSWORD)).status_code == 429
        # another address is not held back by eve's flood
        assert (await _try(arb, ARBITER, ARBITER_PASSWORD)).status_code == 200
    assert station.metrics.bad_requests["rate_limited"] == 2


async def test_failed_logins_are_limited_per_account(tmp_path: Path, start_station: Any) -> None:
    station = await _station(tmp_path, start_station, login_per_account=3, login_window_s=600)
    for i in range(3):  # three guesses at the arbiter's password, each from a new address
        async with _client(station, f"127.0.1.{i + 1}") as c:
            assert (await _try(c, ARBITER, f"guess{i}")).status_code == 401
    async with _client(station, "127.0.1.9") as c:
        r = await _try(c, ARBITER, "guess9")
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1, r.text
        # another account is not affected
        assert (await _try(c, "someone", "x")).status_code == 401


@contextlib.asynccontextmanager
async def _arbiter_stream(station: Station) -> AsyncIterator[asyncio.Queue[dict[str, Any]]]:
    """The arbiter's logged-in SSE stream; its alerts land in the queue."""
    alerts: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    async with _client(station, "127.0.0.9") as client:
        assert (await _try(client, ARBITER, ARBITER_PASSWORD)).status_code == 200
        async with client.stream("GET", "/api/stream") as response:

            async def read() -> None:
                kind = ""
                async for line in response.aiter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: ") and kind == "alert":
                        await alerts.put(json.loads(line[6:])["alert"])

            task = asyncio.create_task(read())
            try:
                await asyncio.sleep(0.2)
                yield alerts
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def _flood(station: Station, stop: asyncio.Event, counts: dict[int, int]) -> None:
    async def one(n: int) -> None:
        async with _client(station, f"127.0.2.{n + 1}") as c:
            while not stop.is_set():
                r = await _try(c, f"eve{n}", "wrong password")
                counts[r.status_code] = counts.get(r.status_code, 0) + 1

    await asyncio.gather(*(one(n) for n in range(32)))


@pytest.mark.slow
async def test_a_login_flood_does_not_keep_the_flag_alert_from_the_arbiter(
    tmp_path: Path, start_station: Any, broker_factory: Callable[..., Any]
) -> None:
    broker = broker_factory()
    # Limits high enough that every attempt is hashed: the worst case for the event loop.
    station = await _station(
        tmp_path, start_station, broker, login_per_address=100_000, login_per_account=100_000
    )
    async with FakeNode(broker, "node-a", ["1"]) as node, _arbiter_stream(station) as alerts:
        stop = asyncio.Event()
        counts: dict[int, int] = {}
        flood = asyncio.create_task(_flood(station, stop, counts))
        try:
            await asyncio.sleep(1.0)  # the flood is on
            t0 = time.monotonic()
            await node.publish_event(node.next_event("1", type="flag", data={"side": "red"}))
            alert = await asyncio.wait_for(alerts.get(), 10)  # a generous bound, not a timing
            took = time.monotonic() - t0
            async with httpx.AsyncClient(base_url=station.http_url, timeout=10) as c:
                health = await c.get("/healthz")
        finally:
            stop.set()
            await flood
    assert alert["kind"] == "flag" and alert["board"] == "1"
    assert health.status_code == 200 and health.json()["connected"] is True
    assert counts.get(401, 0) >= 10, counts  # the flood really was hashed...
    assert counts.get(503, 0) >= 1, counts  # ...and the hasher's queue was full: 503 at once
    assert not set(counts) - {401, 503}, counts  # refused, never a 500
    print(f"flag alert during the flood: {took * 1000:.0f} ms; answers {counts}")
