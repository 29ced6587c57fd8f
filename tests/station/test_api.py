"""The HTTP API over a real socket: routes, OpenAPI, auth + CSRF, commands, SSE, exports."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Route
from support.station import (
    ARBITER,
    ARBITER_PASSWORD,
    FakeNode,
    decision_txn,
    envelope,
    station_config,
    wait_until,
)

from venue_station.domain.station import Station
from venue_station.web.openapi import SCHEMA


async def login(client: httpx.AsyncClient) -> str:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200, r.text
    assert "qz_session" in r.cookies
    return str(r.json()["csrf"])


@pytest.fixture
async def offline(tmp_path: Path, start_station) -> Station:
    """A station without a broker, fed directly."""
    return await start_station(station_config(tmp_path), connect=False)


def feed(station: Station, ev: dict[str, Any]) -> None:
    assert station.ingest is not None
    station.ingest.handle(f"qz/v1/test/board/{ev['board']}/event", json.dumps(ev).encode())


async def test_every_route_is_in_the_openapi_document(offline: Station) -> None:
    paths = {
        r.path
        for r in offline.app.routes
        if isinstance(r, Route) and r.path.startswith(("/api", "/healthz", "/metrics"))
    }
    assert paths <= set(SCHEMA["paths"]), paths - set(SCHEMA["paths"])
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        served = (await client.get("/api/openapi.json")).json()
    assert set(served["paths"]) == set(SCHEMA["paths"])


async def test_read_routes(offline: Station) -> None:
    await offline.import_pairings(
        "round,board,red,black\n1,1,王天一,郑惟桐\n1,2,许银川,吕钦\n", send=False
    )
    feed(offline, envelope("1", 1, game="r1-b1", type="started", data={}))
    feed(
        offline,
        envelope(
            "1", 2, game="r1-b1", data={"side": "red", "used_ms": 3000, "move": 1}, red_ms=1_797_000
        ),
    )
    feed(offline, envelope("1", 3, game="r1-b1", type="flag", data={"side": "black"}))
    assert offline.ingest is not None
    await offline.ingest.flush()
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        assert (await client.get("/healthz")).json()["ok"] is True
        boards = (await client.get("/api/boards")).json()["boards"]
        # board 2 is paired and never seen: listed, with nothing known of it
        assert [b["board"] for b in boards] == ["1", "2"] and boards[0]["last_seq"] == 3
        assert boards[1]["status"] is None and boards[1]["state"] is None
        one = (await client.get("/api/boards/1")).json()
        assert [e["seq"] for e in one["events"]] == [3, 2, 1]
        page = (await client.get("/api/events", params={"board": "1", "limit": 2})).json()
        assert [e["seq"] for e in page["events"]] == [1, 2] and page["next"] is not None
        rest = (
            await client.get("/api/events", params={"board": "1", "after": page["next"]})
        ).json()
        assert [e["seq"] for e in rest["events"]] == [3] and rest["next"] is None
        flags = (await client.get("/api/events", params={"type": "flag", "round": 1})).json()[
            "events"
        ]
        assert [e["type"] for e in flags] == ["flag"]
        games = (await client.get("/api/games", params={"round": 1})).json()["games"]
        # The flag's loss is a proposal: shown as one, counted nowhere (issue 15).
        assert [(g["board"], g["result"], g["status"]) for g in games] == [
            ("1", None, "pending"),
            ("2", None, "undecided"),
        ]
        assert (games[0]["proposed"], games[0]["red_points"]) == ("1-0", None)
        assert (await client.get("/api/export/rounds/1/results.csv")).text.splitlines()[1] == (
            "1,1,r1-b1,王天一,郑惟桐,,,,"
        )
        # The arbiter confirms it (the node's ruling event): now it is the result everywhere.
        confirmed = {"winner": "red", "reason": "flag", "status": "confirmed"}
        txn = decision_txn(offline, "1", "result", confirmed)  # the arbiter's result
        feed(offline, envelope("1", 4, game="r1-b1", type="result", data=confirmed, txn=txn))
        await offline.ingest.flush()
        games = (await client.get("/api/games", params={"round": 1})).json()["games"]
        assert [(g["board"], g["result"]) for g in games] == [("1", "1-0"), ("2", None)]
        results = (await client.get("/api/results", params={"round": 1})).json()["results"]
        assert results[0]["red_points"] == 2 and results[0]["reason"] == "flag"
        game = (await client.get("/api/games/r1-b1")).json()
        assert game["clock_log"] == [
            {"move": 1, "side": "red", "used_ms": 3000, "remaining_ms": 1_797_000}
        ]
        csv = await client.get("/api/export/rounds/1/results.csv")
        assert csv.text.splitlines()[1] == "1,1,r1-b1,王天一,郑惟桐,1-0,2,0,flag"
        assert "attachment" in csv.headers["content-disposition"]
        assert (await client.get("/api/export/rounds/1/results.json")).json()["games"][0][
            "result"
        ] == "1-0"
        pgn = (await client.get("/api/export/games/r1-b1/clock.pgn")).text
        assert "1. -- {[%clk 0:29:57]} 1-0" in pgn and '[Red "王天一"]' in pgn
        clock_csv = (await client.get("/api/export/games/r1-b1/clock.csv")).text
        assert clock_csv.splitlines()[1] == "1,red,3000,1797000,3.0,0:29:57"
        await login(client)  # alerts and metrics are arbiter-only data
        alerts = (await client.get("/api/alerts", params={"status": "open"})).json()["alerts"]
        assert [a["kind"] for a in alerts] == ["flag"]
        metrics = (await client.get("/metrics")).text
        assert "qz_events_stored_total 4" in metrics and "qz_boards_online 0" in metrics
        assert "qz_ingest_lag_ms_count 4" in metrics
        assert (await client.get("/api/fouls")).json() == {
            "players": {
                "王天一": {"pending": 0, "confirmed": 0, "dismissed": 0},
                "郑惟桐": {"pending": 0, "confirmed": 0, "dismissed": 0},
                "许银川": {"pending": 0, "confirmed": 0, "dismissed": 0},
                "吕钦": {"pending": 0, "confirmed": 0, "dismissed": 0},
            }
        }


BAD_REQUESTS = [
    ("GET", "/api/events?limit=abc", 400, "query.limit"),
    ("GET", "/api/events?limit=5000", 400, "query.limit"),
    ("GET", "/api/events?type=teleport", 400, "query.type"),
    ("GET", "/api/events?order=sideways", 400, "query.order"),
    ("GET", "/api/games?round=x", 400, "query.round"),
    ("GET", "/api/alerts?status=maybe", 400, "query.status"),
    ("GET", "/api/boards/99", 404, "path.board"),
    ("GET", "/api/games/r9-b9", 404, "path.game"),
    ("GET", "/api/export/rounds/x/results.csv", 400, "path.round"),
    ("GET", "/api/export/rounds/3/results.csv", 404, "path.round"),
    ("GET", "/api/nothing", 404, None),
]


async def test_bad_requests_get_a_clear_json_error_and_are_counted(offline: Station) -> None:
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        await login(client)  # /api/alerts and /metrics are behind login
        for method, url, status, where in BAD_REQUESTS:
            r = await client.request(method, url)
            assert r.status_code == status, (url, r.text)
            body = r.json()
            assert body["error"] and body.get("where") == where, (url, body)
        metrics = (await client.get("/metrics")).text
    assert 'qz_bad_requests_total{kind="bad_request"} 7' in metrics
    assert 'qz_bad_requests_total{kind="not_found"} 4' in metrics


async def test_login_and_csrf_guard_every_action(offline: Station) -> None:
    actions = [
        "/api/boards/1/cmd",
        "/api/venue/cmd",
        "/api/pairings",
        "/api/players",
        "/api/rounds/1/set_games",
        "/api/alerts/1",
        "/api/records/1/moves",
        "/api/records/1/undo",
        "/api/auth/logout",
    ]
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        bad = await client.post("/api/auth/login", json={"username": ARBITER, "password": "wrong"})
        assert bad.status_code == 401 and bad.json()["error"] == "wrong username or password"
        nobody = await client.post("/api/auth/login", json={"username": "eve", "password": "x"})
        assert nobody.status_code == 401
        assert (await client.post("/api/auth/login", content=b"[1]")).status_code == 400
        for url in actions:
            r = await client.post(url, json={"cmd": "pause"})
            assert r.status_code == 401, url
        assert (await client.get("/api/auth/session")).status_code == 401
        csrf = await login(client)
        assert (await client.get("/api/auth/session")).json() == {
            "user": ARBITER,
            "role": "chief",
            "csrf": csrf,
            "boards": None,  # a recorder's boards (录谱)
        }
        for url in actions:
            r = await client.post(url, json={"cmd": "pause"})
            assert r.status_code == 403 and "X-CSRF-Token" in r.json()["error"], url
            r = await client.post(url, json={"cmd": "pause"}, headers={"X-CSRF-Token": "forged"})
            assert r.status_code == 403, url
        r = await client.post("/api/auth/logout", headers={"X-CSRF-Token": csrf})
        assert r.status_code == 200
        assert (
            await client.post(
                "/api/venue/cmd", json={"cmd": "pause"}, headers={"X-CSRF-Token": csrf}
            )
        ).status_code == 401
    form = {"username": ARBITER, "password": ARBITER_PASSWORD}
    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        assert (await client.post("/api/auth/login", data=form)).status_code == 200


async def test_sse_stream_carries_the_station_ts_and_events(offline: Station) -> None:
    async with httpx.AsyncClient(base_url=offline.http_url, timeout=5) as client:
        await login(client)  # alerts are on the arbiter's stream only
    async with (
        httpx.AsyncClient(base_url=offline.http_url, timeout=5, cookies=client.cookies) as client,
        client.stream("GET", "/api/stream") as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = response.aiter_lines()

        async def message() -> tuple[str, dict[str, Any]]:
            kind, data = "", ""
            async for line in lines:
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif line == "" and kind:
                    return kind, json.loads(data)
            raise AssertionError("stream ended")

        kind, hello = await asyncio.wait_for(message(), 5)
        assert kind == "hello" and abs(hello["station_ts"] - time.time() * 1000) < 5000
        assert hello["station"]["venue"] == "test"
        feed(offline, envelope("3", 1, game="r1-b3", type="flag", data={"side": "red"}))
        got = {}
        while set(got) < {"event", "alert"}:
            kind, data = await asyncio.wait_for(message(), 5)
            got[kind] = data
        assert got["event"]["event"]["type"] == "flag" and "station_ts" in got["event"]
        assert got["alert"]["alert"]["kind"] == "flag"


@pytest.mark.broker
async def test_commands_go_to_the_board_and_the_reply_comes_back(
    venue_broker, tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path, venue_broker, command_timeout_s=1.0))
    async with (
        FakeNode(venue_broker, "node-a", ["1", "2"]) as node,
        httpx.AsyncClient(base_url=station.http_url, timeout=10) as client,
    ):
        for b in ("1", "2"):
            await node.publish(
                station.topics.status(b),
                {"state": "online", "node": "node-a", "session": 1, "ts": int(time.time() * 1000)},
                retain=True,
            )
        await wait_until(lambda: sum(v["online"] for v in station.board_views()) == 2)
        h = {"X-CSRF-Token": await login(client)}
        r = await client.post(
            "/api/boards/1/cmd",
            json={"cmd": "adjust", "args": {"side": "red", "delta_ms": 60000}},
            headers=h,
        )
        assert r.status_code == 200 and r.json()["ok"] is True and r.json()["outcome"] == "ok"
        board, cmd = node.commands[-1]
        assert (board, cmd.cmd, cmd.args, cmd.txn) == (
            "1",
            "adjust",
            {"side": "red", "delta_ms": 60000},
            r.json()["txn"],
        )
        r = await client.post("/api/venue/cmd", json={"cmd": "pause"}, headers=h)
        assert r.status_code == 200 and set(r.json()["replies"]) == {"1", "2"}
        bad = await client.post(
            "/api/boards/1/cmd", json={"cmd": "adjust", "args": {"side": "green"}}, headers=h
        )
        assert bad.status_code == 400 and "adjust args" in bad.json()["error"]
        assert (
            await client.post("/api/venue/cmd", json={"cmd": "adjust"}, headers=h)
        ).status_code == 400
        assert (await client.post("/api/boards/1/cmd", content=b"{", headers=h)).status_code == 400
        node.reply_ok = False
        r = await client.post("/api/boards/2/cmd", json={"cmd": "pause"}, headers=h)
        assert (
            r.status_code == 200
            and r.json()["outcome"] == "rejected"
            and r.json()["error"] == "refused"
        )
        node.answer = False
        r = await client.post("/api/boards/2/cmd", json={"cmd": "resume"}, headers=h)
        assert r.status_code == 504 and r.json()["error"] == "no reply from board 2 within 1 s"
        # Pairings: stored, then set_game to every board of the round, replies collected.
        node.answer, node.reply_ok = True, True
        csv = "round,board,red,black\n3,1,王天一,郑惟桐\n3,2,许银川,吕钦\n".encode()
        r = await client.post(
            "/api/pairings", content=csv, headers={**h, "Content-Type": "text/csv"}
        )
        assert r.status_code == 200, r.text
        assert {b: v["ok"] for b, v in r.json()["set_game"].items()} == {"1": True, "2": True}
        sent = {b: c.args for b, c in node.commands if c.cmd == "set_game"}
        assert sent["2"] == {"game": "r3-b2", "tc": "30m+5s", "red": "许银川", "black": "吕钦"}
        bad_csv = await client.post(
            "/api/pairings", content=b"round,board,red,black\n3,1,a\n", headers=h
        )
        assert bad_csv.status_code == 400 and bad_csv.json()["where"] == "line 2"
        # A pending foul confirmed by the arbiter is resolved on the board.
        ev = node.next_event(
            "1",
            game="r3-b1",
            type="foul",
            data={"side": "red", "reason": "pause", "status": "pending", "count": 0},
        )
        await node.publish_event(ev)
        await wait_until(lambda: station.metrics.alerts_raised >= 1)
        assert station.ingest is not None
        await station.ingest.flush()
        # (the shared broker may hold other tests' boards: only this foul's alert matters here)
        alerts = (await client.get("/api/alerts", params={"status": "open"})).json()["alerts"]
        [alert] = [a for a in alerts if a["kind"] == "foul_pending" and a["board"] == "1"]
        r = await client.post(f"/api/alerts/{alert['id']}", json={"action": "confirm"}, headers=h)
        assert r.status_code == 200 and r.json()["alert"]["status"] == "confirmed"
        board, cmd = node.commands[-1]
        assert (board, cmd.cmd, cmd.args) == (
            "1",
            "resolve",
            {"seq": ev["seq"], "status": "confirmed"},
        )
        assert (
            await client.post(f"/api/alerts/{alert['id']}", json={"action": "x"}, headers=h)
        ).status_code == 400
    assert station.store is not None
    logged = await station.store.commands()
    assert {c["outcome"] for c in logged} >= {"ok", "rejected", "timeout"}
