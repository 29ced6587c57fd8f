"""Identity (issue 12, docs/security.md): no account can connect with a client id that belongs
to another account. Mosquitto 2.0.11's ``use_username_as_clientid`` on every listener, from
``broker-config``: a connection's client id is its username, whatever it asked for; a node opens
one account per board (``{node}.{board}``, the node's password)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiomqtt
import httpx
import pytest
from support.broker import collect, mqtt_client
from support.station import ARBITER, ARBITER_PASSWORD, FakeNode, station_config, wait_until

from broker_config import MosquittoProcess

pytestmark = pytest.mark.broker
R = "qz/v1/test"


async def test_every_listener_makes_the_client_id_the_username(
    venue_broker: MosquittoProcess,
) -> None:
    lines = venue_broker.files.conf.read_text().splitlines()
    listeners = [i for i, ln in enumerate(lines) if ln.startswith("listener ")]
    assert len(listeners) == 2  # mqtt and websockets
    for n, start in enumerate(listeners):
        end = listeners[n + 1] if n + 1 < len(listeners) else len(lines)
        assert "use_username_as_clientid true" in lines[start:end]


async def test_the_display_with_the_stations_client_id_cannot_take_the_station_off(
    broker_factory, tmp_path: Path, start_station
) -> None:
    venue_broker = broker_factory()  # its own: no other test's retained statuses and alerts
    station = await start_station(station_config(tmp_path, venue_broker))
    assert station.collector is not None
    connections = station.collector.connections
    samples: list[bool] = []
    async with httpx.AsyncClient(base_url=station.http_url, timeout=5) as client:
        for _ in range(10):
            for transport in ("tcp", "websockets"):
                async with mqtt_client(
                    venue_broker, "hall", identifier="station", transport=transport
                ) as spoof:
                    await spoof.subscribe(f"{R}/board/+/state", qos=1)
                    await asyncio.sleep(0.05)
                    samples.append((await client.get("/healthz")).json()["connected"])
        assert all(samples) and len(samples) == 20
        assert station.collector.connections == connections  # never dropped, never reconnected
        # and the arbiter still hears of a flag
        async with FakeNode(venue_broker, "node-a", ["1"]) as node:
            await node.emit("1", type="flag", data={"side": "red"})
            await wait_until(lambda: station.metrics.alerts_raised >= 1, timeout=5)
        # alerts are arbiter-only data (issue 12, web): read them as the arbiter does
        login = {"username": ARBITER, "password": ARBITER_PASSWORD}
        assert (await client.post("/api/auth/login", json=login)).status_code == 200
        alerts = (await client.get("/api/alerts")).json()["alerts"]
    assert [(a["kind"], a["board"]) for a in alerts] == [("flag", "1")]


async def test_a_node_account_cannot_knock_another_nodes_board_off(
    venue_broker: MosquittoProcess,
) -> None:
    password = venue_broker.credentials("node-b")[1]
    victim_id = "node-b.3"  # the client id (= username) of node-b's board 3 connection
    async with (
        mqtt_client(venue_broker, "arb") as watcher,
        mqtt_client(venue_broker, victim_id, password=password) as victim,
    ):
        await watcher.subscribe(f"{R}/board/3/event", qos=1)
        for identifier in (victim_id, "node-b", "station"):
            for attacker in ("node-a", "node-a.1"):
                pw = venue_broker.credentials("node-a")[1]
                async with mqtt_client(
                    venue_broker, attacker, password=pw, identifier=identifier
                ) as spoof:
                    await spoof.publish(f"{R}/board/1/event", b"x", qos=1)
        # the victim was never dropped: its next event still goes through
        tag = json.dumps({"t": time.time()}).encode()
        await victim.publish(f"{R}/board/3/event", tag, qos=1)
        got = await collect(watcher, 1, within=5)
    assert [bytes(m.payload) for m in got] == [tag]


async def test_a_board_account_writes_only_its_own_board(venue_broker: MosquittoProcess) -> None:
    password = venue_broker.credentials("node-a")[1]
    async with mqtt_client(venue_broker, "station") as watcher:
        await watcher.subscribe(f"{R}/board/+/event", qos=1)
        async with mqtt_client(venue_broker, "node-a.1", password=password) as board1:
            await board1.publish(f"{R}/board/2/event", b"not mine", qos=1)  # node-a's, not 1's
            await board1.publish(f"{R}/board/1/event", b"mine", qos=1)
        got = await collect(watcher, 1, within=5)
    assert [(str(m.topic), bytes(m.payload)) for m in got] == [(f"{R}/board/1/event", b"mine")]


async def test_a_board_account_needs_its_nodes_password(venue_broker: MosquittoProcess) -> None:
    wrong = venue_broker.credentials("node-b")[1]
    with pytest.raises(aiomqtt.MqttError):
        async with mqtt_client(venue_broker, "node-a.1", password=wrong):
            pass


async def test_control_without_it_any_account_takes_a_client_id_over(broker_factory) -> None:
    # The trap itself (plain Mosquitto), so the tests above are known to catch it.
    broker = broker_factory()
    broker.terminate()
    conf = broker.files.conf.read_text().replace("use_username_as_clientid true", "")
    broker.files.conf.write_text(conf)
    broker.start()
    dropped = False
    async with mqtt_client(broker, "station", identifier="the-station") as station:
        async with mqtt_client(broker, "hall", identifier="the-station"):
            await asyncio.sleep(0.3)
        try:
            await station.publish(f"{R}/venue/cmd", b"x", qos=1, timeout=2)
        except aiomqtt.MqttError:
            dropped = True
    assert dropped
