"""Live streams on the web port (issue 12): capped per address and in all (503 beyond), and
~1,500 idle streams do not keep /healthz, login or the API from answering.

Performed against a real station over real sockets; the clients use their own loopback
addresses (127.0.x.y) so the per-address and the total caps are each tried alone.
"""

from __future__ import annotations

import asyncio
import resource
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, station_config

from venue_station.domain.station import Station

STREAM_REQUEST = b"GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"


async def _open_stream(port: int, address: str) -> tuple[asyncio.StreamWriter, bytes]:
    """An idle SSE stream from ``address``: the writer (keep it open) and the status line."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
    writer.write(STREAM_REQUEST)
    await writer.drain()
    status = await asyncio.wait_for(reader.readline(), 30)
    return writer, status


async def _close(writers: list[asyncio.StreamWriter]) -> None:
    for w in writers:
        w.close()
    await asyncio.gather(*(w.wait_closed() for w in writers), return_exceptions=True)


async def test_streams_are_capped_per_address_and_in_all(
    tmp_path: Path, start_station: object
) -> None:
    config = station_config(tmp_path, http={"sse_per_address": 3, "sse_max": 5})
    station: Station = await start_station(config, connect=False)  # type: ignore[operator]
    assert station.http_port is not None
    port = station.http_port
    writers: list[asyncio.StreamWriter] = []
    try:
        for _ in range(3):
            w, status = await _open_stream(port, "127.0.3.1")
            writers.append(w)
            assert b" 200 " in status, status
        w, status = await _open_stream(port, "127.0.3.1")  # a 4th from the same address
        writers.append(w)
        assert b" 503 " in status, status
        for _ in range(2):  # 2 more from another address: 5 in all
            w, status = await _open_stream(port, "127.0.3.2")
            writers.append(w)
            assert b" 200 " in status, status
        w, status = await _open_stream(port, "127.0.3.3")  # a 6th in all
        writers.append(w)
        assert b" 503 " in status, status
        assert len(station.hub) == 5
        async with httpx.AsyncClient(base_url=station.http_url) as client:
            r = await client.get("/api/stream")
            assert r.status_code == 503 and r.json()["error"], r.text
            assert "Retry-After" in r.headers
    finally:
        await _close(writers)
    for _ in range(100):  # a closed stream frees its place
        if len(station.hub) == 0:
            break
        await asyncio.sleep(0.05)
    assert len(station.hub) == 0
    w, status = await _open_stream(port, "127.0.3.1")
    await _close([w])
    assert b" 200 " in status


@pytest.fixture
def more_open_files() -> AsyncIterator[None]:
    """Client and station share this process: 1,500 streams are 3,000 descriptors here."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 8192)
    if want < 4000:
        pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is too low for 1,500 streams")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    try:
        yield None  # type: ignore[misc]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.slow
async def test_1500_idle_streams_do_not_stop_healthz_login_or_the_api(
    tmp_path: Path, start_station: object, more_open_files: None
) -> None:
    config = station_config(tmp_path, http={"sse_per_address": 100})
    station: Station = await start_station(config, connect=False)  # type: ignore[operator]
    assert station.http_port is not None
    writers: list[asyncio.StreamWriter] = []
    try:
        for batch in range(15):  # 15 addresses x 100 streams
            opened = await asyncio.gather(
                *(_open_stream(station.http_port, f"127.0.4.{batch + 1}") for _ in range(100))
            )
            writers += [w for w, _ in opened]
            assert all(b" 200 " in status for _, status in opened)
        assert len(station.hub) == 1500
        async with httpx.AsyncClient(base_url=station.http_url, timeout=20) as client:
            assert (await client.get("/healthz")).status_code == 200
            login = {"username": ARBITER, "password": ARBITER_PASSWORD}
            assert (await client.post("/api/auth/login", json=login)).status_code == 200
            assert (await client.get("/api/boards")).status_code == 200
            assert (await client.get("/api/alerts")).status_code == 200
            # a live message still fans out to every one of them
            station.hub.publish("ping", {})
            assert (await client.get("/healthz")).status_code == 200
    finally:
        await _close(writers)


def test_the_station_unit_allows_more_open_files_than_the_streams_cap() -> None:
    """The default 1,024 open files ran out at ~1,000 idle phones; the unit raises it well above
    the station's default stream cap, with room for the API, the broker and the database."""
    from venue_station.config import HttpConfig

    unit = Path(__file__).resolve().parents[2] / "deploy/systemd/qizhong-station.service"
    lines = [
        ln.split("=", 1)[1] for ln in unit.read_text().splitlines() if ln.startswith("LimitNOFILE=")
    ]
    assert lines, "no LimitNOFILE= in the station unit"
    assert int(lines[-1]) >= 2 * HttpConfig().sse_max


async def test_the_arbiters_streams_are_served_before_the_halls() -> None:
    """With a hall full of phones subscribed first, the arbiter's stream still wakes first."""
    from venue_station.live.fanout import EventFanout

    hub = EventFanout()
    order: list[str] = []
    phones = [hub.subscribe(private=False, address=f"10.0.0.{i}") for i in range(50)]
    arbiter = hub.subscribe(private=True, address="10.0.1.1")

    async def take(queue: asyncio.Queue[str | None], name: str) -> None:
        await queue.get()
        order.append(name)

    tasks = [asyncio.create_task(take(q, "phone")) for q in phones]
    tasks.append(asyncio.create_task(take(arbiter, "arbiter")))
    await asyncio.sleep(0)  # every one waiting on its queue
    hub.publish("ping", {})
    await asyncio.gather(*tasks)
    assert order[0] == "arbiter" and len(order) == 51
