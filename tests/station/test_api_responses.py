"""Real responses against the generated ``/api/openapi.json`` (issue 14).

A real station on the session's Mosquitto, a real node (node-a: boards 1 and 2, simulated faces
playing moves) and a FakeNode (node-b: board 3, events typed out to raise alerts) play a round
through the API as the chief arbiter would: players, pairings sent as ``set_game``, the venue
started, a foul and results entered on the boards, a flag and a pending foul ruled from the
alerts, the standings, the knockout started and a game confirmed onto a board. Then every JSON
route is read, anonymous and logged in, and each response is validated with ``jsonschema``
against the schema the document declares for it (``$ref`` resolved with a ``referencing``
registry holding the document). A field renamed or dropped in a route fails here.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Mount, Route
from support.node import node_config, running_node
from support.openapi_check import Checker
from support.station import (
    ARBITER,
    ARBITER_PASSWORD,
    FakeNode,
    arbiter_txn,
    station_config,
    wait_until,
)

from venue_station.auth import hash_password
from venue_station.domain.station import Station
from venue_station.web.openapi import SCHEMA

ARBITER_HASH = hash_password(ARBITER_PASSWORD)
PLAYERS = "name\n甲\n乙\n丙\n丁\n戊\n己\n"
PAIRINGS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n1,3,戊,己\n"
# Driven by test_the_pairing_programs_imports_match_the_document (a station of its own)
NOT_DRIVEN = {("post", "/api/trf"), ("post", "/api/pairs")}
# Driven by test_the_pairing_engines_actions_match_the_document (a station with an engine)
ENGINE_DRIVEN = {
    ("get", "/api/pairing/proposal"),
    ("post", "/api/pairing/propose"),
    ("post", "/api/pairing/approve"),
    ("post", "/api/pairing/discard"),
}
# Driven by tests/station/test_records_api.py (the records of a round, 录谱)
RECORDS_DRIVEN = {
    ("get", "/api/records/{board}"),
    ("post", "/api/records/{board}/moves"),
    ("post", "/api/records/{board}/undo"),
    ("get", "/api/record-keys"),
    ("post", "/api/auth/record-key"),
}
ENGINE = Path(__file__).parents[1] / "support" / "trf_engine.py"
GOLDEN = Path(__file__).parents[1] / "trf" / "golden"


async def _get(client: httpx.AsyncClient, checker: Checker, path: str, url: str = "") -> Any:
    r = await client.get(url or path)
    assert r.status_code == 200, (url or path, r.text)
    return checker.check("get", path, r)


async def _post(client: httpx.AsyncClient, checker: Checker, path: str, url: str, **kw: Any) -> Any:
    r = await client.post(url, **kw)
    assert r.status_code == 200, (url, r.text)
    return checker.check("post", path, r)


async def _login(client: httpx.AsyncClient, checker: Checker) -> None:
    body = await _post(
        client,
        checker,
        "/api/auth/login",
        "/api/auth/login",
        json={"username": ARBITER, "password": ARBITER_PASSWORD},
    )
    client.headers["X-CSRF-Token"] = body["csrf"]


async def _play(
    station: Station, client: httpx.AsyncClient, checker: Checker, fake: FakeNode
) -> None:
    """A round as the chief plays it, each action's response checked."""
    await _login(client, checker)
    await _post(client, checker, "/api/players", "/api/players", content=PLAYERS.encode())
    sent = await _post(client, checker, "/api/pairings", "/api/pairings", content=PAIRINGS.encode())
    assert sorted(sent["set_game"]) == ["1", "2", "3"], sent
    assert all(reply["ok"] for reply in sent["set_game"].values()), sent
    started = await _post(
        client, checker, "/api/venue/cmd", "/api/venue/cmd", json={"cmd": "start"}
    )
    assert started["ok"], started
    assert station.store is not None
    await wait_until(lambda: _moved(station), 10, "moves on boards 1 and 2")
    cmd = "/api/boards/{board}/cmd"
    for board, args, name in (
        ("1", {"side": "black", "reason": "board_pause"}, "foul"),
        ("1", {"winner": "red", "reason": "resignation"}, "result"),
        ("2", {"winner": None, "reason": "agreed_draw"}, "result"),
    ):
        reply = await _post(
            client, checker, cmd, f"/api/boards/{board}/cmd", json={"cmd": name, "args": args}
        )
        assert reply["ok"], reply
    # Board 3 (the FakeNode): a flag and a foul the clock proposes, for the arbiter to rule on.
    await fake.emit("3", type="started", data={}, game="r1-b3")
    await fake.emit("3", game="r1-b3")
    await fake.emit("3", type="flag", data={"side": "black"}, game="r1-b3")
    foul = {"side": "red", "reason": "phone", "status": "pending", "count": 1}
    await fake.emit("3", type="foul", data=foul, game="r1-b3")
    assert station.ingest is not None

    async def alerts() -> list[dict[str, Any]]:
        assert station.store is not None and station.ingest is not None
        await station.ingest.flush()
        return await station.store.alerts()

    async with asyncio.timeout(10):
        while {a["kind"] for a in await alerts()} < {"flag", "foul_pending"}:
            await asyncio.sleep(0.05)
    for alert in await alerts():
        action = "confirm" if alert["kind"] == "foul_pending" else "ack"
        url = f"/api/alerts/{alert['id']}"
        await _post(client, checker, "/api/alerts/{id}", url, json={"action": action})
    await _post(
        client,
        checker,
        "/api/rounds/{round}/set_games",
        "/api/rounds/1/set_games",
    )
    # board 3's flag decided by the arbiter: the knockout follows a round with every game over
    data = {"winner": "red", "reason": "flag"}
    txn = arbiter_txn(station, "3", "result", **data)
    await fake.emit("3", type="result", data=data, game="r1-b3", txn=txn)
    async with asyncio.timeout(10):
        while not await _decided(station, "r1-b3"):
            await asyncio.sleep(0.05)
    ko = "/api/knockout/start"
    start = await _post(
        client, checker, ko, ko, json={"after_round": 1, "top": ["甲", "丙", "戊", "丁"], "seed": 7}
    )
    game = start["proposed"][0]["id"]
    confirm = "/api/knockout/games/{id}/confirm"
    await _post(
        client, checker, confirm, f"/api/knockout/games/{game}/confirm", json={"board": "1"}
    )
    result = "/api/knockout/games/{id}/result"
    await _post(
        client, checker, result, f"/api/knockout/games/{game}/result", json={"result": "draw"}
    )
    choice = "/api/knockout/choices/{id}"
    await _post(client, checker, choice, f"/api/knockout/choices/{game}", json={"side": "red"})


async def _decided(station: Station, game: str) -> bool:
    assert station.ingest is not None
    await station.ingest.flush()
    return any(g["game"] == game and o.decided for g, o in await station.outcomes())


def _moved(station: Station) -> bool:
    assert station.ingest is not None
    views = station.ingest.boards
    return all(
        (v := views.get(b)) is not None
        and v.state is not None
        and v.state.get("moves", {}).get("red", 0) >= 1
        for b in ("1", "2")
    )


READS = [
    ("/healthz", ""),
    ("/api/station", ""),
    ("/api/boards", ""),
    ("/api/boards/{board}", "/api/boards/1"),
    ("/api/events", "/api/events?limit=1000"),
    ("/api/games", ""),
    ("/api/games/{game}", "/api/games/r1-b1"),
    ("/api/results", "/api/results?round=1"),
    ("/api/fouls", ""),
    ("/api/rounds", ""),
    ("/api/round", ""),
    ("/api/standings", "/api/standings?round=1"),
    ("/api/prizes", ""),
    ("/api/export/prizes.csv", "/api/export/prizes.csv?lang=zh"),
    ("/api/regulation/reasons", ""),
    ("/api/knockout", ""),
    ("/api/trf/entrants", ""),
    ("/api/export/rounds/{round}/results.{fmt}", "/api/export/rounds/1/results.json"),
    ("/api/export/rounds/{round}/results.{fmt}", "/api/export/rounds/1/results.csv"),
    ("/api/export/standings.{fmt}", "/api/export/standings.json?round=1"),
    ("/api/export/standings.{fmt}", "/api/export/standings.csv?round=1"),
    ("/api/export/games/{game}/clock.{fmt}", "/api/export/games/r1-b1/clock.csv"),
    ("/api/export/games/{game}/clock.{fmt}", "/api/export/games/r1-b1/clock.pgn"),
    ("/api/export/rounds/{round}/games.pgn", "/api/export/rounds/1/games.pgn"),
    ("/api/export/tournament.trf", ""),
    ("/api/openapi.json", ""),
]
READER_READS = [
    ("/api/alerts", ""),
    ("/api/set_aside", ""),
    ("/api/auth/session", ""),
    ("/metrics", ""),
    ("/api/record-duties", "/api/record-duties?round=1"),  # 录谱: the top 2 boards (Meishan)
]


@pytest.mark.broker
async def test_every_response_matches_the_generated_document(
    venue_broker: Any, tmp_path: Path, start_station: Any
) -> None:
    chief = {"username": ARBITER, "password_hash": ARBITER_HASH, "role": "chief"}
    admin = {"username": "admin", "password_hash": ARBITER_HASH, "role": "admin"}
    config = station_config(tmp_path, venue_broker, command_timeout_s=3.0, account=[chief, admin])
    station: Station = await start_station(config)
    checker = Checker(SCHEMA)
    node = node_config(
        venue_broker,
        "node-a",
        ["1", "2"],
        tmp_path / "node",
        mode="random",
        mean_move_s=0.05,
        seed=3,
    )
    async with (
        running_node(node),
        FakeNode(venue_broker, "node-b", ["3"]) as fake,
        httpx.AsyncClient(base_url=station.http_url) as chief,
        httpx.AsyncClient(base_url=station.http_url) as anonymous,
    ):
        async with httpx.AsyncClient(base_url=station.http_url) as served:
            assert (await served.get("/api/openapi.json")).json() == SCHEMA
        await _play(station, chief, checker, fake)
        assert station.ingest is not None
        await station.ingest.flush()
        for client in (anonymous, chief):
            for path, url in READS:
                await _get(client, checker, path, url)
        for path, url in READER_READS:
            await _get(chief, checker, path, url)
        # What the scenario was for: every kind of row is there to be checked.
        events = (await chief.get("/api/events?limit=1000")).json()["events"]
        assert {"started", "move", "foul", "result", "flag"} <= {e["type"] for e in events}
        boards = (await chief.get("/api/boards")).json()["boards"]
        assert all(b["state"] and b["status"] for b in boards if b["board"] in ("1", "2"))
        assert (await chief.get("/api/alerts")).json()["alerts"]
        assert (await chief.get("/api/standings?round=1")).json()["standings"]
        # errors: the shared Error schema
        for url, path in (
            ("/api/games/r9-b9", "/api/games/{game}"),
            ("/api/events?limit=x", "/api/events"),
        ):
            r = await anonymous.get(url)
            assert r.status_code in (400, 404)
            checker.check("get", path, r)
        r = await anonymous.get("/api/alerts")
        assert r.status_code == 401
        checker.check("get", "/api/alerts", r)
        admin_login = {"username": "admin", "password": ARBITER_PASSWORD}
        assert (await anonymous.post("/api/auth/login", json=admin_login)).status_code == 200
        await _get(anonymous, checker, "/api/accounts")
        # The chief's changes to the tournament (issue 25), and their audit.
        who = {"json": {"player": "己"}}
        await _post(chief, checker, "/api/tournament/withdraw", "/api/tournament/withdraw", **who)
        await _post(chief, checker, "/api/tournament/readmit", "/api/tournament/readmit", **who)
        bye = {"json": {"round": 9, "player": "戊", "kind": "half"}}
        await _post(chief, checker, "/api/tournament/bye", "/api/tournament/bye", **bye)
        await _get(chief, checker, "/api/tournament/audit", "")
        undo = {"json": {}}
        await _post(chief, checker, "/api/tournament/undo", "/api/tournament/undo", **undo)
        # 录谱: the chief allows board 1's record to be left (Meishan's consent)
        consent = ("/api/record-duties/{game}/consent", "/api/record-duties/r1-b1/consent")
        duty = await _post(chief, checker, *consent, json={"allow": True})
        assert duty["state"] == "allowed" and duty["consent"]["by"] == ARBITER
        await _post(chief, checker, "/api/auth/logout", "/api/auth/logout")
    json_ops = {
        (method, path)
        for path, ops in SCHEMA["paths"].items()
        for method, op in ops.items()
        if "application/json" in op["responses"]["200"]["content"]
    }
    rest = json_ops - NOT_DRIVEN - ENGINE_DRIVEN - RECORDS_DRIVEN
    assert rest <= checker.seen, sorted(rest - checker.seen)


async def test_the_pairing_programs_imports_match_the_document(
    tmp_path: Path, start_station: Any
) -> None:
    """A TRF with its paired round and a pairs list for the next, sent to boards no broker
    carries (every ``set_game`` reply ``not_sent``), then the entrants and byes they left."""
    station: Station = await start_station(station_config(tmp_path), connect=False)
    checker = Checker(SCHEMA)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        await _login(client, checker)
        trf = (GOLDEN / "xiangqi-r4-paired.trf").read_bytes()
        body = await _post(client, checker, "/api/trf", "/api/trf", content=trf)
        assert body["round"] == 4 and body["set_game"], body
        assert {r["outcome"] for r in body["set_game"].values()} == {"not_sent"}
        pairs = b"4\n1 2\n3 4\n5 6\n7 0\n"
        body = await _post(client, checker, "/api/pairs", "/api/pairs?round=5", content=pairs)
        assert (body["round"], body["games"], body["byes"]) == (5, 3, 1), body
        entrants = await _get(client, checker, "/api/trf/entrants")
        assert len(entrants["entrants"]) == 7 and entrants["byes"]
    assert checker.seen >= NOT_DRIVEN


async def test_the_pairing_engines_actions_match_the_document(
    tmp_path: Path, start_station: Any
) -> None:
    """The engine's proposal (with a bye), its approval and a discarded second one."""
    wrapper = tmp_path / "bbpPairings"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ENGINE}" "$@"\n')
    wrapper.chmod(0o755)
    engine = {"engine": "bbpPairings", "path": str(wrapper)}
    config = station_config(tmp_path, regulation="wulong-2015", pairing=engine)
    station: Station = await start_station(config, connect=False)
    checker = Checker(SCHEMA)
    async with httpx.AsyncClient(base_url=station.http_url, timeout=60) as client:
        await _login(client, checker)
        assert (await _get(client, checker, "/api/pairing/proposal"))["proposal"] is None
        players = "142 5\r\nXXR 5\r\n" + "".join(
            f"001 {i:>4} m    {'棋手' + str(i):<33} {2400 - i:>4} CHN {'':>11} {'':<10}  0.0\r\n"
            for i in range(1, 8)
        )
        await _post(client, checker, "/api/trf", "/api/trf?send=0", content=players)
        body = await _post(client, checker, "/api/pairing/propose", "/api/pairing/propose")
        assert body["round"] == 1 and body["boards"][-1]["black"] == 0, body
        assert (await _get(client, checker, "/api/pairing/proposal"))["proposal"] == body
        url = "/api/pairing/approve?send=0"
        body = await _post(client, checker, "/api/pairing/approve", url)
        assert (body["round"], body["games"], body["byes"]) == (1, 3, 1), body
        body = await _post(client, checker, "/api/pairing/discard", "/api/pairing/discard")
        assert body["proposal"] is None
    assert checker.seen >= ENGINE_DRIVEN


def test_a_renamed_or_dropped_field_fails_the_check() -> None:
    """The check has teeth: the same validation refuses a games row with a field renamed,
    dropped or of the wrong type."""
    checker = Checker(SCHEMA)
    schema = checker.schema_for("get", "/api/games", 200, "application/json")
    game = {
        "game": "r1-b1", "round": 1, "board": "1", "red": "甲", "black": "乙", "tc": "90m+30s",
        "winner": "red", "result": "1-0", "reason": "resignation", "decided_by": "result",
        "fouls": {"black": {"confirmed": 1}}, "status": "confirmed", "proposed": None,
        "proposed_reason": None, "red_points": 2, "black_points": 0, "updated_ms": 1,
    }  # fmt: skip
    checker.validate(schema, {"games": [game]})
    renamed = {("decided" if k == "decided_by" else k): v for k, v in game.items()}
    dropped = {k: v for k, v in game.items() if k != "red_points"}
    for bad in (renamed, dropped, {**game, "round": "1"}):
        with pytest.raises(AssertionError):
            checker.validate(schema, {"games": [bad]})


def test_every_route_of_the_app_is_in_the_document_with_a_schema(tmp_path: Path) -> None:
    """Every route and method of the built app (API, pages, /static) is an operation, each
    200 declares a non-empty schema, and every JSON one is a generated component."""
    from venue_station.web.api import build_app

    station = Station(station_config(tmp_path), connect=False)  # the domain; the app beside it
    app = build_app(station)
    served: set[tuple[str, str]] = set()
    for route in app.routes:
        if isinstance(route, Route):
            for method in (route.methods or set()) - {"HEAD"}:
                served.add((method.lower(), route.path))
        elif isinstance(route, Mount):
            served.add(("get", f"{route.path}/{{path}}"))
    documented = {(m, p) for p, ops in SCHEMA["paths"].items() for m in ops}
    assert served == documented, (served - documented, documented - served)
    components = SCHEMA["components"]["schemas"]
    for path, ops in SCHEMA["paths"].items():
        for method, op in ops.items():
            content = op["responses"]["200"]["content"]
            assert content, (method, path)
            for media, entry in content.items():
                schema = entry["schema"]
                assert schema, (method, path, media)
                if media == "application/json" and path != "/api/openapi.json":
                    name = schema["$ref"].rsplit("/", 1)[1]
                    assert components[name].get("properties") or components[name].get("anyOf")
            for status in ("4XX", "5XX"):
                assert op["responses"][status] == {"$ref": "#/components/responses/Error"}
