"""Attacks with a node's broker password (issue 12, docs/security.md): poison messages, forged
decisions, another board's game, duplicates that would alert, a flooding board. Each runs
against the real broker from ``broker-config`` and a real station, and checks that the station
stays up and healthy, the other boards' events are all stored and the game stays undecided."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.broker import mqtt_client
from support.station import FakeNode, arbiter_txn, envelope, station_config, wait_until

from venue_station.domain.station import Station

pytestmark = pytest.mark.broker
R = "qz/v1/test"
DEEP = b"[" * 5000 + b"]" * 5000  # 10 KB of nested arrays


async def health(station: Station) -> tuple[int, dict[str, Any]]:
    async with httpx.AsyncClient(base_url=station.http_url, timeout=5) as client:
        r = await client.get("/healthz")
        return r.status_code, r.json()


async def games(station: Station) -> dict[str, dict[str, Any]]:
    async with httpx.AsyncClient(base_url=station.http_url, timeout=5) as client:
        return {g["game"]: g for g in (await client.get("/api/games")).json()["games"]}


async def stored_boards(station: Station) -> dict[str, int]:
    assert station.store is not None
    out: dict[str, int] = {}
    for ev in await station.store.events(limit=10_000):
        out[ev["board"]] = out.get(ev["board"], 0) + 1
    return out


async def test_a_deeply_nested_message_and_a_retained_poison_state_stop_nothing(
    venue_broker, tmp_path: Path, start_station
) -> None:
    config = station_config(tmp_path, venue_broker)
    station = await start_station(config)
    try:
        async with (
            # its poison must outlive it (a restart meets it); the finally clears it
            FakeNode(venue_broker, "node-c", ["5"], keep_retained=True) as attacker,
            FakeNode(venue_broker, "node-a", ["1"]) as honest,
        ):
            await attacker.publish(f"{R}/board/5/event", DEEP)
            await attacker.publish(f"{R}/board/5/state", DEEP, retain=True)
            await attacker.publish(f"{R}/board/5/status", b"{" * 20_000)
            await attacker.publish(f"{R}/board/5/event", b'{"seq": ' + b"9" * 4000 + b"}")
            for _ in range(5):
                await honest.emit("1")
            await wait_until(lambda: station.metrics.events_stored == 5, timeout=10)
            # too deep, too large: never parsed
            assert station.metrics.bad_payloads["too_large"] >= 3
            assert station.metrics.bad_payloads["bad_event"] >= 1  # seq of 4000 digits
            status, body = await health(station)
            assert status == 200 and body["ok"] and body["tasks_down"] == []
        await station.stop()
        # The poison is still retained on board 5's state: a restart meets it again.
        again = await start_station(config)
        async with FakeNode(venue_broker, "node-a", ["1"]) as honest:
            honest.seq["1"] = 5
            await honest.emit("1")
            await wait_until(lambda: again.metrics.events_stored == 1, timeout=10)
        assert again.metrics.bad_payloads["too_large"] >= 1
        status, body = await health(again)
        assert status == 200 and body["ok"]
    finally:
        async with mqtt_client(venue_broker, "node-c") as clear:
            await clear.publish(f"{R}/board/5/state", b"", qos=1, retain=True)


async def test_a_node_cannot_decide_another_boards_game_nor_its_own(
    venue_broker, tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path, venue_broker))
    await station.import_pairings(
        "round,board,red,black\n1,1,王天一,郑惟桐\n1,5,许银川,吕钦\n", send=False
    )
    async with (
        FakeNode(venue_broker, "node-c", ["5"]) as attacker,
        FakeNode(venue_broker, "node-a", ["1"]) as victim,
    ):
        await victim.emit("1", game="r1-b1")
        # board 5 reports a result (and a confirmed forfeit) for board 1's game
        await attacker.emit(
            "5", game="r1-b1", type="result", data={"winner": "black", "reason": "resign"}
        )
        await attacker.emit(
            "5",
            game="r1-b1",
            type="forfeit",
            data={"side": "red", "reason": "absent", "status": "confirmed", "ref": 1},
        )
        # and a decided result for its own game, with no arbiter involved
        await attacker.emit(
            "5", game="r1-b5", type="result", data={"winner": "red", "reason": "resign"}
        )
        # even naming a txn the station sent to another board
        other = arbiter_txn(station, "1", "result", winner="red", reason="x")
        await attacker.emit(
            "5", game="r1-b5", type="result", data={"winner": "red", "reason": "x"}, txn=other
        )
        await wait_until(
            lambda: station.metrics.bad_payloads["game_board_mismatch"] == 2, timeout=10
        )
        await wait_until(lambda: station.metrics.events_stored == 3, timeout=10)
    assert station.ingest is not None
    await station.ingest.flush()
    got = await games(station)
    assert got["r1-b1"]["result"] is None and got["r1-b5"]["result"] is None
    assert station.metrics.bad_payloads["unverified_decision"] == 2
    assert station.store is not None
    proposals = await station.store.events(board="5", types=["result"])
    assert [(e["data"]["status"], e["data"]["unverified"]) for e in proposals] == [
        ("pending", True),
        ("pending", True),
    ]
    status, body = await health(station)
    assert status == 200 and body["ok"]


async def test_a_result_that_answers_the_stations_command_decides(
    venue_broker, tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path, venue_broker))
    await station.import_pairings("round,board,red,black\n1,1,王天一,郑惟桐\n", send=False)
    async with FakeNode(venue_broker, "node-a", ["1"]) as node:
        await node.emit(
            "1",
            game="r1-b1",
            type="result",
            data={"winner": "red", "reason": "resign"},
            txn=arbiter_txn(station, "1", "result", winner="red", reason="resign"),
        )
        await wait_until(lambda: station.metrics.events_stored == 1, timeout=10)
    assert station.ingest is not None
    await station.ingest.flush()
    assert (await games(station))["r1-b1"]["result"] == "1-0"


async def test_a_spare_clock_given_the_game_by_set_game_may_report_it(
    venue_broker, tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path, venue_broker, command_timeout_s=2.0))
    await station.import_pairings("round,board,red,black\n1,1,王天一,郑惟桐\n", send=False)
    async with FakeNode(venue_broker, "node-b", ["3"]) as spare:
        result = await station.send_command(
            "3", "set_game", {"game": "r1-b1", "tc": "30m+5s", "red_ms": 600_000,
                              "black_ms": 500_000}
        )  # fmt: skip
        assert result.ok
        await spare.emit("3", game="r1-b1")
        await wait_until(lambda: station.metrics.events_stored == 1, timeout=10)
    assert station.metrics.bad_payloads["game_board_mismatch"] == 0


async def test_a_dropped_duplicate_raises_no_alert(
    broker_factory, tmp_path: Path, start_station
) -> None:
    # its own broker: the session broker holds other tests' retained statuses (a node that
    # stopped cleanly leaves "offline"), each a board_offline alert for a new station
    venue_broker = broker_factory()
    station = await start_station(station_config(tmp_path, venue_broker))
    async with FakeNode(venue_broker, "node-a", ["1"]) as node:
        move = node.next_event("1")
        await node.publish_event(move)
        await wait_until(lambda: station.metrics.events_stored == 1, timeout=10)
        # the same (board, session, seq) again, now claiming a flag
        forged = {**move, "type": "flag", "data": {"side": "red"}}
        await node.publish_event(forged)
        await node.publish_event({**forged, "seq": 2, "session": 1, "type": "move",
                                  "data": move["data"]})  # fmt: skip
        await wait_until(lambda: station.metrics.events_stored == 2, timeout=10)
    assert station.ingest is not None and station.store is not None
    await station.ingest.flush()
    assert station.metrics.duplicates_dropped == 1
    # its flag decides nothing and raises no flag: it is kept aside as what it is, an event on
    # a number the station holds for another (test_seq_clash.py), with one alert saying so
    assert [a["kind"] for a in await station.store.alerts()] == ["seq_clash"]
    assert station.metrics.alerts_raised == 1
    (aside,) = await station.store.set_aside_rows()
    assert "seq clash" in aside["reason"] and '"flag"' in aside["item"]


async def test_one_flooding_board_is_throttled_and_the_others_lose_nothing(
    venue_broker, tmp_path: Path, start_station
) -> None:
    station = await start_station(station_config(tmp_path, venue_broker))
    assert station.ingest is not None
    flood_n = 12_000  # past the queue sizing of before (9,000 for this roster's 12 boards)
    honest_n = 40
    async with (
        FakeNode(venue_broker, "node-c", ["5"]) as flooder,
        FakeNode(venue_broker, "node-a", ["1", "2"]) as honest,
    ):
        assert flooder.client is not None

        async def flood() -> None:
            assert flooder.client is not None
            body = json.dumps(envelope("5", 1, node="node-c", game="r1-b5")).encode()
            for _ in range(flood_n // 200):  # QoS 1, 200 in flight at a time, as fast as it goes
                await asyncio.gather(
                    *(flooder.client.publish(f"{R}/board/5/event", body, qos=1) for _ in range(200))
                )

        async def steady() -> None:
            for i in range(honest_n):
                await honest.emit("1" if i % 2 else "2")
                await asyncio.sleep(0.01)

        await asyncio.gather(flood(), steady())
        await wait_until(
            lambda: station.metrics.bad_payloads["flood"] > 0, timeout=20, what="throttled"
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            got = await stored_boards(station)
            if got.get("1", 0) + got.get("2", 0) == honest_n:
                break
            await asyncio.sleep(0.1)
    got = await stored_boards(station)
    assert got.get("1", 0) + got.get("2", 0) == honest_n
    await station.ingest.flush()
    assert station.store is not None
    flood_alerts = [a for a in await station.store.alerts() if a["kind"] == "flood"]
    assert {a["board"] for a in flood_alerts} == {"5"}  # at most one a minute
    status, body = await health(station)
    assert status == 200 and body["tasks_down"] == []
