"""Pins what wire_contract/aiomqtt_adapter.py relies on in aiomqtt's private parts, so an
upgrade that moves one fails here, by name, before a node or a station misbehaves."""

from __future__ import annotations

import asyncio
import inspect
import math

import aiomqtt
import paho.mqtt.client as paho
import pytest
from support.broker import VENUE, collect, mqtt_client

from wire_contract.aiomqtt_adapter import (
    GONE,
    CancellableClient,
    end_queue_when_gone,
    gate_reading,
    link_gone,
    paho_client,
    publish_now,
    set_connect_timeout,
    socket_reader,
)
from wire_contract.topics import Topics

TOPICS = Topics(VENUE)


async def test_under_aiomqtt_is_a_paho_client_with_the_public_api_we_use() -> None:
    client = CancellableClient("127.0.0.1", 1)
    inner = paho_client(client)
    assert isinstance(inner, paho.Client), "aiomqtt.Client._client is no longer paho's client"
    for name in ("manual_ack_set", "ack", "socket", "loop_read", "loop_write"):
        assert callable(getattr(inner, name)), f"paho.Client.{name}"
    assert list(inspect.signature(inner.ack).parameters) == ["mid", "qos"]
    set_connect_timeout(client, 1.5)
    assert inner.connect_timeout == 1.5


async def test_aiomqtt_waits_through_wait_for_which_we_override() -> None:
    params = list(inspect.signature(aiomqtt.Client._wait_for).parameters)
    assert params == ["self", "fut", "timeout"], params
    for name in ("subscribe", "unsubscribe", "publish", "__aenter__", "__aexit__"):
        source = inspect.getsource(getattr(aiomqtt.Client, name))
        assert "self._wait_for(" in source, f"aiomqtt.Client.{name} no longer waits via _wait_for"
    assert "asyncio.wait_for" in inspect.getsource(aiomqtt.Client._wait_for), (
        "aiomqtt's own _wait_for changed: is the override (gh-86296) still needed?"
    )
    client = CancellableClient("127.0.0.1", 1, timeout=math.inf)
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    done.set_result(3)
    assert await client._wait_for(done, timeout=None) == 3  # math.inf: no timeout


async def test_aiomqtt_hands_paho_the_socket_callbacks_we_override() -> None:
    client = CancellableClient("127.0.0.1", 1)
    inner = paho_client(client)
    assert inner.on_socket_open == client._on_socket_open
    assert inner.on_socket_register_write == client._on_socket_register_write
    assert client._on_socket_open.__func__ is CancellableClient._on_socket_open  # type: ignore[attr-defined]
    assert client._loop is asyncio.get_running_loop()
    assert isinstance(client._disconnected, asyncio.Future)
    source = inspect.getsource(aiomqtt.Client._on_socket_open)
    assert "add_reader" in source and "loop_read" in source, (
        "aiomqtt no longer reads the socket through a loop reader calling loop_read"
    )


@pytest.mark.broker
async def test_the_reader_we_keep_reads_as_aiomqtts_own_once_it_is_removed(venue_broker) -> None:
    """The read gate's pause and resume: remove aiomqtt's reader (asyncio's public
    ``remove_reader``), nothing is read; add the adapter's reader back, the message comes."""
    loop = asyncio.get_running_loop()
    async with (
        mqtt_client(venue_broker, "station") as station,
        mqtt_client(venue_broker, "node-a") as node,
    ):
        reader = socket_reader(station)
        sock = paho_client(station).socket()
        assert reader is not None and sock is not None
        # one board's events: not retained, so nothing another test left on the broker comes
        await station.subscribe(TOPICS.event("1"), qos=1)
        assert loop.remove_reader(sock.fileno()), "aiomqtt's reader was not on the socket"
        await node.publish(TOPICS.event("1"), b"hello", qos=0)
        await asyncio.sleep(0.5)
        assert len(station.messages) == 0  # paused: nothing was read
        loop.add_reader(sock.fileno(), reader)
        got = await collect(station, 1, within=3)
        assert [m.payload for m in got] == [b"hello"]


@pytest.mark.broker
async def test_our_reader_replaces_aiomqtts_and_reads_a_burst_a_turn(venue_broker) -> None:
    """The adapter's reader takes aiomqtt's place on the socket (issue 30): it reads every packet
    the socket holds, up to READ_BURST, in one turn of the loop, asking the read gate after each
    packet. Were aiomqtt's own reader (one packet a turn) still the socket's, the gate would
    never be asked (benchmarks/ingest.py measures what the bursts save)."""
    asked: list[int] = []
    async with (
        mqtt_client(venue_broker, "station") as station,
        mqtt_client(venue_broker, "node-a") as node,
    ):
        await station.subscribe(TOPICS.event("2"), qos=1)
        gate_reading(station, lambda: asked.append(len(station.messages)) is None)
        for i in range(60):
            await node.publish(TOPICS.event("2"), f"{i}".encode(), qos=0)
        got = await collect(station, 60, within=5)
        assert [m.payload for m in got] == [f"{i}".encode() for i in range(60)]
        assert asked, "the adapter's reader never ran: aiomqtt's own reads the socket"


@pytest.mark.broker
async def test_a_gone_link_puts_its_marker_in_the_message_queue(broker_factory) -> None:
    """The collector waits on its message queue itself: aiomqtt's ``_disconnected`` future,
    done when the link is gone, puts GONE behind what was received (end_queue_when_gone)."""
    broker = broker_factory()
    async with mqtt_client(broker, "station") as station:
        queue: asyncio.Queue[object] = asyncio.Queue()
        end_queue_when_gone(station, queue)
        assert queue.empty()
        broker.close()  # the broker dies: the client's link with it
        assert await asyncio.wait_for(queue.get(), 10) is GONE
        error = link_gone(station)
        assert isinstance(error, aiomqtt.MqttError)
        with pytest.raises(aiomqtt.MqttError):
            raise error


async def test_paho_says_as_we_read_it_whether_it_runs_a_callback() -> None:
    """``write_at_once`` writes in the publishing call only outside paho's callbacks, told by
    paho's ``_in_callback_mutex`` as paho's own ``_packet_queue`` tells it."""
    inner = paho_client(CancellableClient("127.0.0.1", 1))
    mutex = inner._in_callback_mutex
    assert mutex.acquire(False), "paho's callback mutex is held with no callback running"
    mutex.release()
    source = inspect.getsource(paho.Client._packet_queue)
    assert "_in_callback_mutex.acquire(False)" in source, (
        "paho no longer tells a callback by _in_callback_mutex before writing in the caller"
    )


async def test_aiomqtt_hands_paho_the_publish_callback_we_extend() -> None:
    client = CancellableClient("127.0.0.1", 1)
    assert paho_client(client).on_publish == client._on_publish
    assert client._on_publish.__func__ is CancellableClient._on_publish  # type: ignore[attr-defined]
    params = list(inspect.signature(aiomqtt.Client._on_publish).parameters)
    assert params == ["self", "client", "userdata", "mid", "reason_code", "properties"], params


@pytest.mark.broker
@pytest.mark.parametrize("at_once", [True, False])
async def test_publish_now_is_on_the_socket_in_its_call_with_write_at_once(
    venue_broker, at_once: bool
) -> None:
    """With ``write_at_once`` paho has nothing left to write when ``publish_now`` returns;
    without, the packet waits for the loop. Either way the future ends at the PUBACK and the
    message arrives."""
    async with (
        mqtt_client(venue_broker, "station") as station,
        mqtt_client(venue_broker, "node-a") as node,
    ):
        node.write_at_once = at_once  # type: ignore[attr-defined]
        await station.subscribe(TOPICS.event("1"), qos=1)
        acks = []
        for i in range(3):
            acks.append(publish_now(node, TOPICS.event("1"), f"{i}".encode()))
            assert paho_client(node).want_write() is not at_once
        await asyncio.wait_for(asyncio.gather(*acks), 5)
        got = await collect(station, 3, within=5)
        assert [m.payload for m in got] == [b"0", b"1", b"2"]
        assert not node._acks  # type: ignore[attr-defined]
