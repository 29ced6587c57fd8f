"""Wall-clock milliseconds: only for the ``ts`` of a message, never to measure a duration."""

from __future__ import annotations

import time

__all__ = ["wall_ms"]


def wall_ms() -> int:
    return time.time_ns() // 1_000_000
