"""Contact debounce as a small pure state machine, fed with ``(timestamp_ns, level)`` edges.

gpiozero's own ``bounce_time`` drops edges inside the window and so can miss the level a contact
settles at; MockFactory does not simulate it at all. This class holds no clock and no thread:
the caller stamps each edge when it happens and calls ``settle`` at ``deadline_ns``, so every
decision is table-testable with exact times.

Two modes:

``LEADING`` (player buttons, keys): the first edge that changes the debounced level is taken at
once — a press is reported with the time of its first contact, no later — and every edge in the
next ``window_ns`` is treated as bounce. If the contact ended the window at the other level, the
change is taken when the window ends (``settle``) or before the next edge is judged.

``SETTLED`` (power sense, battery): a change is taken only once the raw level has stayed put for
``window_ns``, so a spike on a long line is never read as the clock being switched off. Its time
is the first edge of the run that led to it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["DebounceMode", "Debouncer", "Transition"]


class DebounceMode(enum.Enum):
    LEADING = "leading"
    SETTLED = "settled"


@dataclass(frozen=True, slots=True)
class Transition:
    """The debounced level changed to ``level`` (``True`` = active) at ``t_ns``."""

    t_ns: int
    level: bool

    def __repr__(self) -> str:
        return f"<Transition {'active' if self.level else 'inactive'} at {self.t_ns}>"


class Debouncer:
    """Debounce one contact. ``level`` is the debounced level, ``raw`` the last level seen."""

    def __init__(
        self, window_ns: int, *, level: bool = False, mode: DebounceMode = DebounceMode.LEADING
    ) -> None:
        if window_ns < 0:
            raise ValueError(f"debounce window must be >= 0 ns, not {window_ns}")
        self.window_ns = window_ns
        self.mode = mode
        self.level = level
        self.raw = level
        self._raw_since: int | None = None  # first edge of the current run away from ``level``
        self._last_edge_ns: int | None = None
        self._lock_until: int | None = None  # LEADING: end of the bounce window
        self.edges = 0
        self.ignored = 0  # edges judged to be bounce
        self.clamped = 0  # edges stamped earlier than the one before (clamped forward)

    def __repr__(self) -> str:
        return (
            f"<Debouncer {self.mode.value} window={self.window_ns}ns level={self.level} "
            f"raw={self.raw} edges={self.edges} ignored={self.ignored}>"
        )

    @property
    def deadline_ns(self) -> int | None:
        """When ``settle`` may take a pending change, or ``None`` when nothing is pending."""
        if self.raw == self.level or self._raw_since is None:
            return None
        if self.mode is DebounceMode.LEADING:
            return self._lock_until if self._lock_until is not None else self._raw_since
        assert self._last_edge_ns is not None
        return self._last_edge_ns + self.window_ns

    def reset(self, level: bool) -> None:
        """Forget history and take ``level`` as the debounced and raw level (e.g. at open)."""
        self.level = self.raw = level
        self._raw_since = self._last_edge_ns = self._lock_until = None

    def feed(self, t_ns: int, level: bool) -> list[Transition]:
        """One raw edge. Returns the debounced transitions it causes (zero, one or two)."""
        if self._last_edge_ns is not None and t_ns < self._last_edge_ns:
            # Stamps come from one callback thread in order; a backwards stamp means a clock
            # quirk, and reordering would be worse than a zero-length gap.
            self.clamped += 1
            t_ns = self._last_edge_ns
        self.edges += 1
        out = self.settle(t_ns)  # a change pending from an earlier window is judged first
        if level == self.raw:
            # Two edges to the same level: an edge was lost between them. Nothing to do.
            self._last_edge_ns = t_ns
            return out
        self.raw = level
        self._last_edge_ns = t_ns
        if level == self.level:
            self._raw_since = None  # back where we were: the run away from ``level`` was bounce
            self.ignored += 1
            return out
        self._raw_since = t_ns
        if self.mode is DebounceMode.LEADING and (
            self._lock_until is None or t_ns >= self._lock_until
        ):
            out.append(self._take(t_ns))
        else:
            self.ignored += 1
        return out

    def settle(self, now_ns: int) -> list[Transition]:
        """Take a pending change whose window has passed by ``now_ns``."""
        deadline = self.deadline_ns
        if deadline is None or now_ns < deadline:
            return []
        assert self._raw_since is not None
        return [self._take(self._raw_since)]

    def _take(self, t_ns: int) -> Transition:
        self.level = self.raw
        self._raw_since = None
        self._lock_until = t_ns + self.window_ns
        return Transition(t_ns, self.level)
