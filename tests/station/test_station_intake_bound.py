"""The station's receive side is bounded under overload (issue 18): when the writer cannot keep
up, messages wait at the broker — not in the station's memory — and nothing is lost.

Real Mosquitto, real SQLite store; the writer is simply not started until the burst is in, the
most overloaded a station can be."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.station import FakeNode, station_config

from venue_station.intake.collector import RECEIVE_WINDOW, WRITER_QUEUE_BOUND, Collector
from venue_station.intake.ingest import Ingest
from venue_station.live.fanout import EventFanout
from venue_station.live.metrics import Metrics
from venue_station.store.database import Store
from wire_contract.aiomqtt_adapter import paho_client
from wire_contract.messages import Topics

pytestmark = pytest.mark.broker
# One read callback may decode a few packets more after the gate closes (paho reads up to
# its in-flight count per call): a handful, never the backlog.
READ_OVERSHOOT = 16
BURST = WRITER_QUEUE_BOUND + 3 * RECEIVE_WINDOW + 1000


@dataclass
class Intake:
    """A station's receive side on a real broker: store, ingest, collector; no writer yet."""

    store: Store
    ingest: Ingest
    collector: Collector
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    def start_writer(self) -> None:
        self.tasks.append(asyncio.create_task(self.ingest.writer.run()))


@contextlib.asynccontextmanager
async def stalled_intake(broker: Any, tmp_path: Path) -> AsyncIterator[Intake]:
    config = station_config(tmp_path, broker)
    store = await Store.open(f"sqlite:///{tmp_path / 'station.db'}")
    ingest = Ingest(store, venue=config.venue, metrics=Metrics(), hub=EventFanout())
    await ingest.load()
    collector = Collector(config.broker, Topics(config.venue), ingest, session=1)
    intake = Intake(store, ingest, collector, [asyncio.create_task(collector.run())])
    try:
        async with asyncio.timeout(10):
            await collector.connected.wait()
        yield intake
    finally:
        for task in intake.tasks:
            task.cancel()
        await asyncio.gather(*intake.tasks, return_exceptions=True)
        await store.close()


async def test_a_stalled_writer_leaves_the_backlog_at_the_broker(venue_broker, tmp_path: Path):
    async with stalled_intake(venue_broker, tmp_path) as intake:
        store, ingest, collector = intake.store, intake.ingest, intake.collector
        boards = [str(b) for b in range(5, 13)]
        async with FakeNode(venue_broker, "node-c", boards) as node:
            for i in range(BURST):
                await node.emit(boards[i % len(boards)])
            # The burst is at the broker; the station takes only what its writer has room for.
            async with asyncio.timeout(20):
                while ingest.pending() < WRITER_QUEUE_BOUND:
                    await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)  # give an unbounded intake every chance to show itself
            client = collector._client
            assert client is not None
            in_memory = ingest.pending() + len(client.messages)
            assert ingest.pending() <= WRITER_QUEUE_BOUND + 1
            assert len(client.messages) <= RECEIVE_WINDOW
            assert in_memory < BURST - RECEIVE_WINDOW  # the rest waits at the broker
            # The writer starts: everything arrives, once.
            intake.start_writer()
            async with asyncio.timeout(60):
                while await store.count_events() < BURST:
                    await asyncio.sleep(0.2)
        assert await store.count_events() == BURST


async def test_a_resumed_session_sends_its_backlog_no_faster_than_the_station_reads(
    venue_broker, tmp_path: Path
):
    """The station's connection breaks while messages are in flight to it (a missed keepalive
    under load, a network blip) and a backlog waits at the broker: on resuming the session
    Mosquitto 2.0 sends the queue at once, past the Receive Maximum (seen: 12,593 messages in
    the client's queue, 1 GB after a 5-minute overload). The station stops reading its socket
    instead, so the rest waits in TCP and at the broker."""
    # Under the flood gate's burst (1,500 per board) on each of the 8 boards.
    burst = WRITER_QUEUE_BOUND + 5 * RECEIVE_WINDOW
    boards = [str(b) for b in range(5, 13)]
    async with stalled_intake(venue_broker, tmp_path) as intake:
        store, ingest, collector = intake.store, intake.ingest, intake.collector
        async with FakeNode(venue_broker, "node-c", boards) as node:
            for i in range(burst):
                await node.emit(boards[i % len(boards)])
            async with asyncio.timeout(20):  # the writer is stalled: the window is in flight
                while ingest.pending() < WRITER_QUEUE_BOUND:
                    await asyncio.sleep(0.05)
            client = collector._client
            assert client is not None
            paho_client(client).socket().shutdown(socket.SHUT_RDWR)  # the connection breaks
            # The writer moves again; the collector resumes its session and the broker sends
            # what it queued meanwhile. Look at the receive queue until everything is stored.
            intake.start_writer()
            most = 0
            async with asyncio.timeout(90):
                while await store.count_events() < burst:
                    await asyncio.sleep(0.02)
                    client = collector._client
                    if client is not None:
                        most = max(most, len(client.messages))
            assert collector.connections >= 2  # it did resume
            assert most <= RECEIVE_WINDOW + READ_OVERSHOOT
        assert await store.count_events() == burst
