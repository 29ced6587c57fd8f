"""Fan-out of live messages to SSE subscribers; a slow one is dropped, never waited for.

A subscriber is private (a logged-in account: everything) or public (anonymous: the public
copy of each message, see ``privacy.py``). Subscribers are capped in all (``max_total``) and
per client address (``per_address``): ``subscribe`` raises :class:`HubFull` beyond, and the API
answers 503. Each subscriber is a socket; the cap keeps the station under its open-file limit
with room for the API, the broker and the database.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from venue_station.privacy import public_message

__all__ = ["Hub", "HubFull"]

log = logging.getLogger(__name__)


class HubFull(Exception):
    """No room for another live stream (in all, or for this address)."""


class Hub:
    def __init__(
        self, *, queue_size: int = 2000, max_total: int = 1_000_000, per_address: int = 1_000_000
    ) -> None:
        self._subscribers: dict[asyncio.Queue[str | None], bool] = {}  # queue -> private
        self._addresses: dict[asyncio.Queue[str | None], str] = {}
        self._per_address: dict[str, int] = {}
        self._queue_size = queue_size
        self.max_total, self.per_address = max_total, per_address

    def __len__(self) -> int:
        return len(self._subscribers)

    def subscribe(self, *, private: bool = True, address: str = "") -> asyncio.Queue[str | None]:
        if len(self._subscribers) >= self.max_total:
            raise HubFull(f"the station serves at most {self.max_total} live streams")
        if self._per_address.get(address, 0) >= self.per_address:
            raise HubFull(f"at most {self.per_address} live streams per address")
        queue: asyncio.Queue[str | None] = asyncio.Queue(self._queue_size)
        self._subscribers[queue] = private
        self._addresses[queue] = address
        self._per_address[address] = self._per_address.get(address, 0) + 1
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str | None]) -> None:
        if self._subscribers.pop(queue, None) is None:
            return
        address = self._addresses.pop(queue, "")
        left = self._per_address.get(address, 1) - 1
        if left > 0:
            self._per_address[address] = left
        else:
            self._per_address.pop(address, None)

    def publish(self, kind: str, data: dict[str, Any]) -> None:
        """Send one SSE message ``event: kind`` with ``data`` plus the station's ``station_ts``;
        public subscribers get its public copy, or nothing when it is arbiter-only."""
        if not self._subscribers:
            return
        text = format_sse(kind, data)
        public = public_message(kind, data)
        public_text = None if public is None else text if public is data else None
        if public is not None and public_text is None:
            public_text = format_sse(kind, dict(public))
        # The arbiters' streams first: their tasks wake first, ahead of a hall full of phones.
        items = list(self._subscribers.items())
        ordered = [kv for kv in items if kv[1]] + [kv for kv in items if not kv[1]]
        for queue, private in ordered:
            out = text if private else public_text
            if out is None:
                continue
            try:
                queue.put_nowait(out)
            except asyncio.QueueFull:
                # The client is not reading: end its stream (None) rather than slow the station.
                log.warning("SSE subscriber too slow (%d queued); dropping it", queue.qsize())
                self.unsubscribe(queue)
                queue.get_nowait()
                queue.put_nowait(None)

    def close(self) -> None:
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(None)
            except asyncio.QueueFull:
                pass
        self._subscribers.clear()
        self._addresses.clear()
        self._per_address.clear()


def format_sse(kind: str, data: dict[str, Any]) -> str:
    body = {"station_ts": time.time_ns() // 1_000_000, **data}
    return f"event: {kind}\ndata: {json.dumps(body, ensure_ascii=False, separators=(',', ':'))}\n\n"
