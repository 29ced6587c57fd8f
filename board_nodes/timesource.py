"""The node's monotonic time source for the clock core."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["NodeTime"]


class NodeTime:
    """The node's monotonic source for the clock core, never going backwards.

    While a face event is applied, ``now()`` answers the instant of the event's edge, so the
    time a player spent is measured to the edge, not to when the loop got round to it.
    """

    def __init__(self, source: Callable[[], int] = time.monotonic_ns) -> None:
        self._source = source
        self._last = 0
        self._pinned: int | None = None

    def __call__(self) -> int:
        t = self._pinned if self._pinned is not None else self._source()
        self._last = max(self._last, t)
        return self._last

    def pinned(self, instant_ns: int) -> _Pin:
        return _Pin(self, instant_ns)


class _Pin:
    def __init__(self, owner: NodeTime, instant: int) -> None:
        self.owner, self.instant = owner, instant

    def __enter__(self) -> None:
        # An edge older than what the core has seen is clamped: time never runs backwards.
        self.owner._pinned = max(self.instant, self.owner._last)

    def __exit__(self, *exc: object) -> None:
        self.owner._pinned = None
