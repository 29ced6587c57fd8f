"""What stands between a hall full of phones and the password hasher.

Two limits, checked *before* any hashing so that a refused attempt costs nothing:

- per address: every login attempt from one client address takes a token from its bucket
  (``per_address`` tokens, refilled over ``window_s``);
- per account: every *failed* attempt at one username takes a token from that account's bucket
  (``per_account`` over ``window_s``). Only failures count, and the bucket refills steadily, so
  an attacker can slow guesses at the arbiter's password to a trickle but can lock the arbiter
  out for at most ``window_s / per_account`` seconds after the flood stops.

A refused attempt gets ``retry_after_s`` (the API answers 429 with ``Retry-After``).

Hashing itself (scrypt, tens of ms of CPU) runs on the guard's own worker threads, at most
``concurrency`` at once; at most ``queue`` attempts wait for a worker, beyond that the API
answers 503 at once. The event loop never hashes, and the hashing threads run at a lower CPU
priority (nice +10, Linux): on a two-core station a login flood takes the CPU the event loop
does not need, never the other way round, so alerts, the SSE stream and ``/healthz`` keep
flowing. The buckets are bounded too (``max_keys``): a flood from many addresses evicts the
oldest idle buckets rather than growing memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from venue_station.errors import StationError

__all__ = ["Buckets", "HasherBusy", "LoginGuard"]

T = TypeVar("T")


class HasherBusy(StationError):
    """More attempts are waiting for the hasher than the queue allows."""


@dataclass
class _Bucket:
    tokens: float
    at: float


class Buckets:
    """Token buckets by key: ``capacity`` tokens, refilled at ``capacity / window_s`` per s."""

    def __init__(
        self,
        *,
        capacity: int,
        window_s: float,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if capacity < 1 or window_s <= 0 or max_keys < 1:
            raise ValueError("capacity, window_s and max_keys must be positive")
        self.capacity, self.rate = capacity, capacity / window_s
        self._max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def _bucket(self, key: str) -> _Bucket:
        now = self._clock()
        b = self._buckets.get(key)
        if b is None:
            b = self._buckets[key] = _Bucket(float(self.capacity), now)
            while len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
        else:
            b.tokens = min(self.capacity, b.tokens + (now - b.at) * self.rate)
            b.at = now
            self._buckets.move_to_end(key)
        return b

    def wait_s(self, key: str) -> float:
        """Seconds until ``key`` has a token again (0: it has one now)."""
        b = self._bucket(key)
        return 0.0 if b.tokens >= 1 else (1 - b.tokens) / self.rate

    def take(self, key: str) -> float:
        """Take a token: 0 if taken, else the seconds until one is there (nothing taken)."""
        b = self._bucket(key)
        if b.tokens >= 1:
            b.tokens -= 1
            return 0.0
        return (1 - b.tokens) / self.rate

    def reset(self, key: str) -> None:
        self._buckets.pop(key, None)


def _lower_priority() -> None:
    # On Linux a thread's id names it for setpriority: only this hashing thread is niced.
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


class LoginGuard:
    def __init__(
        self,
        *,
        per_address: int = 10,
        per_account: int = 10,
        window_s: float = 60.0,
        concurrency: int = 2,
        queue: int = 16,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if concurrency < 1 or queue < 0:
            raise ValueError("concurrency must be at least 1 and queue not negative")
        self.addresses = Buckets(capacity=per_address, window_s=window_s, clock=clock)
        self.accounts = Buckets(capacity=per_account, window_s=window_s, clock=clock)
        self._limit = concurrency + queue
        self._inside = 0
        self._pool = ThreadPoolExecutor(
            concurrency, thread_name_prefix="qz-login-hash", initializer=_lower_priority
        )

    def admit(self, address: str, user: str) -> int:
        """0 to go on, else the whole seconds to send as ``Retry-After``."""
        wait = self.accounts.wait_s(user)
        if wait == 0:
            wait = self.addresses.take(address)
        return 0 if wait == 0 else max(1, math.ceil(wait))

    def failed(self, user: str) -> None:
        self.accounts.take(user)

    async def hash(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` (the password check) on a worker thread, bounded; HasherBusy if full."""
        if self._inside >= self._limit:
            raise HasherBusy
        self._inside += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, fn)
        finally:
            self._inside -= 1

    def close(self) -> None:
        """Stop the hashing threads (idempotent); a check still running finishes first."""
        self._pool.shutdown(wait=False, cancel_futures=True)
