"""The hub's memory is bounded under overload (issue 18): when its store cannot keep up, the
hub holds at most two batches per event reader — one being stored, one fetched ahead — and
the rest waits in JetStream; once the store moves again every event is stored, once.

Real nats-server and PostgreSQL; the store is stalled by a real lock on ``fed_events`` held by
another connection (the most overloaded a hub can be), not by a stand-in. The bound is read
from the server's own count of the consumer's unacked messages."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import nats
import pytest
from support.nats import HUB_USER, NatsCentre, small_plan
from support.station import envelope

from federation_hub.consumer import HubConsumer
from federation_hub.store import HubStore
from federation_hub.streams import EVENTS_DURABLE, EVENTS_STREAM, ensure_streams

pytestmark = pytest.mark.postgres
BATCH, WORKERS = 50, 2
HELD = 2 * BATCH * WORKERS  # the bound: two batches per reader
BURST = 3000  # well past both the bound and the consumer's max_ack_pending (1000)


async def test_a_stalled_store_leaves_the_backlog_in_jetstream(
    nats_centre: NatsCentre, hub_db: str
) -> None:
    store = await HubStore.open(hub_db)  # the schema exists before the lock is taken
    hub = HubConsumer(
        servers=nats_centre.urls,
        user=HUB_USER[0],
        password=HUB_USER[1],
        store=store,
        plan=small_plan(),
        batch=BATCH,
        workers=WORKERS,
    )
    locker = await asyncpg.connect(hub_db)
    stall = locker.transaction()
    await stall.start()
    await locker.execute("LOCK TABLE fed_events IN ACCESS EXCLUSIVE MODE")
    nc = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    js = nc.jetstream()
    task: asyncio.Task[None] | None = None
    try:
        await ensure_streams(js, small_plan())
        # The burst waits in the stream before the hub starts, so every fetch is a full batch
        # (a fetch racing the publisher may return fewer, and the count would fall short).
        boards = [str(b) for b in range(1, 11)]
        for i in range(BURST):
            board = boards[i % len(boards)]
            body = json.dumps(envelope(board, i // len(boards) + 1)).encode()
            await nc.publish(f"fed.qz.v1.va.board.{board}.event", body)
        await nc.flush()
        task = asyncio.create_task(hub.run())
        await asyncio.wait_for(hub.ready.wait(), 15)

        async def held() -> int:
            info = await js.consumer_info(EVENTS_STREAM, EVENTS_DURABLE)
            return int(info.num_ack_pending)

        async with asyncio.timeout(15):  # every reader has its two batches
            while await held() < HELD:
                await asyncio.sleep(0.05)
        # Give an unbounded reader every chance to show itself: 20 more looks, each bounded.
        for _ in range(20):
            await asyncio.sleep(0.1)
            assert await held() <= HELD
        info = await js.consumer_info(EVENTS_STREAM, EVENTS_DURABLE)
        assert info.num_pending >= BURST - HELD  # the rest waits in the stream
        assert hub.counters.stored == 0

        await stall.rollback()  # the store moves again: everything arrives, once
        async with asyncio.timeout(60):
            while hub.counters.stored < BURST:
                await asyncio.sleep(0.1)
        keys = await store.event_keys()
        assert len(keys) == BURST
        assert set(keys) == {
            ("va", boards[i % len(boards)], 1, i // len(boards) + 1) for i in range(BURST)
        }
    finally:
        await nc.close()
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await locker.close()
        await store.close()
