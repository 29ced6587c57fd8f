"""A task cancelled while it waits with a time-out really ends (the station's own waits).

On Python 3.11 ``asyncio.wait_for`` swallows a cancellation that arrives in the same loop pass
as what it awaits (CPython gh-86296): the cancelled task goes on as if nothing happened, and a
stop that cancels it hangs. The station waits with ``asyncio.timeout`` instead; each test here
sets what the task waits for and cancels it in one pass, and the task must end cancelled.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from venue_station.domain.commands import CommandBus
from venue_station.intake.clock_probe import ClockProbes
from venue_station.live.metrics import Metrics
from venue_station.live.public_feed import PublicFeed
from venue_station.store.database import Store
from wire_contract.messages import Reply, Topics, encode

ENDS_WITHIN_S = 5.0  # a task that ignored its cancellation would never end: bound the test


async def _ends_cancelled(task: asyncio.Task[Any]) -> None:
    await asyncio.wait({task}, timeout=ENDS_WITHIN_S)
    try:
        assert task.done(), "the cancelled task still runs: its cancellation was swallowed"
        assert task.cancelled(), f"the cancelled task returned {task.result()!r}"
    finally:
        task.cancel()  # a task that ignored the first cancel is not left behind


async def _until(condition: Any) -> None:
    async with asyncio.timeout(ENDS_WITHIN_S):
        while not condition():
            await asyncio.sleep(0)


async def test_a_command_cancelled_as_its_reply_lands_is_cancelled(store: Store) -> None:
    bus = CommandBus(Topics("test"), store, Metrics(), timeout_s=30)
    sent: list[tuple[str, bytes]] = []

    async def publish(topic: str, payload: bytes) -> None:
        sent.append((topic, payload))

    bus.publish = publish
    task = asyncio.create_task(bus.send("7", "pause"))
    await _until(lambda: sent)
    await asyncio.sleep(0)  # the sender now waits for the reply
    txn = json.loads(sent[0][1])["txn"]
    bus.on_reply("7", encode(Reply(txn=txn, ok=True, error=None)))  # the reply, and in the
    task.cancel()  # same pass the stop
    await _ends_cancelled(task)


async def test_the_clock_probe_loop_cancelled_as_it_is_woken_ends() -> None:
    probes = ClockProbes(Topics("test"), interval_s=60)

    async def publish(topic: str, payload: bytes) -> None:
        pass

    asked = []

    def connected() -> bool:
        asked.append(True)  # the first round is over: next the loop waits for a wake-up
        return False

    task = asyncio.create_task(probes.run(publish, lambda: [], connected))
    await _until(lambda: asked)
    for _ in range(3):
        await asyncio.sleep(0)
    probes.want("3")
    task.cancel()
    await _ends_cancelled(task)


async def test_the_public_feed_cancelled_as_it_is_woken_ends() -> None:
    feed = PublicFeed(on_drop=lambda q: None, keepalive_s=60)
    feed.add()  # a phone: the feed's writer task starts and waits
    task = feed._task
    assert task is not None
    for _ in range(3):
        await asyncio.sleep(0)
    feed.offer("status", {"board": "4", "status": {"state": "online"}})
    task.cancel()
    await _ends_cancelled(task)
