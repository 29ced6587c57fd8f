"""`qizhong hub` against a real nats-server (JetStream) and PostgreSQL (issue 18): stored once
per (venue, board, session, seq), acked only after the commit, gaps detected, bad input counted."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import nats
import pytest
from support.nats import HUB_USER, NatsCentre, small_plan
from support.station import envelope

from federation_hub.consumer import HubConsumer
from federation_hub.store import HubStore

pytestmark = pytest.mark.postgres


def state(board: str, seq: int, session: int = 1) -> dict[str, Any]:
    return {
        "v": 1,
        "board": board,
        "node": "node-a",
        "session": session,
        "seq": seq,
        "ts": 1000 + seq,
        "game": "r1-b1",
        "tc": "30m+5s",
        "phase": "running",
        "running": "red",
        "red_ms": 1_700_000,
        "black_ms": 1_800_000,
        "moves": {"red": 1, "black": 0},
        "flag": None,
        "fouls": {"red": 0, "black": 0},
        "result": None,
    }


async def wait_for(predicate, within: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(within):
        while not await predicate():
            await asyncio.sleep(0.1)


async def test_hub_stores_each_event_once_and_detects_gaps(
    nats_centre: NatsCentre, hub_db: str
) -> None:
    store = await HubStore.open(hub_db)
    hub = HubConsumer(
        servers=nats_centre.urls,
        user=HUB_USER[0],
        password=HUB_USER[1],
        store=store,
        plan=small_plan(),
        batch=50,
    )
    task = asyncio.create_task(hub.run())
    nc = await nats.connect(nats_centre.urls, user="venue-va", password="pw-va")
    try:
        await asyncio.wait_for(hub.ready.wait(), 15)
        js = nc  # the venue's account may publish (as its bridge does), not use JetStream's API
        subj = "fed.qz.v1.va.board.{}.event"
        for seq in [1, 2, 3, 3, 2, 5, 6]:  # 3 and 2 twice (a bridge re-send); 4 missing
            await js.publish(subj.format("1"), json.dumps(envelope("1", seq)).encode())
        for seq in range(1, 4):
            await js.publish(subj.format("2"), json.dumps(envelope("2", seq)).encode())
        await js.publish(subj.format("2"), b"not json")
        await js.publish(subj.format("3"), json.dumps(envelope("9", 1)).encode())  # wrong board
        big = envelope("1", 2**60)
        await js.publish(subj.format("1"), json.dumps(big).encode())
        await js.publish("fed.qz.v1.va.board.1.state", json.dumps(state("1", 6)).encode())
        await nc.flush()

        async def settled() -> bool:
            return (
                hub.counters.stored + hub.counters.duplicates >= 10
                and sum(hub.counters.bad.values()) >= 3
                and hub.counters.states >= 1
            )

        await wait_for(settled)
        keys = sorted(await store.event_keys())
        assert keys == sorted(
            [("va", "1", 1, s) for s in (1, 2, 3, 5, 6)] + [("va", "2", 1, s) for s in (1, 2, 3)]
        )
        assert hub.counters.duplicates == 2
        assert hub.counters.bad == {"event": 3}
        assert await store.gaps() == [{"venue": "va", "board": "1", "after": 3, "before": 5}]
        # A snapshot older than the stored one (a late replay) does not replace it.
        await js.publish("fed.qz.v1.va.board.1.state", json.dumps(state("1", 4)).encode())
        await nc.flush()
        await wait_for(lambda: _states_done(hub, 2))
        (b1,) = await store.boards_of("va")
        assert b1["seq"] == 6  # the older snapshot, arriving later, did not replace it
        # Everything acked: nothing left pending on the consumer.
        admin = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
        info = await admin.jetstream().consumer_info("QZ_FED_EVENTS", "qz-hub-events")
        await admin.close()
        assert info.num_ack_pending == 0 and info.num_pending == 0
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await nc.close()
        await store.close()


async def _states_done(hub: HubConsumer, n: int) -> bool:
    return hub.counters.states >= n


async def test_an_unacked_event_is_redelivered_to_another_hub_and_stored_once(
    nats_centre: NatsCentre, hub_db: str
) -> None:
    # Hub A stores but "dies" before its ack (store ok, ack never sent): JetStream redelivers to
    # hub B after ack_wait, and the unique key makes it a no-op.
    plan = small_plan(ack_wait_s=2.0)
    store = await HubStore.open(hub_db)
    nc = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    try:
        js = nc.jetstream()
        from federation_hub.records import parse_event
        from federation_hub.streams import ensure_streams

        await ensure_streams(js, plan)
        await js.publish("fed.qz.v1.va.board.7.event", json.dumps(envelope("7", 1)).encode())
        sub = await js.pull_subscribe_bind("qz-hub-events", "QZ_FED_EVENTS")
        (msg,) = await sub.fetch(1, timeout=5)
        assert await store.add_events([parse_event(msg.subject, msg.data, "fed")]) == 1
        # no ack: hub A is gone
        hub_b = HubConsumer(
            servers=nats_centre.urls,
            user=HUB_USER[0],
            password=HUB_USER[1],
            store=store,
            plan=plan,
            name="hub-b",
        )
        task = asyncio.create_task(hub_b.run())
        try:

            async def redelivered() -> bool:
                return hub_b.counters.duplicates == 1

            await wait_for(redelivered, 20)
            assert hub_b.counters.stored == 0
            assert await store.event_keys() == [("va", "7", 1, 1)]
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    finally:
        await nc.close()
        await store.close()


async def test_hubs_opening_a_new_database_together_do_not_race(hub_db: str) -> None:
    # Several hub processes start at once on an empty database: the schema is made once.
    stores = await asyncio.gather(*(HubStore.open(hub_db) for _ in range(6)))
    try:
        assert await stores[0].venues() == []
    finally:
        for s in stores:
            await s.close()


@pytest.mark.allow_error_log
async def test_a_stream_bound_the_centre_cannot_hold_is_named_by_its_setting(
    nats_centre: NatsCentre, hub_db: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The default 8192 MB events stream against a centre with a small store (the tests'
    private servers: 512 MB): the hub says once which setting to lower, not a warning a half
    second that names none (stop 38's technician)."""
    store = await HubStore.open(hub_db)
    hub = HubConsumer(
        servers=nats_centre.urls,
        user=HUB_USER[0],
        password=HUB_USER[1],
        store=store,
        plan=small_plan(max_bytes=8192 * 1024**2),
    )
    task = asyncio.create_task(hub.run())
    try:

        async def said() -> bool:
            return any("--max-bytes-mb" in r.getMessage() for r in caplog.records)

        await wait_for(said)
        await asyncio.sleep(1.0)  # it goes on trying, quietly
        told = [r for r in caplog.records if "--max-bytes-mb" in r.getMessage()]
        assert len(told) == 1 and "8192 MB" in told[0].getMessage(), told
        assert not [r for r in caplog.records if "streams not ready" in r.getMessage()]
        assert not hub.ready.is_set()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await store.close()
