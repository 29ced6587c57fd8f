"""``FaultyLine``: a serial line that drops, corrupts, duplicates, delays and silences frames.

It wraps one end's ``LinkBase._write`` (every call is one frame, or raw garbage), so it can
sit on the emulator's transmit side (clock → host) and on the host's (host → clock) without
a proxy. Seeded and counted; used by the clock-link fault tests and
``benchmarks/link_faults.py``.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FaultyLine", "LineFaults"]


@dataclass
class LineFaults:
    drop: float = 0.0  # share of frames lost
    corrupt: float = 0.0  # share of frames with one byte flipped (a CRC error at the peer)
    duplicate: float = 0.0  # share of frames sent twice
    delay_ms: float = 0.0  # extra delay of a delayed frame (later frames may overtake it)
    delay: float = 0.0  # share of frames delayed
    counts: dict[str, int] = field(default_factory=dict)

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


class FaultyLine:
    """Install with ``FaultyLine(link, faults, seed=1)``; ``silent`` drops everything."""

    def __init__(self, link: Any, faults: LineFaults, *, seed: int = 0) -> None:
        self.link = link
        self.faults = faults
        self.rng = random.Random(seed)
        self.silent = False
        self._write = link._write
        link._write = self.write

    def write(self, data: bytes) -> None:
        f, rng = self.faults, self.rng
        if self.silent:
            f.count("silenced")
            return
        if rng.random() < f.drop:
            f.count("dropped")
            return
        if rng.random() < f.corrupt and len(data) > 2:
            i = rng.randrange(0, len(data) - 1)  # never the final delimiter
            data = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8)) or 1]) + data[i + 1 :]
            f.count("corrupted")
        if rng.random() < f.delay and f.delay_ms > 0:
            f.count("delayed")
            asyncio.get_running_loop().call_later(f.delay_ms / 1000, self._write, data)
        else:
            self._write(data)
        if rng.random() < f.duplicate:
            f.count("duplicated")
            self._write(data)

    def noise(self, length: int) -> None:
        """A burst of line noise: random bytes (zeros included) between frames."""
        self.faults.count("noise_bursts")
        self._write(bytes(self.rng.randrange(256) for _ in range(length)))
