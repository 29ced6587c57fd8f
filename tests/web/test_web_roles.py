"""Roles on the web port (issue 12): a viewer reads, an arbiter rules and commands a board, a
chief also imports, sends rounds, commands the venue and runs the knockout, an admin also sees
the accounts; arbiter-only data (alerts, pending fouls and forfeits, metrics) is behind login.

Performed against a real station over a real socket: every action route is tried with an
account of every role; a role below the route's gets 403 and nothing changes.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from starlette.routing import Route
from support.station import envelope, station_config

from venue_station.auth import hash_password
from venue_station.domain.station import Station
from venue_station.web.web_server import StationWithWeb

pytestmark = pytest.mark.asyncio(loop_scope="session")

PASSWORD = "棋钟-role-test"
_HASH = hash_password(PASSWORD)
ROLES = ("viewer", "arbiter", "chief", "admin")

# Every state-changing route, the role it needs and a body that would be valid if allowed.
ACTIONS: dict[str, tuple[str, Any]] = {
    "/api/boards/1/cmd": ("arbiter", {"cmd": "pause"}),
    "/api/alerts/1": ("arbiter", {"action": "ack"}),
    "/api/venue/cmd": ("chief", {"cmd": "pause"}),
    "/api/pairings?send=0": ("chief", "round,board,red,black\n1,1,甲,乙\n"),
    "/api/players": ("chief", "name\n甲\n乙\n"),
    "/api/rounds/1/set_games": ("chief", {}),
    "/api/trf?send=0": ("chief", "012 test\n"),
    "/api/pairs?send=0&round=1": ("chief", "1 2\n"),
    "/api/pairing/propose": ("chief", {}),
    "/api/pairing/approve?send=0": ("chief", {}),
    "/api/pairing/discard": ("chief", {}),
    "/api/knockout/start": ("chief", {}),
    "/api/knockout/games/ko-sf1/confirm": ("chief", {}),
    "/api/knockout/games/ko-sf1/result": ("chief", {"result": "red"}),
    "/api/knockout/choices/ko-sf1": ("chief", {"side": "red"}),
    "/api/tournament/withdraw": ("chief", {"player": "甲"}),
    "/api/tournament/readmit": ("chief", {"player": "甲"}),
    "/api/tournament/bye": ("chief", {"round": 1, "player": "甲", "kind": "half"}),
    "/api/tournament/undo": ("chief", {}),
    "/api/records/1/moves": ("arbiter", {"move": "h2e2", "ply": 0}),  # or the board's recorder
    "/api/records/1/undo": ("arbiter", {"ply": 0}),
    "/api/auth/logout": ("viewer", {}),
}
# Reads that are arbiter-only data (any logged-in account) or the admin's.
PRIVATE_READS = {
    "/api/alerts": "viewer",
    "/api/set_aside": "viewer",
    "/metrics": "viewer",
    "/api/accounts": "admin",
    "/api/tournament/audit": "viewer",
    "/api/record-keys": "chief",
}


@pytest_asyncio.fixture(loop_scope="session")
async def station(tmp_path: Path) -> AsyncIterator[Station]:
    accounts = [{"username": f"{r}1", "password_hash": _HASH, "role": r} for r in ROLES]
    s = StationWithWeb(station_config(tmp_path, account=accounts), connect=False)
    await s.start()
    try:
        yield s
    finally:
        await s.stop()


@contextlib.asynccontextmanager
async def _client(
    station: Station, role: str | None
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str]]]:
    """A client logged in with the account of ``role`` (None: anonymous) and its CSRF header."""
    async with httpx.AsyncClient(base_url=station.http_url, timeout=10) as client:
        if role is None:
            yield client, {}
            return
        login = {"username": f"{role}1", "password": PASSWORD}
        r = await client.post("/api/auth/login", json=login)
        assert r.status_code == 200, r.text
        assert r.json()["role"] == role
        yield client, {"X-CSRF-Token": r.json()["csrf"]}


async def _post(client: httpx.AsyncClient, path: str, body: Any, headers: dict[str, str]) -> Any:
    if isinstance(body, str):
        return await client.post(path, content=body.encode(), headers=headers)
    return await client.post(path, json=body, headers=headers)


async def test_the_tables_cover_every_route(station: Station) -> None:
    posts = [
        r
        for r in station.app.routes
        if isinstance(r, Route)
        and "POST" in (r.methods or ())
        and r.path not in ("/api/auth/login", "/api/auth/record-key")  # no session needed
    ]
    tried = [p.split("?")[0] for p in ACTIONS]
    uncovered = {r.path for r in posts if not any(r.path_regex.match(p) for p in tried)}
    assert not uncovered
    assert len(posts) == len(ACTIONS)


@pytest.mark.parametrize("role", ROLES)
async def test_each_action_needs_its_role(station: Station, role: str) -> None:
    async with _client(station, role) as (client, csrf):
        for path, (needed, body) in ACTIONS.items():
            if path == "/api/auth/logout":
                continue  # ends the session; tried last
            r = await _post(client, path, body, csrf)
            allowed = ROLES.index(role) >= ROLES.index(needed)
            if allowed:
                assert r.status_code not in (401, 403), (role, path, r.text)
            else:
                assert r.status_code == 403, (role, path, r.text)
                assert r.json()["error"].startswith(f"the {role} account"), r.text
        r = await client.post("/api/auth/logout", headers=csrf)
        assert r.status_code == 200


async def test_a_viewer_imports_nothing(station: Station) -> None:
    assert station.store is not None
    async with _client(station, "viewer") as (client, csrf):
        r = await _post(client, "/api/pairings?send=0", ACTIONS["/api/pairings?send=0"][1], csrf)
        assert r.status_code == 403
    assert await station.store.pairings() == []


@pytest.mark.parametrize("role", [None, *ROLES])
async def test_arbiter_only_reads_are_behind_login(station: Station, role: str | None) -> None:
    async with _client(station, role) as (client, _):
        for path, needed in PRIVATE_READS.items():
            r = await client.get(path)
            if role is None:
                assert r.status_code == 401, (path, r.text)
            elif ROLES.index(role) >= ROLES.index(needed):
                assert r.status_code == 200, (role, path, r.text)
            else:
                assert r.status_code == 403, (role, path, r.text)
        for path in ("/healthz", "/api/boards", "/api/events", "/api/games", "/api/standings"):
            assert (await client.get(path)).status_code == 200, path
    if role == "admin":
        async with _client(station, "admin") as (admin, _):
            listed = (await admin.get("/api/accounts")).json()["accounts"]
        assert {a["role"] for a in listed} == set(ROLES)
        assert "scrypt" not in json.dumps(listed)


def _feed(station: Station, ev: dict[str, Any]) -> None:
    assert station.ingest is not None
    station.ingest.handle(f"qz/v1/test/board/{ev['board']}/event", json.dumps(ev).encode())


async def _messages(response: httpx.Response, until: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    kind = ""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
            out.append((kind, data))
            if kind == "event" and data["event"]["type"] == until:
                return out
    raise AssertionError("stream ended")


async def test_pending_fouls_and_alerts_stay_off_the_public_stream_and_lists(
    station: Station,
) -> None:
    """A phone in the hall sees the clock events; the pending foul, its alert and the state's
    pending list reach the arbiter's stream only."""
    import asyncio

    async with (
        _client(station, "arbiter") as (arb, _),
        _client(station, None) as (anon, _),
        arb.stream("GET", "/api/stream") as priv,
    ):
        async with anon.stream("GET", "/api/stream") as pub:
            await asyncio.sleep(0.2)  # both subscribed
            foul = {"side": "red", "reason": "pause", "status": "pending", "count": 0}
            _feed(station, envelope("7", 1, game="r1-b7", type="foul", data=foul))
            _feed(
                station,
                envelope(
                    "7",
                    2,
                    game="r1-b7",
                    type="move",
                    data={"side": "red", "used_ms": 1000, "move": 1},
                ),
            )
            public = await asyncio.wait_for(_messages(pub, "move"), 10)
            private = await asyncio.wait_for(_messages(priv, "move"), 10)
        assert not [k for k, _ in public if k == "alert"]
        assert [d["event"]["type"] for k, d in public if k == "event"] == ["move"]
        assert "foul" in [d["event"]["type"] for k, d in private if k == "event"]
        assert station.ingest is not None
        await station.ingest.flush()
        for path in ("/api/events?board=7", "/api/boards/7"):
            seen = [e["type"] for e in (await anon.get(path)).json()["events"]]
            assert "foul" not in seen and "move" in seen, (path, seen)
            seen = [e["type"] for e in (await arb.get(path)).json()["events"]]
            assert "foul" in seen, (path, seen)
