"""Attacks on the web port with only what a phone in the hall has (issue 12), each performed
against a real station over a real socket: malformed paths, a 300 MB body, formula cells in
exports, control characters in names, a 200 KB foul reason."""

from __future__ import annotations

import asyncio
import csv
import io
import resource
import select
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from support.station import ARBITER, ARBITER_PASSWORD, envelope, station_config

from venue_station.domain.station import Station
from venue_station.web.web_server import StationWithWeb

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Station]:
    s = StationWithWeb(station_config(tmp_path), connect=False)
    await s.start()
    try:
        yield s
    finally:
        await s.stop()


async def _login(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


MALFORMED = [
    "/api/export/rounds/99999999999999999999999/results.csv",
    "/api/export/rounds/%C2%B2/results.csv",
    "/api/export/rounds/%C2%B2/results.json",
    "/api/export/rounds/-1/results.csv",
    "/api/export/rounds/1%00/results.csv",
    "/api/games?round=%C2%B2",
    "/api/games?round=99999999999999999999999",
    "/api/events?after=99999999999999999999999",
    "/api/events?limit=%EF%BC%91",  # a full-width 1
    "/api/standings?round=%C2%B2",
    "/api/export/standings.csv?round=99999999999999999999999",
]


@pytest.mark.parametrize("path", MALFORMED)
async def test_a_malformed_path_or_parameter_is_a_400(station: Station, path: str) -> None:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.get(path)
        assert r.status_code == 400, (path, r.status_code, r.text)
        assert r.json()["error"]
        # the same as the chief, on the action routes that take a number in the path
        csrf = await _login(client)
        r = await client.post("/api/rounds/99999999999999999999999/set_games", headers=csrf)
        assert r.status_code == 400, r.text
        r = await client.post("/api/alerts/%C2%B2", json={"action": "ack"}, headers=csrf)
        assert r.status_code == 400, r.text
    assert (await _healthz(station)) == 200


async def _healthz(station: Station) -> int:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        return (await client.get("/healthz")).status_code


def _send_huge_chunked(port: int, path: str, total: int) -> tuple[bytes, int]:
    """POST ``total`` bytes chunked, 1 MiB at a time, stopping as soon as the station answers
    (or drops the connection); the answer and how many bytes were sent."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sent = 0
    answer = b""
    try:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n".encode()
        )
        chunk = b"100000\r\n" + b"[" * 0x100000 + b"\r\n"
        while sent < total:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            try:
                sock.sendall(chunk)
            except OSError:
                break
            sent += 0x100000
        sock.settimeout(10)
        try:
            while b"\r\n\r\n" not in answer:
                more = sock.recv(65536)
                if not more:
                    break
                answer += more
        except OSError:
            pass
    finally:
        sock.close()
    return answer, sent


def _declared_only(port: int, length: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            f"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n".encode()
        )
        return sock.recv(65536)


async def test_a_300_mb_anonymous_body_is_refused_while_streaming(station: Station) -> None:
    """Not read whole: the station answers 413 after the first MiB or so, and its peak memory
    does not grow by anything like the body's size."""
    assert station.http_port is not None
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    answer, sent = await asyncio.to_thread(
        _send_huge_chunked, station.http_port, "/api/auth/login", 300 * 1024 * 1024
    )
    peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < 64 * 1024 * 1024, sent  # refused long before the end
    assert peak_after - peak_before < 64 * 1024, (peak_before, peak_after)
    # declared too large: refused before a byte of it is read
    answer = await asyncio.to_thread(_declared_only, station.http_port, 300 * 1024 * 1024)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        csrf = await _login(client)
        big = b"round,board,red,black\n" + b"1,1,a,b\n" * (9 * 1024 * 1024 // 8)
        r = await client.post("/api/pairings?send=0", content=big, headers=csrf)
        assert r.status_code == 413 and "at most" in r.json()["error"]
    assert (await _healthz(station)) == 200


FORMULAS = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)"]


async def test_exports_neutralise_formula_cells(station: Station) -> None:
    assert station.ingest is not None
    rows = "".join(
        f'1,{b},"{red.replace(chr(34), chr(34) * 2)}",B{b}\n' for b, red in enumerate(FORMULAS, 1)
    )
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        csrf = await _login(client)
        r = await client.post(
            "/api/pairings?send=0",
            content=("round,board,red,black\n" + rows).encode(),
            headers=csrf,
        )
        assert r.status_code == 200, r.text
        ev = envelope(
            "1", 1, game="r1-b1", type="move", data={"side": "red", "used_ms": 5, "move": 1}
        )
        import json

        station.ingest.handle("qz/v1/test/board/1/event", json.dumps(ev).encode())
        await station.ingest.flush()
        for path in (
            "/api/export/rounds/1/results.csv",
            "/api/export/standings.csv",
        ):
            text = (await client.get(path)).text
            cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
            for name in FORMULAS:
                assert name not in cells, (path, name)
                assert "'" + name in cells, (path, name)
            assert not [c for c in cells if c[:1] in ("=", "+", "@")], (path, cells)
        # JSON keeps the names as they are: no spreadsheet reads it
        body = (await client.get("/api/export/rounds/1/results.json")).json()
        assert {g["red"] for g in body["games"]} == set(FORMULAS)


CONTROL_NAMES = [
    ("王天一\x1b[31m", "U+001B"),
    ("郑\x00惟桐", "U+0000"),
    ("\u202egnp.exe", "U+202E"),  # a right-to-left override
    ("许银\u200b川", "U+200B"),  # a zero-width space
    ("吕\x7f钦", "U+007F"),
]


@pytest.mark.parametrize(("name", "code"), CONTROL_NAMES)
async def test_names_with_control_characters_are_refused_at_import(
    station: Station, name: str, code: str
) -> None:
    assert station.store is not None
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        csrf = await _login(client)
        text = f"round,board,red,black\n1,1,甲,乙\n1,2,丙,{name}\n"
        r = await client.post("/api/pairings?send=0", content=text.encode(), headers=csrf)
        assert r.status_code == 400, r.text
        body = r.json()
        assert body["where"] == "line 3", body
        assert "column 4 (black)" in body["error"] and code in body["error"], body
        r = await client.post("/api/players", content=f"name\n{name}\n".encode(), headers=csrf)
        assert r.status_code == 400 and r.json()["where"] == "line 2", r.text
    assert await station.store.pairings() == []


async def test_a_200_kb_foul_reason_is_refused_and_never_streamed(station: Station) -> None:
    reason = "犯规" * 100_000  # 200,000 characters, ~600 KB of UTF-8
    async with httpx.AsyncClient(base_url=station.http_url, timeout=10) as client:
        csrf = await _login(client)
        async with client.stream("GET", "/api/stream") as stream:
            body = {"cmd": "foul", "args": {"side": "red", "reason": reason}}
            r = await client.post("/api/boards/1/cmd", json=body, headers=csrf)
            assert r.status_code == 413, r.text
            # under the body limit but over the text bound: 400 naming the field
            body["args"]["reason"] = "x" * 1000
            r = await client.post("/api/boards/1/cmd", json=body, headers=csrf)
            assert r.status_code == 400 and r.json()["where"] == "body.args.reason", r.text
            body["args"]["reason"] = "pause\x1b[2J"
            r = await client.post("/api/boards/1/cmd", json=body, headers=csrf)
            assert r.status_code == 400 and "control character" in r.json()["error"], r.text
            seen = b""

            async def read() -> None:
                nonlocal seen
                async for chunk in stream.aiter_bytes():
                    seen += chunk

            reader = asyncio.create_task(read())
            await asyncio.sleep(0.5)
            reader.cancel()
        assert b"xxxxxxxxxx" not in seen and "犯规犯规".encode() not in seen
