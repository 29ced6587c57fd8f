"""Fan-out of live messages to SSE subscribers; a slow one is dropped, never waited for."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

__all__ = ["Hub"]

log = logging.getLogger(__name__)


class Hub:
    def __init__(self, *, queue_size: int = 2000) -> None:
        self._subscribers: set[asyncio.Queue[str | None]] = set()
        self._queue_size = queue_size

    def __len__(self) -> int:
        return len(self._subscribers)

    def subscribe(self) -> asyncio.Queue[str | None]:
        queue: asyncio.Queue[str | None] = asyncio.Queue(self._queue_size)
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str | None]) -> None:
        self._subscribers.discard(queue)

    def publish(self, kind: str, data: dict[str, Any]) -> None:
        """Send one SSE message ``event: kind`` with ``data`` plus the station's ``station_ts``."""
        if not self._subscribers:
            return
        text = format_sse(kind, data)
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(text)
            except asyncio.QueueFull:
                # The client is not reading: end its stream (None) rather than slow the station.
                log.warning("SSE subscriber too slow (%d queued); dropping it", queue.qsize())
                self._subscribers.discard(queue)
                queue.get_nowait()
                queue.put_nowait(None)

    def close(self) -> None:
        for queue in list(self._subscribers):
            try:
                queue.put_nowait(None)
            except asyncio.QueueFull:
                pass
        self._subscribers.clear()


def format_sse(kind: str, data: dict[str, Any]) -> str:
    body = {"station_ts": time.time_ns() // 1_000_000, **data}
    return f"event: {kind}\ndata: {json.dumps(body, ensure_ascii=False, separators=(',', ':'))}\n\n"
