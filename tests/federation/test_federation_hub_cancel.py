"""A hub stops on one cancel even when nats-py's fetch swallows it.

nats-py's ``fetch`` waits with ``asyncio.wait_for``; on Python 3.11 a cancellation that arrives
as the wait completes is lost (the fetch returns instead of raising). ``HubConsumer._loop``
awaits that fetch, so it must ask its own task whether a cancel is pending rather than trust the
fetch to raise: a hub that ignored SIGTERM this way hung a benchmark run for 10 minutes. The
fetch below is a stand-in for exactly that library behaviour (it cannot be provoked on demand
against a real nats-server); the loop under test is the hub's own.
"""

from __future__ import annotations

import asyncio
from typing import Any

from federation_hub.consumer import HubConsumer


class SwallowingFetch:
    """A pull subscription whose fetch, when cancelled, returns an empty batch instead."""

    def __init__(self) -> None:
        self.fetches = 0

    async def fetch(self, batch: int, timeout: float) -> list[Any]:
        self.fetches += 1
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            return []  # what 3.11's wait_for does when the inner wait finished as the cancel came
        return []


async def test_the_read_loop_ends_on_one_cancel_though_the_fetch_swallows_it() -> None:
    hub = HubConsumer(
        servers=["nats://127.0.0.1:1"],
        user="u",
        password="p",
        store=None,
        plan=None,
        mend_every_s=None,
    )  # type: ignore[arg-type]
    sub = SwallowingFetch()
    handled: list[Any] = []

    async def handle(msgs: list[Any]) -> None:
        handled.append(msgs)

    loop_task = asyncio.create_task(hub._loop(sub, handle))
    while sub.fetches == 0:
        await asyncio.sleep(0.01)
    loop_task.cancel()
    done, _ = await asyncio.wait({loop_task}, timeout=5)
    while not loop_task.done():  # leave no task behind that every later cancel misses too
        loop_task.cancel()
        await asyncio.sleep(0)
    assert done, "one cancel did not stop the hub's read loop (the fetch swallowed it)"
    assert loop_task.cancelled()
    assert sub.fetches <= 2 and handled == []
