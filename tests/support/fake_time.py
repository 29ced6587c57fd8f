"""A monotonic nanosecond source the test moves by hand, for the pure clock core.

``clock_service`` takes its time as a ``now`` callable, so the rules are tested exactly,
without sleeping; this is the one stand-in the charter allows for the core (tests/README.md).
"""

from __future__ import annotations

from clock_service import GameClock, TimeControl

MS, S = 1_000_000, 1_000_000_000  # in ns


class FakeTime:
    """A monotonic ns source the test moves by hand."""

    def __init__(self, start: int = 10**12) -> None:
        self.ns = start

    def __call__(self) -> int:
        return self.ns

    def advance(self, ns: int = 0, *, ms: int = 0, s: int = 0) -> None:
        self.ns += ns + ms * MS + s * S


def clock(t: FakeTime, tc: str = "30m+5s", black: str | None = None) -> GameClock:
    """A GameClock on ``t`` for a time-control string (and black's own, if it differs)."""
    return GameClock(
        TimeControl.parse(tc), now=t, black=None if black is None else TimeControl.parse(black)
    )
