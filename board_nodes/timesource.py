"""The node's monotonic time source for one board's clock core."""

from __future__ import annotations

import time
from collections.abc import Callable

from wire_contract.wallclock import wall_ms

__all__ = ["NodeTime"]


class NodeTime:
    """One board's monotonic source for the clock core.

    While a face event is applied (``pinned``), ``now()`` answers the instant of the act: the
    edge's stamp, or the serial clock's ``device_ms`` through the link's offset estimate, so
    a player is charged to the act, not to when its frame arrived.

    Reading the time (a display refresh, a checkpoint, a snapshot) changes nothing in the
    core, so it does not move that instant either: a press that arrives late is still
    applied at its own instant. Only a *change* of the clock's state (``mark()``, called for
    every event the board journals but warnings) sets a floor: an act older than the last
    change is applied at the change (the core's history is not rewritten).
    """

    def __init__(self, source: Callable[[], int] = time.monotonic_ns) -> None:
        self._source = source
        self._floor = 0
        self._pinned: int | None = None
        self._act: int | None = None  # the pinned act's own instant, before any floor

    def __call__(self) -> int:
        if self._pinned is not None:
            return self._pinned
        return max(self._source(), self._floor)

    @property
    def act_ns(self) -> int:
        """The instant of the act being applied, as the face stamped it (not raised to the
        floor); outside an act, now."""
        return self._act if self._act is not None else self()

    @property
    def floor(self) -> int:
        """The instant of the last change of the clock's state."""
        return self._floor

    def wall_ms_of(self, instant_ns: int) -> int:
        """The wall time (Unix ms) of ``instant_ns`` on this source: now, less how long ago
        it was. An instant in the future is taken as now: a ``ts`` never runs ahead."""
        return wall_ms() - max(0, self._source() - instant_ns) // 1_000_000

    def lag_ms(self, instant_ns: int) -> int:
        """How long ago ``instant_ns`` was (0 if not yet)."""
        return max(0, self._source() - instant_ns) // 1_000_000

    def mark(self) -> None:
        """The clock's state changed now (or at the pinned instant)."""
        self._floor = max(self._floor, self())

    def pinned(self, instant_ns: int) -> _Pin:
        return _Pin(self, instant_ns)


class _Pin:
    def __init__(self, owner: NodeTime, instant: int) -> None:
        self.owner, self.instant = owner, instant

    def __enter__(self) -> None:
        # An act older than the last change of state is applied at that change.
        self.owner._pinned = max(self.instant, self.owner._floor)
        self.owner._act = self.instant

    def __exit__(self, *exc: object) -> None:
        # No floor here: an event that changed the clock journaled itself (``mark``); a link
        # warning or a press of the side not on move changed nothing.
        self.owner._pinned = None
        self.owner._act = None
