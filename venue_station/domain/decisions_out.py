"""The station's decisions to the hub (issue 27, docs/federation.md).

Each event the station decided (``venue_station/intake/asks.py``) goes out as a wire
``Decision`` on ``qz/v1/{venue}/station/decision`` (QoS 1; only the station account may
publish there, and the venue bridge carries it to the centre). While the broker is away a
decision waits here; at each start every decision the station holds is sent again (the hub keeps
each once, by the event's key), so one lost with a restart reaches the hub all the same.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from pydantic import ValidationError

from wire_contract.messages import Decision, encode
from wire_contract.wallclock import wall_ms

__all__ = ["DecisionOutbox"]

log = logging.getLogger(__name__)
Publish = Callable[[str, bytes], Awaitable[None]]


class DecisionOutbox:
    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.sent = 0
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def put(self, record: dict[str, Any]) -> None:
        self._queue.put_nowait(record)

    def put_all(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            self.put(record)

    def waiting(self) -> int:
        return self._queue.qsize()

    async def run(self, publish: Publish, connected: asyncio.Event) -> None:
        while True:
            record = await self._queue.get()
            try:
                payload = encode(Decision.model_validate({**record, "ts": wall_ms()}))
            except ValidationError as exc:  # a stored event the contract no longer takes
                log.warning("a decision the wire cannot carry: %s: %s", record, exc)
                continue
            while True:
                await connected.wait()
                try:
                    await publish(self.topic, payload)
                    break
                except Exception as exc:  # the broker went away meanwhile: again once back
                    log.info("decision not sent yet (%s): again when connected", exc)
                    await asyncio.sleep(0.5)
            self.sent += 1
