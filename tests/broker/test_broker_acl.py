"""Each ACL rule both ways, against the real broker (venue ``test``, DESIGN.md §4 topics).

aiomqtt returns normally from a QoS 1 publish the broker denied (trap), so delivery is what
is checked: a watcher with the station's account subscribes to everything, the client under
test publishes, then the station publishes a marker. Mosquitto queues a message to a
subscriber while it handles the PUBLISH, before the PUBACK, so anything the client got
through would reach the watcher before the marker: the wait is bounded by the marker, not a
guess.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable

import aiomqtt
import pytest
from support.broker import collect, mqtt_client

from broker_config import MosquittoProcess

pytestmark = pytest.mark.broker

R = "qz/v1/test"
MARKER = f"{R}/board/marker/cmd"  # the station may write it; no node listens


async def delivered(
    broker: MosquittoProcess, username: str, topics: Iterable[str], **client_kw: object
) -> set[str]:
    """The topics among ``topics`` that ``username``'s publishes got through on."""
    tag = uuid.uuid4().hex
    # One client id per account: the watcher (who reads everything) is never the account
    # under test, or one would take the other's connection over.
    watching = "station" if username == "arb" else "arb"
    async with mqtt_client(broker, watching) as watcher:
        await watcher.subscribe(f"{R}/#", qos=1)
        async with mqtt_client(broker, username, **client_kw) as client:  # type: ignore[arg-type]
            for topic in topics:
                await client.publish(topic, tag, qos=1)
        if watching == "station":
            await watcher.publish(MARKER, tag, qos=1)
        else:
            async with mqtt_client(broker, "station") as station:
                await station.publish(MARKER, tag, qos=1)
        got: set[str] = set()
        async with asyncio.timeout(5):
            async for message in watcher.messages:
                if message.payload != tag.encode():
                    continue  # retained leftovers from other tests
                if str(message.topic) == MARKER:
                    return got
                got.add(str(message.topic))
    raise AssertionError("unreachable")


async def received(
    broker: MosquittoProcess,
    username: str,
    publishes: list[tuple[str, str]],
    subscribe: Iterable[str] = (f"{R}/#",),
) -> set[str]:
    """Topics ``username`` receives when each (publisher, topic) in ``publishes`` is sent.

    The last publish is the marker: it must be one the reader is allowed to see.
    """
    tag = uuid.uuid4().hex
    async with mqtt_client(broker, username) as reader:
        for f in subscribe:
            await reader.subscribe(f, qos=1)
        for publisher, topic in publishes:
            if publisher == username:  # one connection per account: the reader itself
                await reader.publish(topic, tag, qos=1)
                continue
            async with mqtt_client(broker, publisher) as client:
                await client.publish(topic, tag, qos=1)
        marker = publishes[-1][1]
        got: set[str] = set()
        async with asyncio.timeout(5):
            async for message in reader.messages:
                if message.payload != tag.encode():
                    continue
                got.add(str(message.topic))
                if str(message.topic) == marker:
                    return got
    raise AssertionError("unreachable")


# -- nodes ------------------------------------------------------------------------------------
async def test_node_publishes_its_own_boards_topics(venue_broker: MosquittoProcess) -> None:
    own = [f"{R}/board/{b}/{k}" for b in ("1", "2") for k in ("status", "state", "event", "reply")]
    assert await delivered(venue_broker, "node-a", own) == set(own)


async def test_node_cannot_publish_for_another_board(venue_broker: MosquittoProcess) -> None:
    other = [
        f"{R}/board/{b}/{k}"
        for b in ("3", "12", "99")
        for k in ("status", "state", "event", "reply")
    ]
    assert await delivered(venue_broker, "node-a", other) == set()


async def test_node_cannot_forge_commands_or_station_status(
    venue_broker: MosquittoProcess,
) -> None:
    forged = [
        f"{R}/board/1/cmd",
        f"{R}/board/3/cmd",
        f"{R}/venue/cmd",
        f"{R}/station/status",
        f"{R}/board/1/other",
        "qz/v1/other-venue/board/1/event",
        "elsewhere",
    ]
    assert await delivered(venue_broker, "node-a", forged) == set()


async def test_node_reads_its_cmd_venue_cmd_station_status_and_its_boards_word_only(
    venue_broker: MosquittoProcess,
) -> None:
    # its own boards' state and status: what a predecessor left retained (takeover.py)
    got = await received(
        venue_broker,
        "node-a",
        [
            ("node-b", f"{R}/board/3/event"),
            ("node-b", f"{R}/board/3/state"),
            ("node-b", f"{R}/board/3/status"),
            ("station", f"{R}/board/3/cmd"),
            ("station", f"{R}/board/1/cmd"),
            ("station", f"{R}/venue/cmd"),
            ("node-a", f"{R}/board/1/state"),
            ("node-a", f"{R}/board/2/status"),
            ("node-a", f"{R}/board/1/event"),
            ("node-a", f"{R}/board/1/reply"),
            ("station", f"{R}/station/status"),  # the marker: readable
        ],
    )
    assert got == {
        f"{R}/board/1/cmd", f"{R}/venue/cmd", f"{R}/station/status",
        f"{R}/board/1/state", f"{R}/board/2/status",
    }  # fmt: skip


# -- station, arbiters, displays -------------------------------------------------------------
async def test_station_writes_commands_and_its_status(venue_broker: MosquittoProcess) -> None:
    allowed = [f"{R}/board/1/cmd", f"{R}/board/12/cmd", f"{R}/venue/cmd", f"{R}/station/status"]
    assert await delivered(venue_broker, "station", allowed) == set(allowed)


async def test_station_cannot_speak_for_a_board(venue_broker: MosquittoProcess) -> None:
    denied = [f"{R}/board/1/{k}" for k in ("status", "state", "event", "reply")]
    assert await delivered(venue_broker, "station", denied) == set()


async def test_station_reads_everything(venue_broker: MosquittoProcess) -> None:
    got = await received(
        venue_broker,
        "station",
        [
            ("node-c", f"{R}/board/5/event"),
            ("node-b", f"{R}/board/4/reply"),
            ("station", f"{R}/board/5/cmd"),
        ],
    )
    assert got == {f"{R}/board/5/event", f"{R}/board/4/reply", f"{R}/board/5/cmd"}


@pytest.mark.parametrize("username", ["arb", "hall"])
async def test_arbiter_and_display_publish_nothing(
    venue_broker: MosquittoProcess, username: str
) -> None:
    anything = [
        f"{R}/board/1/cmd",
        f"{R}/venue/cmd",
        f"{R}/board/1/state",
        f"{R}/board/1/event",
        f"{R}/station/status",
        f"{R}/board/1/status",
    ]
    assert await delivered(venue_broker, username, anything) == set()


async def test_arbiter_reads_everything(venue_broker: MosquittoProcess) -> None:
    got = await received(
        venue_broker,
        "arb",
        [
            ("node-a", f"{R}/board/2/event"),
            ("station", f"{R}/board/2/cmd"),
            ("node-a", f"{R}/board/2/state"),
        ],
    )
    assert got == {f"{R}/board/2/event", f"{R}/board/2/cmd", f"{R}/board/2/state"}


async def test_display_reads_state_and_status_but_not_events_or_commands(
    venue_broker: MosquittoProcess,
) -> None:
    got = await received(
        venue_broker,
        "hall",
        [
            ("node-c", f"{R}/board/6/event"),
            ("node-c", f"{R}/board/6/reply"),
            ("station", f"{R}/board/6/cmd"),
            ("station", f"{R}/venue/cmd"),
            ("node-c", f"{R}/board/6/state"),
            ("station", f"{R}/station/status"),
            ("node-c", f"{R}/board/6/status"),
        ],
        subscribe=[f"{R}/#", f"{R}/board/6/event", f"{R}/board/+/cmd"],
    )
    assert got == {f"{R}/board/6/state", f"{R}/station/status", f"{R}/board/6/status"}


# -- who may connect -------------------------------------------------------------------------
async def test_anonymous_client_is_refused(venue_broker: MosquittoProcess) -> None:
    with pytest.raises(aiomqtt.MqttError, match="Not authorized"):
        async with mqtt_client(venue_broker, None):
            pass


@pytest.mark.parametrize(
    ("username", "password"), [("node-a", "wrong"), ("node-a", ""), ("nobody", "x")]
)
async def test_wrong_password_or_unknown_user_is_refused(
    venue_broker: MosquittoProcess, username: str, password: str
) -> None:
    with pytest.raises(aiomqtt.MqttError, match="Not authorized"):
        async with mqtt_client(venue_broker, username, password=password):
            pass


async def test_another_accounts_password_does_not_work(venue_broker: MosquittoProcess) -> None:
    station_password = venue_broker.credentials("station")[1]
    with pytest.raises(aiomqtt.MqttError, match="Not authorized"):
        async with mqtt_client(venue_broker, "node-a", password=station_password):
            pass


@pytest.mark.parametrize("client_id", ["station", "node-b", "arb", "hall"])
async def test_choosing_another_client_id_gains_no_rights(
    venue_broker: MosquittoProcess, client_id: str
) -> None:
    # The %c trap: with `pattern ... %c` rules a node calling itself "node-b" would write
    # node-b's boards. Rights here follow the username only.
    forged = [f"{R}/board/3/event", f"{R}/board/3/state", f"{R}/board/1/cmd", f"{R}/venue/cmd"]
    own = [f"{R}/board/1/event"]
    got = await delivered(venue_broker, "node-a", forged + own, identifier=client_id)
    assert got == set(own)


async def test_display_with_the_station_client_id_cannot_command(
    venue_broker: MosquittoProcess,
) -> None:
    got = await delivered(
        venue_broker, "hall", [f"{R}/board/1/cmd", f"{R}/venue/cmd"], identifier="station"
    )
    assert got == set()


async def test_collect_helper_is_bounded(venue_broker: MosquittoProcess) -> None:
    async with mqtt_client(venue_broker, "hall") as client:
        await client.subscribe(f"{R}/board/none/state", qos=1)
        assert await collect(client, within=0.2) == []
