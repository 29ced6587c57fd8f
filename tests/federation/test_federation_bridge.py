"""The venue → centre bridge (issue 18): written from the roster's [federation] table, proven
against a real Mosquitto bridged to a real nats-server MQTT listener."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import nats
import pytest
from support.broker import STANDARD_NODES, mqtt_client
from support.nats import HUB_USER, NatsCentre, small_plan

from broker_config import MosquittoProcess, Roster, RosterError
from broker_config.mosquitto_conf import ConfPaths, render_conf
from federation_hub.streams import ensure_streams

Factory = Callable[..., MosquittoProcess]
PATHS = ConfPaths(
    password_file=__import__("pathlib").Path("/p"),
    acl_file=__import__("pathlib").Path("/a"),
    persistence_dir=__import__("pathlib").Path("/d"),
    log_file=__import__("pathlib").Path("/l"),
)


def fed_roster(venue: str, centre: NatsCentre, **extra: object) -> Roster:
    user, password = centre.users.venues[venue]
    return Roster.build(
        venue=venue,
        nodes=STANDARD_NODES,
        federation={"urls": centre.mqtt_urls(), "username": user, "password": password, **extra},
    )


def test_bridge_lines_are_out_but_the_hubs_asks_mqtt311_no_private() -> None:
    roster = Roster.build(
        venue="va",
        nodes={"n": ["1"]},
        federation={
            "urls": ["mqtt://10.0.0.5:1883", "mqtt://10.0.0.6:1883"],
            "username": "u",
            "password": "p",
            "prefix": "league/2026",
        },
    )
    conf = render_conf(roster, PATHS)
    assert "bridge_protocol_version mqttv311" in conf
    assert "try_private false" in conf
    assert "address 10.0.0.5:1883 10.0.0.6:1883" in conf
    topics = [line for line in conf.splitlines() if line.startswith("topic ")]
    assert topics == [
        f"topic board/+/{k} out 1 qz/v1/va/ league/2026/qz/v1/va/"
        for k in ("status", "state", "event")
    ] + [
        "topic station/decision out 1 qz/v1/va/ league/2026/qz/v1/va/",
        "topic station/record/+ out 1 qz/v1/va/ league/2026/qz/v1/va/",
        # the mending: the hub's asks in (read by the station alone), its copies out as events
        "topic station/resend in 0 qz/v1/va/ league/2026/qz/v1/va/",
        "topic resent/board/+/event out 1 qz/v1/va/ league/2026/qz/v1/va/",
    ]
    inbound = [t for t in topics if " out " not in t]
    assert inbound == ["topic station/resend in 0 qz/v1/va/ league/2026/qz/v1/va/"]
    assert not any(" both " in t or "cmd" in t for t in topics)


@pytest.mark.parametrize(
    ("federation", "key"),
    [
        ({"urls": ["http://x:1"], "username": "u", "password": "p"}, "federation.urls[0]"),
        ({"urls": ["mqtt://x"], "username": "u", "password": "p"}, "federation.urls[0]"),
        ({"urls": [], "username": "u", "password": "p"}, "federation.urls"),
        ({"urls": ["mqtt://x:1"] * 9, "username": "u", "password": "p"}, "federation.urls"),
        ({"urls": ["mqtts://x:1"], "username": "u", "password": "p"}, "federation"),
        (
            {"urls": ["mqtt://x:1"], "username": "u", "password": "p", "prefix": "a.b"},
            "federation.prefix",
        ),
        (
            {"urls": ["mqtt://x:1"], "username": "u", "password": "p", "prefix": "a/#"},
            "federation.prefix",
        ),
        ({"urls": ["mqtt://x:1"], "username": "u u", "password": "p"}, "federation.username"),
        (
            {"urls": ["mqtt://x:1"], "username": "u", "password": "p", "extra": 1},
            "federation.extra",
        ),
    ],
)
def test_bad_federation_table_names_the_key(federation: dict[str, object], key: str) -> None:
    with pytest.raises(RosterError) as err:
        Roster.build(venue="va", nodes={"n": ["1"]}, federation=federation)
    assert any(p.key == key for p in err.value.problems), err.value


def test_tls_centre_writes_bridge_tls(tmp_path) -> None:
    text = """
venue = "va"
[[node]]
id = "n"
boards = ["1"]
[federation]
urls = ["mqtts://centre.example:8883"]
username = "venue-va"
password = "s3cret"
cafile = "ca.pem"
certfile = "va.pem"
keyfile = "va.key"
"""
    roster = Roster.from_toml(text, base_dir=tmp_path)
    conf = render_conf(roster, PATHS)
    assert f"bridge_cafile {tmp_path / 'ca.pem'}" in conf
    assert f"bridge_certfile {tmp_path / 'va.pem'}" in conf
    assert "bridge_insecure false" in conf


async def test_real_bridge_carries_status_state_event_out_and_no_command_in(
    broker_factory: Factory,
) -> None:
    centre = NatsCentre.start(nodes=1, venues={"va": ("venue-va", "pw-va")})
    try:
        nc = await nats.connect(centre.urls, user=HUB_USER[0], password=HUB_USER[1])
        js = nc.jetstream()
        await ensure_streams(js, small_plan())
        seen: list[str] = []

        async def on_msg(msg: nats.aio.msg.Msg) -> None:
            seen.append(msg.subject)

        await nc.subscribe("fed.>", cb=on_msg)
        venue = broker_factory(fed_roster("va", centre))
        # A command published at the centre on the venue's command topic must never arrive.
        async with mqtt_client(venue, "node-a") as node:
            await node.subscribe("qz/v1/va/board/1/cmd", qos=1)
            async with asyncio.timeout(20):  # the bridge connects in the background
                while "fed.qz.v1.va.board.1.status" not in seen:
                    await node.publish(
                        "qz/v1/va/board/1/status",
                        json.dumps(
                            {"state": "online", "node": "node-a", "session": 1, "ts": 1}
                        ).encode(),
                        qos=1,
                        retain=True,
                    )
                    await asyncio.sleep(0.3)
            for seq in range(1, 11):
                await node.publish(
                    "qz/v1/va/board/1/event", json.dumps({"seq": seq}).encode(), qos=1
                )
            await node.publish("qz/v1/va/board/1/state", b'{"seq": 10}', qos=1, retain=True)
            await node.publish("qz/v1/va/board/1/reply", b'{"txn": "x"}', qos=1)
            await nc.publish("fed.qz.v1.va.board.1.cmd", b'{"cmd": "reset"}')
            await nc.flush()
            async with asyncio.timeout(10):
                while (await js.stream_info("QZ_FED_EVENTS")).state.messages < 10:
                    await asyncio.sleep(0.1)
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(1.0):
                    async for msg in node.messages:
                        pytest.fail(f"a message came in from the centre: {msg.topic}")
        assert "fed.qz.v1.va.board.1.state" in seen
        assert not any(s.endswith((".reply", ".cmd")) and "va.board.1.reply" in s for s in seen)
        assert (await js.stream_info("QZ_FED_STATE")).state.messages == 2  # state + status
        await nc.close()
    finally:
        centre.close()


async def test_centre_refuses_a_venue_publishing_as_another(broker_factory: Factory) -> None:
    # Venue va's centre account may publish only under fed.qz.v1.va: a bridge misconfigured with
    # another venue's id puts nothing into the federation's streams.
    centre = NatsCentre.start(
        nodes=1, venues={"va": ("venue-va", "pw-va"), "vb": ("venue-vb", "pw-vb")}
    )
    try:
        nc = await nats.connect(centre.urls, user=HUB_USER[0], password=HUB_USER[1])
        js = nc.jetstream()
        await ensure_streams(js, small_plan())
        roster = Roster.build(
            venue="vb",
            nodes=STANDARD_NODES,
            federation={"urls": centre.mqtt_urls(), "username": "venue-va", "password": "pw-va"},
        )
        venue = broker_factory(roster)
        async with mqtt_client(venue, "node-a") as node:
            for seq in range(1, 30):
                await node.publish(
                    "qz/v1/vb/board/1/event", json.dumps({"seq": seq}).encode(), qos=1
                )
                await asyncio.sleep(0.1)
        assert (await js.stream_info("QZ_FED_EVENTS")).state.messages == 0
        await nc.close()
    finally:
        centre.close()
