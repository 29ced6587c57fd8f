"""A flooding board and a hall full of phones cannot hold the arbiter's alert back (issue 12,
docs/web.md "Live streams"): the arbiter's stream gets each message at once on its own path,
and the phones get one coalesced write a tick (the latest state per board, a board's events
up to a per-board rate), not every message of the flood.

A real station over real sockets: the arbiter logged in on ``/api/stream`` (httpx), 300 public
streams on raw sockets from their own loopback addresses, and one board's 3,000 events (the
flood gate lets its burst of 1,500 through) plus 200 states of another board fed to the ingest
at once, then a flag on a third board.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from pathlib import Path
from typing import Any

import httpx
from support.station import ARBITER, ARBITER_PASSWORD, envelope, station_config, wait_until

from venue_station.domain.station import Station
from venue_station.live.public_feed import EVENTS_PER_BOARD_PER_TICK

PHONES = 300
STREAM_REQUEST = b"GET /api/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"


def _state(board: str, seq: int) -> dict[str, Any]:
    return {
        "v": 1, "board": board, "node": "node-b", "session": 1, "seq": seq,
        "ts": time.time_ns() // 1_000_000, "game": None, "tc": None, "phase": "running",
        "running": "red", "red_ms": 600_000 - seq, "black_ms": 600_000, "flag": None,
        "moves": {"red": seq, "black": seq}, "fouls": {"red": 0, "black": 0},
    }  # fmt: skip


class Phone:
    """A public stream read to the end on a raw socket."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.writer: asyncio.StreamWriter | None = None

    async def open(self, port: int, address: str) -> bytes:
        reader, self.writer = await asyncio.open_connection(
            "127.0.0.1", port, local_addr=(address, 0)
        )
        self.writer.write(STREAM_REQUEST)
        await self.writer.drain()
        status = await asyncio.wait_for(reader.readline(), 30)
        self.task = asyncio.create_task(self._read(reader))
        return status

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while chunk := await reader.read(65536):
            self.data += chunk

    def messages(self) -> list[tuple[str, dict[str, Any]]]:
        out = []
        text = self.data.decode("utf-8", "replace")
        for block in text.split("\n\n"):
            lines = dict(
                ln.split(": ", 1) for ln in block.splitlines() if ln.startswith(("event", "data"))
            )
            if "event" in lines and "data" in lines:
                out.append((lines["event"], json.loads(lines["data"])))
        return out

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def _arbiter(base: str, alerts: dict[tuple[str, int], float], kinds: dict[str, int]) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=None) as http:
        r = await http.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        r.raise_for_status()
        async with http.stream("GET", "/api/stream") as response:
            kind = ""
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                    kinds[kind] = kinds.get(kind, 0) + 1
                elif line.startswith("data: ") and kind == "alert":
                    alert = json.loads(line[6:])["alert"]
                    alerts[(alert["kind"], alert["board"])] = time.monotonic()


async def test_a_flooding_board_and_many_phones_cannot_hold_back_the_arbiters_alert(
    tmp_path: Path, start_station: Any
) -> None:
    station: Station = await start_station(
        station_config(tmp_path, http={"sse_per_address": 100}), connect=False
    )
    assert station.ingest is not None and station.http_port is not None
    ingest = station.ingest
    alerts: dict[tuple[str, int], float] = {}
    kinds: dict[str, int] = {}
    arbiter = asyncio.create_task(_arbiter(station.http_url, alerts, kinds))
    phones = [Phone() for _ in range(PHONES)]
    try:
        for i, phone in enumerate(phones):
            assert b" 200 " in await phone.open(station.http_port, f"127.0.6.{i // 100 + 1}")
        await wait_until(lambda: len(station.hub) == PHONES + 1, timeout=20, what="all streams")

        flood = [envelope("99", s, node="node-f", game=None) for s in range(1, 3001)]
        for n, ev in enumerate(flood):
            ingest.handle("qz/v1/test/board/99/event", json.dumps(ev).encode())
            if n % 500 == 499:
                await asyncio.sleep(0)  # as the collector hands them over: a few at a time
        for s in range(1, 201):
            ingest.handle("qz/v1/test/board/7/state", json.dumps(_state("7", s)).encode())
        tick = station.hub.public.tick  # with the phones connected (300: 0.3 s)
        flagged = time.monotonic()
        flag = envelope("1", 1, type="flag", data={"side": "red"}, game="r1-b1")
        ingest.handle("qz/v1/test/board/1/event", json.dumps(flag).encode())

        # The alert reaches the arbiter's stream (a generous bound: this is no benchmark).
        await wait_until(lambda: ("flag", "1") in alerts, timeout=10, what="the flag alert")
        assert alerts[("flag", "1")] - flagged < 10
        await ingest.flush()
        # The arbiter is private: it gets every event the gate let through (a burst, then the
        # flood alert) — and nothing the gate dropped.
        await wait_until(lambda: kinds.get("event", 0) >= 1500, timeout=20, what="the burst")
        await asyncio.sleep(3 * station.hub.public.tick)  # the phones' last tick goes out
    finally:
        arbiter.cancel()
        await asyncio.gather(arbiter, return_exceptions=True)
        for phone in phones:
            await phone.close()

    feed = station.hub.public
    assert station.metrics.bad_payloads["flood"] > 0  # the gate throttled past its burst
    for phone in phones[:: PHONES // 10]:
        got = phone.messages()
        assert got and got[0][0] == "hello"
        assert not any(kind == "alert" for kind, _ in got)  # arbiter-only, as before
        flood_events = [d for k, d in got if k == "event" and d["board"] == "99"]
        states = [d["state"]["seq"] for k, d in got if k == "state" and d["board"] == "7"]
        # Not the whole burst: a board's events go out at a clock's pace at most.
        # (8 per quarter second, scaled with the tick)
        per_tick = math.ceil(EVENTS_PER_BOARD_PER_TICK * tick / feed.tick_s)
        assert 0 < len(flood_events) <= per_tick * feed.chunks_sent
        assert len(flood_events) < 1500
        # The latest state of each board, superseded ones dropped; the last is the newest.
        assert states and states[-1] == 200 and len(states) <= feed.chunks_sent
    assert feed.left_off > 0 and feed.superseded > 0
