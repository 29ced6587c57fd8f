"""A node must stop within a bound in every state: a stop (a cancellation) that arrives in the
same loop pass as the broker's acknowledgement is not lost (Python 3.11's ``asyncio.wait_for``
lost it, and a node stopped just as its SUBACK came back waited forever). Node, station and
benchmarks all connect through ``wire_contract.broker.mqtt_client``, which builds this client."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace

import aiomqtt
import pytest

from wire_contract.broker import BrokerSettings, CancellableClient, mqtt_client


async def _cancelled_as_it_completes(client: aiomqtt.Client) -> asyncio.Task[int]:
    loop = asyncio.get_running_loop()
    ack: asyncio.Future[int] = loop.create_future()
    task = asyncio.create_task(client._wait_for(ack, timeout=5))
    await asyncio.sleep(0)  # the task now waits for the acknowledgement
    ack.set_result(1)  # the acknowledgement is in ...
    task.cancel()  # ... and the stop arrives in the same loop pass
    return task


async def test_a_stop_that_meets_an_acknowledgement_is_not_lost() -> None:
    client = CancellableClient("127.0.0.1", 1)  # never connected: only its wait is exercised
    task = await _cancelled_as_it_completes(client)
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_every_side_connects_with_it() -> None:
    client = mqtt_client(BrokerSettings(), identifier="node-a.1")  # built, not connected
    assert isinstance(client, CancellableClient)


async def test_the_tests_own_clients_use_it_too() -> None:
    from support.broker import mqtt_client as test_client

    client = test_client(SimpleNamespace(host="127.0.0.1", port=1), None)  # type: ignore[arg-type]
    task = await _cancelled_as_it_completes(client)
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_wait_past_its_timeout_is_an_mqtt_error() -> None:
    client = CancellableClient("127.0.0.1", 1)
    never: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    with pytest.raises(aiomqtt.MqttError, match="timed out"):
        await client._wait_for(never, timeout=0.01)
    assert never.cancelled()  # nothing is left waiting


@pytest.mark.broker
async def test_a_publish_on_a_connection_that_just_died_logs_no_error(
    broker_factory: object,
) -> None:
    """The broker dies while the loop is busy elsewhere; the next publish asks for a writer
    on a socket paho closes before the loop registers it. aiomqtt's own client logged an
    asyncio ERROR (EBADF) for it: every station stopped just after its broker did. The
    session's ``fail_on_error_log`` fixture fails this test on such a record."""
    from support.broker import mqtt_client as test_client

    broker = broker_factory()  # type: ignore[operator]

    async def read(client: aiomqtt.Client) -> None:  # as every real client does: it learns
        with contextlib.suppress(aiomqtt.MqttError):  # of the disconnection here
            async for _ in client.messages:
                pass

    async with test_client(broker, "station") as client:
        reader = asyncio.create_task(read(client))
        broker.terminate()  # synchronous: the loop does not run, the client has not noticed yet
        # One pass: the broker's goodbye is now readable, and paho's reader runs right after
        # this task's step, in the same pass, closing the socket before the writer is added.
        await asyncio.sleep(0)
        with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
            async with asyncio.timeout(1.0):
                await client.publish("qz/v1/test/station/status", b"{}", qos=1)
        await asyncio.sleep(0.2)  # the deferred registration has run by now
        async with asyncio.timeout(5):
            await reader
