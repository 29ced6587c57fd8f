"""Clock truth: how far each node's wall clock is from the station's, from its messages alone.

The display extrapolates a running clock from the node's ``ts`` (``remaining = ms − (now − ts)``),
so a node whose wall clock is off by 300 ms shows every screen 300 ms wrong. Nodes are meant to
run NTP; this catches the one that does not.

Every live (not retained, not replayed) message gives one sample ``received − ts`` on the
station's clock: ``offset + delay``, where ``offset`` is how far the node's clock is *behind*
the station's and ``delay ≥ 0`` is the network and broker time. The smallest sample of a
recent window is the best estimate (the message that travelled fastest); on a venue LAN the
fastest delay is about a millisecond, so the estimate is tight. A node ahead of the station
gives negative samples, and the same minimum finds it. The window slides, so a node whose
clock is stepped (NTP catching up) is re-judged within ``window`` messages.

:class:`ClockTruth` is pure (no I/O, times passed in): it returns the :class:`AlertSpec` to
raise when a node goes beyond the limit, once per episode; it re-arms when the node is back
within half the limit (hysteresis, so a node sitting at the limit does not flap).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

from venue_station.alerts import AlertSpec

__all__ = ["LIMIT_MS", "ClockTruth", "OffsetEstimator"]

LIMIT_MS = 100


@dataclass
class OffsetEstimator:
    """One board's samples and verdict."""

    window: int = 32
    min_samples: int = 4
    samples: collections.deque[int] = field(init=False)
    off: bool = False
    episodes: int = 0

    def __post_init__(self) -> None:
        if self.window < 1 or not 1 <= self.min_samples <= self.window:
            raise ValueError("window must be >= 1 and min_samples within 1..window")
        self.samples = collections.deque(maxlen=self.window)

    def add(self, sample_ms: int) -> None:
        self.samples.append(sample_ms)

    @property
    def offset_ms(self) -> int | None:
        """How far the node is behind the station (negative: ahead), delay included; None
        until ``min_samples`` messages were seen."""
        if len(self.samples) < self.min_samples:
            return None
        return min(self.samples)


class ClockTruth:
    """Every board's :class:`OffsetEstimator`; :meth:`observe` says when to alert."""

    def __init__(self, *, limit_ms: int = LIMIT_MS, window: int = 32, min_samples: int = 4) -> None:
        if limit_ms <= 0:
            raise ValueError("limit_ms must be positive")
        self.limit_ms = limit_ms
        self._window, self._min = window, min_samples
        self.boards: dict[str, OffsetEstimator] = {}

    def estimator(self, board: str) -> OffsetEstimator:
        est = self.boards.get(board)
        if est is None:
            est = self.boards[board] = OffsetEstimator(self._window, self._min)
        return est

    def offset_ms(self, board: str) -> int | None:
        est = self.boards.get(board)
        return est.offset_ms if est is not None else None

    def observe(
        self, board: str, *, ts: int, received_ms: int, node: str | None = None
    ) -> AlertSpec | None:
        """One live message of ``board`` stamped ``ts`` by its node, received at
        ``received_ms`` (station clock): the alert to raise, if this makes the node off."""
        est = self.estimator(board)
        est.add(received_ms - ts)
        offset = est.offset_ms
        if offset is None:
            return None
        if est.off:
            if abs(offset) <= self.limit_ms // 2:
                est.off = False  # back in time: the next excursion is a new alert
            return None
        if abs(offset) <= self.limit_ms:
            return None
        est.off = True
        est.episodes += 1
        return AlertSpec(
            f"off:{board}:{est.episodes}:{received_ms}",
            "clock_offset",
            board,
            received_ms,
            detail={
                "offset_ms": offset,
                "limit_ms": self.limit_ms,
                "node": node,
                "direction": "behind" if offset > 0 else "ahead",
            },
        )
