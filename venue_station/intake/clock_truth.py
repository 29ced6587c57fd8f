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

That one-way estimate is certain only for a node *ahead*: delay can only make a node look
behind. Under 200 ms of network delay every sample carries 200 ms, and a node in time would
look 200 ms behind. So where the station probes clocks (``probing``, clock_probe.py), a node
that looks behind is judged by round trips instead: each answered probe bounds the offset to
``behind ± delay / 2``, the sample with the least delay of a window is the estimate, and the
node is off only when the whole interval is beyond the limit — never for delay alone. A node
that does not answer probes (it predates them) is judged one way, as before.

:class:`ClockTruth` is pure (no I/O, times passed in): it returns the :class:`AlertSpec` to
raise when a node goes beyond the limit, once per episode; it re-arms when the node is back
within half the limit (hysteresis, so a node sitting at the limit does not flap).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

from venue_station.live.alerts import AlertSpec

__all__ = ["LIMIT_MS", "ClockTruth", "OffsetEstimator"]

LIMIT_MS = 100
PROBE_WINDOW = 8  # round trips kept per board: the least-delayed of the last eight decides


@dataclass
class OffsetEstimator:
    """One board's samples and verdict."""

    window: int = 32
    min_samples: int = 4
    samples: collections.deque[int] = field(init=False)
    off: bool = False
    episodes: int = 0
    # Round trips: (delay, behind). ``answers``: None until the node answered or refused a
    # probe, then whether it answers them.
    round_trips: collections.deque[tuple[int, int]] = field(init=False)
    answers: bool | None = None

    def __post_init__(self) -> None:
        if self.window < 1 or not 1 <= self.min_samples <= self.window:
            raise ValueError("window must be >= 1 and min_samples within 1..window")
        self.samples = collections.deque(maxlen=self.window)
        self.round_trips = collections.deque(maxlen=PROBE_WINDOW)

    def add(self, sample_ms: int) -> None:
        self.samples.append(sample_ms)

    @property
    def one_way_ms(self) -> int | None:
        """How far the node is behind the station (negative: ahead), delay included; None
        until ``min_samples`` messages were seen."""
        if len(self.samples) < self.min_samples:
            return None
        return min(self.samples)

    @property
    def best_round_trip(self) -> tuple[int, int] | None:
        """(delay, behind) of the least-delayed recent round trip, if any."""
        return min(self.round_trips) if self.round_trips else None

    @property
    def offset_ms(self) -> int | None:
        """The best estimate of how far the node is behind (negative: ahead): the round trip's
        when the node answers probes, else the one-way bound."""
        best = self.best_round_trip
        return best[1] if best is not None else self.one_way_ms


class ClockTruth:
    """Every board's :class:`OffsetEstimator`; :meth:`observe` says when to alert."""

    def __init__(self, *, limit_ms: int = LIMIT_MS, window: int = 32, min_samples: int = 4) -> None:
        if limit_ms <= 0:
            raise ValueError("limit_ms must be positive")
        self.limit_ms = limit_ms
        self._window, self._min = window, min_samples
        self.boards: dict[str, OffsetEstimator] = {}
        # Set by a station that probes clocks: a node looking behind waits for round trips.
        self.probing = False
        self.wanted: set[str] = set()  # boards whose one-way verdict waits for a probe

    def estimator(self, board: str) -> OffsetEstimator:
        est = self.boards.get(board)
        if est is None:
            est = self.boards[board] = OffsetEstimator(self._window, self._min)
        return est

    def is_off(self, board: str) -> bool:
        """Whether the board's clock is in an offset episode (alerted, not back in time)."""
        est = self.boards.get(board)
        return bool(est is not None and est.off)

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
        return self._judge_one_way(board, est, received_ms, node)

    def _judge_one_way(
        self, board: str, est: OffsetEstimator, now: int, node: str | None
    ) -> AlertSpec | None:
        offset = est.one_way_ms
        if offset is None or est.answers:
            return None  # not enough seen, or round trips judge this node
        if offset > self.limit_ms and self.probing and est.answers is None:
            self.wanted.add(board)  # behind, or only delayed? a round trip will tell
            return None
        return self._verdict(board, est, now, node, offset, abs(offset), {"method": "one_way"})

    def observe_round_trip(
        self, board: str, *, delay_ms: int, behind_ms: int, at_ms: int, node: str | None = None
    ) -> AlertSpec | None:
        """One answered clock probe of ``board``: the alert to raise, if the node is off."""
        est = self.estimator(board)
        est.answers = True
        self.wanted.discard(board)
        est.round_trips.append((max(0, delay_ms), behind_ms))
        best = est.best_round_trip
        assert best is not None
        delay, behind = best
        # Certainly beyond: the offset lies within behind ± delay/2.
        certain = abs(behind) - (delay + 1) // 2
        detail = {"method": "round_trip", "delay_ms": delay}
        return self._verdict(board, est, at_ms, node, behind, certain, detail)

    def forget_answers(self, board: str) -> None:
        """``board`` has a new node or session: whether it answers probes is open again."""
        est = self.boards.get(board)
        if est is not None:
            est.answers = None
            est.round_trips.clear()

    def refused(self, board: str, *, at_ms: int, node: str | None = None) -> AlertSpec | None:
        """``board``'s node does not answer probes: judge it one way (what was held back)."""
        est = self.estimator(board)
        self.wanted.discard(board)
        if est.answers is None:
            est.answers = False
        return self._judge_one_way(board, est, at_ms, node)

    def _verdict(
        self,
        board: str,
        est: OffsetEstimator,
        now: int,
        node: str | None,
        offset: int,
        certain: int,
        detail: dict[str, Any],
    ) -> AlertSpec | None:
        """Alert once per episode when ``certain`` (how far beyond zero the node surely is)
        passes the limit; re-arm when the estimate is back within half of it."""
        if est.off:
            if abs(offset) <= self.limit_ms // 2:
                est.off = False  # back in time: the next excursion is a new alert
            return None
        if certain <= self.limit_ms:
            return None
        est.off = True
        est.episodes += 1
        return AlertSpec(
            f"off:{board}:{est.episodes}:{now}",
            "clock_offset",
            board,
            now,
            detail={
                "offset_ms": offset,
                "limit_ms": self.limit_ms,
                "node": node,
                "direction": "behind" if offset > 0 else "ahead",
                **detail,
            },
        )
