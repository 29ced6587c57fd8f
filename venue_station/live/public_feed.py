"""The anonymous (public) live streams' one broadcaster: coalesced, encoded once, never ahead
of the arbiters.

A hall full of phones used to cost the event loop one queue put and one task wake-up per
message per phone: a board's burst of 1,500 events to 1,500 phones was 2.25 M puts, and the
arbiter's flag alert waited behind them for seconds (docs/benchmarks.md, attack load). Now:

- ``offer`` files each public message under a key: a board's ``state`` and ``status``, a
  ``game``'s result, a ``knockout``: the latest replaces (drops) the one not yet sent — a
  spectator needs each board's latest state, not every intermediate one. A board's ``event``s
  are kept in order up to ``events_per_board`` a quarter second (a real clock presses at most every
  ~100 ms: ~2.5 a tick, plus a few display-free events); past that they are left off the public
  streams (counted; the state that follows carries the clock, and the board's history is on
  ``/api/events``). What waits is bounded (``max_pending``).
- One task (``run``) sends what was filed every tick, encoded once (one ``bytes`` chunk
  shared by every phone), as one queue put per phone per tick, and yields the loop every
  ``group`` phones so an arbiter's stream, a login, the writer are never queued behind the hall.
  The tick is ``tick_s`` (a quarter second), longer when there are more phones than
  ``writes_per_s`` allows at that pace (1,500 phones: 1.5 s): each write to a phone costs the
  loop 0.1–0.25 ms (a syscall each), and the hall must never take more than a fraction of it.
- A phone whose queue holds ``max_behind`` unsent chunks (it is not reading) is dropped: its
  stream ends, and its browser reconnects to a fresh ``hello``.
- An idle feed sends a ``ping`` every ``keepalive_s``, so a phone's stream needs no timer of its
  own.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["PublicFeed", "encode_sse"]

log = logging.getLogger(__name__)

TICK_S = 0.25  # a public stream gets at most one write this often
EVENTS_PER_BOARD_PER_TICK = 8  # 32/s at the shortest tick: above any clock (~10 presses/s)
WRITES_PER_S = 1000  # phone writes a second at most, in all: the tick grows past 250 phones
MAX_PENDING = 5000  # messages waiting for the next tick, in all
MAX_BEHIND = 40  # unsent chunks (10 s at the shortest tick) before a phone is dropped
GROUP = 50  # phones served per turn of the event loop
KEEPALIVE_S = 15.0

_COALESCED = {
    "state": "board",
    "status": "board",
    "game": "game",
    "knockout": "",
    "tournament": "",
    "record": "game",
}

PublicQueue = asyncio.Queue[bytes | None]


def encode_sse(kind: str, data: Mapping[str, Any], station_ts: int | None = None) -> str:
    import json

    ts = time.time_ns() // 1_000_000 if station_ts is None else station_ts
    body = {"station_ts": ts, **data}
    return f"event: {kind}\ndata: {json.dumps(body, ensure_ascii=False, separators=(',', ':'))}\n\n"


class PublicFeed:
    def __init__(
        self,
        *,
        on_drop: Callable[[PublicQueue], None],
        tick_s: float = TICK_S,
        writes_per_s: int = WRITES_PER_S,
        events_per_board: int = EVENTS_PER_BOARD_PER_TICK,
        max_pending: int = MAX_PENDING,
        max_behind: int = MAX_BEHIND,
        group: int = GROUP,
        keepalive_s: float = KEEPALIVE_S,
    ) -> None:
        if tick_s <= 0 or keepalive_s <= 0:
            raise ValueError("tick_s and keepalive_s must be > 0")
        if min(writes_per_s, events_per_board, max_pending, max_behind, group) < 1:
            raise ValueError(
                "writes_per_s, events_per_board, max_pending, max_behind and group must be >= 1"
            )
        self.tick_s, self.keepalive_s, self.writes_per_s = tick_s, keepalive_s, writes_per_s
        self.events_per_board, self.max_pending = events_per_board, max_pending
        self.max_behind, self.group = max_behind, group
        self._on_drop = on_drop
        self._queues: set[PublicQueue] = set()
        self._pending: dict[tuple[str, ...], tuple[str, Mapping[str, Any]]] = {}
        self._events: dict[str, int] = {}  # board -> events filed this tick
        self._serial = itertools.count()
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        # What the phones were spared (exposed as metrics): superseded by a newer copy, left off
        # past a board's event rate or the pending bound, phones dropped for not reading.
        self.superseded = 0
        self.left_off = 0
        self.slow_dropped = 0
        self.chunks_sent = 0

    def __len__(self) -> int:
        return len(self._queues)

    @property
    def tick(self) -> float:
        """Seconds between two writes to a phone: ``tick_s``, or more with many phones."""
        return max(self.tick_s, len(self._queues) / self.writes_per_s)

    def add(self) -> PublicQueue:
        queue: PublicQueue = asyncio.Queue(self.max_behind)
        self._queues.add(queue)
        self._start()
        return queue

    def discard(self, queue: PublicQueue) -> None:
        self._queues.discard(queue)

    def offer(self, kind: str, data: Mapping[str, Any]) -> None:
        """File a public message for the next tick (no phones: nothing to do)."""
        if not self._queues:
            return
        field = _COALESCED.get(kind)
        if field is not None:
            key: tuple[str, ...] = (kind, str(data.get(field, "")) if field else "")
            if self._pending.pop(key, None) is not None:
                self.superseded += 1  # the newer copy goes last: after the events it follows
        elif kind == "event":
            board = str(data.get("board", ""))
            filed = self._events.get(board, 0)
            if filed >= self.events_per_board * self.tick / self.tick_s:  # the same rate a second
                self.left_off += 1
                return
            self._events[board] = filed + 1
            key = (kind, str(next(self._serial)))
        else:
            key = (kind, str(next(self._serial)))
        if len(self._pending) >= self.max_pending:
            self.left_off += 1
            return
        self._pending[key] = (kind, data)
        self._start()
        if self._wake is not None:
            self._wake.set()

    def _start(self) -> None:
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the first offer or subscriber under one starts it
        self._wake = asyncio.Event()
        if self._pending:
            self._wake.set()
        self._task = loop.create_task(self.run(), name="public-feed")

    async def run(self) -> None:
        assert self._wake is not None
        wake = self._wake
        loop = asyncio.get_running_loop()
        due = loop.time()  # the tick's next instant: a grid, so the ticks do not drift
        while True:
            try:
                async with asyncio.timeout(self.keepalive_s):  # not wait_for: see commands.py
                    await wake.wait()
            except TimeoutError:
                if self._queues:
                    self._pending[("ping", "")] = ("ping", {})
            # The next instant of the grid, one tick after the last write: what comes meanwhile
            # goes in the same write. Sleeping a whole tick after each write instead made every
            # tick a tick plus the write's own time late (4-9 ms beyond the tick, issue 30).
            now = loop.time()
            due = max(due + self.tick, now)
            if due > now:
                await asyncio.sleep(due - now)
            wake.clear()
            await self._send()

    async def _send(self) -> None:
        pending, self._pending = self._pending, {}
        self._events.clear()
        if not pending or not self._queues:
            return
        ts = time.time_ns() // 1_000_000
        parts = []
        for kind, data in pending.values():
            try:
                parts.append(encode_sse(kind, data, ts))
            except (TypeError, ValueError) as exc:  # a bug upstream: lose this one, not the feed
                log.warning("public %s message not sent: %s", kind, exc)
                self.left_off += 1
        if not parts:
            return
        chunk = "".join(parts).encode()
        self.chunks_sent += 1
        for n, queue in enumerate(list(self._queues)):
            if n and n % self.group == 0:
                await asyncio.sleep(0)  # let the arbiters' streams and the writer in
            if queue not in self._queues:
                continue  # gone meanwhile
            try:
                queue.put_nowait(chunk)
            except asyncio.QueueFull:
                log.warning("public SSE stream %d chunks behind; dropping it", queue.qsize())
                self.slow_dropped += 1
                self._queues.discard(queue)
                self._on_drop(queue)  # the hub frees its place (its address's count)
                queue.get_nowait()
                queue.put_nowait(None)

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        for queue in self._queues:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)
        self._queues.clear()
        self._pending.clear()
