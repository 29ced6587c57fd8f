"""Through a real broker: a TRF carrying round 4 paired, then an engine's pairs list for round 5,
reach the boards as ``set_game`` — red is the TRF's white, the key tells two 张伟 apart."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import FakeNode, station_config, wait_until

from venue_station.auth import hash_password

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.broker
async def test_set_game_goes_to_every_board(
    broker_factory: Any, tmp_path: Path, start_station: Any
) -> None:
    # its own broker: the session's shared one may hold another test's retained statuses of
    # boards 1-3 (a real node's, with its connection epoch) that outrank these (a CI run)
    venue_broker = broker_factory()
    accounts = [{"username": "chief", "password_hash": hash_password("pw-c"), "role": "chief"}]
    config = station_config(tmp_path, venue_broker, command_timeout_s=1.0, account=accounts)
    station = await start_station(config)
    async with (
        FakeNode(venue_broker, "node-a", ["1", "2"]) as node_a,
        FakeNode(venue_broker, "node-b", ["3"]) as node_b,  # the standard roster's boards
        httpx.AsyncClient(base_url=station.http_url, timeout=10) as client,
    ):
        for node, b in ((node_a, "1"), (node_a, "2"), (node_b, "3")):
            status = {
                "state": "online",
                "node": node.node,
                "session": 1,
                "ts": int(time.time() * 1000),
            }
            await node.publish(station.topics.status(b), status, retain=True)
        await wait_until(lambda: sum(v["online"] for v in station.board_views()) == 3, 15)
        r = await client.post("/api/auth/login", json={"username": "chief", "password": "pw-c"})
        h = {"X-CSRF-Token": r.json()["csrf"]}

        r = await client.post(
            "/api/trf", content=(GOLDEN / "xiangqi-r4-paired.trf").read_bytes(), headers=h
        )
        assert r.status_code == 200, r.text
        assert {b: v["ok"] for b, v in r.json()["set_game"].items()} == {
            "1": True,
            "2": True,
            "3": True,
        }
        sent = {b: c.args for n in (node_a, node_b) for b, c in n.commands if c.cmd == "set_game"}
        assert sent["1"] == {"game": "r4-b1", "tc": station.tc, "red": "王天一", "black": "王琳娜"}
        assert (sent["2"]["red"], sent["3"]["red"]) == ("张伟 (3)", "张伟 (4)")

        node_a.commands.clear()
        node_b.commands.clear()
        r = await client.post("/api/pairs", content=b"3\n2 1\n4 3\n6 5\n", headers=h)
        assert r.status_code == 200, r.text
        assert r.json()["round"] == 5
        sent = {b: c.args for n in (node_a, node_b) for b, c in n.commands if c.cmd == "set_game"}
        assert set(sent) == {"1", "2", "3"}
        assert sent["2"] == {
            "game": "r5-b2",
            "tc": station.tc,
            "red": "张伟 (4)",
            "black": "张伟 (3)",
        }
