"""Fan-out of live messages to SSE subscribers; a slow one is dropped, never waited for.

Two paths that never wait on each other. A private subscriber (an arbiter: a handful) gets every
message at once, on its own queue, when it is published: an alert is never queued behind the
hall. Public subscribers (phones, the hall screens: up to ``max_total``) are served by one
broadcaster (``public_feed.py``): the latest state per board, coalesced, encoded once, one write
per phone per quarter second, however fast a board or the hall goes.

A subscriber is private (a logged-in account: everything) or public (anonymous: the public
copy of each message, see ``privacy.py``). Subscribers are capped in all (``max_total``) and
per client address (``per_address``): ``subscribe`` raises :class:`FanoutFull` beyond, and the API
answers 503. Each subscriber is a socket; the cap keeps the station under its open-file limit
with room for the API, the broker and the database.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from venue_station.errors import StationError
from venue_station.live.privacy import public_message
from venue_station.live.public_feed import PublicFeed, PublicQueue, encode_sse

__all__ = ["EventFanout", "FanoutFull"]

log = logging.getLogger(__name__)


class FanoutFull(StationError):
    """No room for another live stream (in all, or for this address)."""


class EventFanout:
    def __init__(
        self, *, queue_size: int = 2000, max_total: int = 1_000_000, per_address: int = 1_000_000
    ) -> None:
        self._private: set[asyncio.Queue[str | None]] = set()
        self._addresses: dict[Any, str] = {}  # every subscriber's queue -> its address
        self._per_address: dict[str, int] = {}
        self._queue_size = queue_size
        self.max_total, self.per_address = max_total, per_address
        self.public = PublicFeed(on_drop=self.unsubscribe)

    def __len__(self) -> int:
        return len(self._addresses)

    def subscribe(self, *, private: bool = True, address: str = "") -> Any:
        """A private subscriber's ``asyncio.Queue`` of SSE text (one message each), or a public
        one's queue of encoded chunks (``bytes``, a tick's messages each); ``None`` ends it."""
        if len(self._addresses) >= self.max_total:
            raise FanoutFull(f"the station serves at most {self.max_total} live streams")
        if self._per_address.get(address, 0) >= self.per_address:
            raise FanoutFull(f"at most {self.per_address} live streams per address")
        queue: Any
        if private:
            queue = asyncio.Queue(self._queue_size)
            self._private.add(queue)
        else:
            queue = self.public.add()
        self._addresses[queue] = address
        self._per_address[address] = self._per_address.get(address, 0) + 1
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str | None] | PublicQueue) -> None:
        if queue not in self._addresses:
            return
        self._private.discard(queue)
        self.public.discard(queue)  # type: ignore[arg-type]
        address = self._addresses.pop(queue, "")
        left = self._per_address.get(address, 1) - 1
        if left > 0:
            self._per_address[address] = left
        else:
            self._per_address.pop(address, None)

    def publish(self, kind: str, data: dict[str, Any]) -> None:
        """Send one SSE message ``event: kind`` with ``data`` plus the station's ``station_ts``:
        to the arbiters' streams now, and its public copy (none when it is arbiter-only) to the
        public feed for its next tick."""
        if self._private:
            text = format_sse(kind, data)
            for queue in list(self._private):
                try:
                    queue.put_nowait(text)
                except asyncio.QueueFull:
                    # The client is not reading: end its stream (None) rather than slow the station.
                    log.warning("SSE subscriber too slow (%d queued); dropping it", queue.qsize())
                    self.unsubscribe(queue)
                    queue.get_nowait()
                    queue.put_nowait(None)
        if len(self.public):
            public = public_message(kind, data)
            if public is not None:
                self.public.offer(kind, public)

    def close(self) -> None:
        for queue in self._private:
            try:
                queue.put_nowait(None)
            except asyncio.QueueFull:
                pass
        self.public.close()
        self._private.clear()
        self._addresses.clear()
        self._per_address.clear()


def format_sse(kind: str, data: dict[str, Any]) -> str:
    return encode_sse(kind, data)
