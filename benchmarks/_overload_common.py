"""Shared parts of ``benchmarks/overload.py``: a process's memory sampled every second, the
paced publisher's schedule, and the report of one overloaded side.

The overload run is the same for the station and the hub: measure the side's capacity
(events/s it stores with a backlog in front of it), drive it at a multiple of that for a
window while its resident memory is sampled every second, stop, time the catch-up, then
compare every published key with the store.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MemorySampler", "Paced", "rss_mb", "summary"]

BOUND_MB = 300.0  # issue 18: "at twice their capacity for 5 minutes ... say <= 300 MB"


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` now, in MB (/proc/PID/status VmRSS); 0 once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class MemorySampler:
    """Samples the RSS of some processes every ``every_s`` in a thread (the asyncio loop of
    the publisher may be too busy to keep a 1 s beat)."""

    pids: dict[str, int]
    every_s: float = 1.0
    samples: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _t0: float = 0.0

    def start(self) -> MemorySampler:
        self._t0 = time.monotonic()
        self.samples = {name: [] for name in self.pids}
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic() - self._t0
            for name, pid in self.pids.items():
                self.samples[name].append((now, rss_mb(pid)))
            self._stop.wait(self.every_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def peak(self, name: str, since_s: float = 0.0, until_s: float = float("inf")) -> float:
        values = [mb for t, mb in self.samples.get(name, []) if since_s <= t <= until_s]
        return round(max(values, default=0.0), 1)


@dataclass
class Paced:
    """How many events should have been published ``elapsed`` seconds into a run at ``rate``."""

    rate: float
    t0: float = field(default_factory=time.monotonic)

    def due(self) -> int:
        return int(self.rate * (time.monotonic() - self.t0))


async def drive(
    rate: float, seconds: float, publish: Callable[[int], Awaitable[None]], tick_s: float = 0.05
) -> tuple[int, float]:
    """Call ``publish(n)`` every tick with the events due by then; (events published, achieved
    events/s). When the publisher cannot keep up the achieved rate says so (it is reported)."""
    import asyncio

    pace = Paced(rate)
    sent = 0
    end = pace.t0 + seconds
    while time.monotonic() < end:
        due = pace.due() - sent
        if due > 0:
            await publish(due)
            sent += due
        await asyncio.sleep(tick_s)
    return sent, sent / (time.monotonic() - pace.t0)


def tally(want: set[Any], keys: set[Any], rows: int) -> dict[str, int]:
    """Published keys against stored ones: ``rows`` stored rows holding the distinct ``keys``."""
    return {
        "published": len(want),
        "stored": rows,
        "missing": len(want - keys),
        "unknown": len(keys - want) + (rows - len(keys)),
    }


def summary(
    side: str,
    *,
    capacity: float,
    target: float,
    achieved: float,
    window_s: float,
    sampler: MemorySampler,
    proc: str,
    catch_up_s: float,
    counts: dict[str, int],
    extra: dict[str, Any],
) -> dict[str, Any]:
    peak = sampler.peak(proc)
    return {
        "side": side,
        "capacity_events_per_s": round(capacity),
        "target_events_per_s": round(target),
        "achieved_events_per_s": round(achieved),
        "overload_ratio": round(achieved / capacity, 2),
        "window_s": round(window_s),
        f"{proc}_peak_rss_mb": peak,
        # Bounded, not merely small: the first and the last minute of the overload compared.
        f"{proc}_peak_rss_first_min_mb": sampler.peak(proc, until_s=60),
        f"{proc}_peak_rss_last_min_mb": sampler.peak(proc, since_s=max(0.0, window_s - 60)),
        "bound_mb": BOUND_MB,
        "rss_ratio_to_bound": round(peak / BOUND_MB, 2),
        "catch_up_s": round(catch_up_s, 1),
        "published": counts["published"],
        "stored": counts["stored"],
        "lost": counts["missing"],
        "unknown": counts["unknown"],
        **extra,
    }
