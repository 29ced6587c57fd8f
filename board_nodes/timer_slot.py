"""One pending call on the event loop, or none: the handle the board's timers keep.

Arming the slot again replaces the call it held, so a timer rescheduled after every change
never fires twice; the slot is empty again before its callback runs, so the callback may arm
it anew (the face's next refresh) and ``pending`` is false while it acts.

``call_exactly_at`` is for the flag: the loop sleeps in ``epoll`` with millisecond timeouts,
rounded up, so a plain ``call_at`` runs 0–1 ms late (more on uvloop, whose clock is in whole
ms). It arms the call ``SPIN_S`` early and then goes round the loop (``call_soon``, other
callbacks run in between: nothing is blocked) until the instant has come: the callback runs
within one turn of the loop after it, for a millisecond or two of the loop's turns per flag.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["SPIN_S", "TimerSlot"]

SPIN_S = 0.002  # how early an exact call wakes, to go round the loop until its instant


class TimerSlot:
    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None

    @property
    def pending(self) -> bool:
        return self._handle is not None

    def call_at(self, loop_time_s: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` at ``loop_time_s`` on the running loop's clock."""
        self.cancel()
        self._handle = asyncio.get_running_loop().call_at(loop_time_s, self._fire, callback)

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        self.call_at(loop.time() + delay_s, callback)

    def call_exactly_at(self, loop_time_s: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` within one turn of the loop after ``loop_time_s``, not up to a
        millisecond after it as ``call_at`` does."""
        self.cancel()
        loop = asyncio.get_running_loop()
        self._handle = loop.call_at(loop_time_s - SPIN_S, self._spin, loop_time_s, callback)

    def _spin(self, loop_time_s: float, callback: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() < loop_time_s:
            self._handle = loop.call_soon(self._spin, loop_time_s, callback)
            return
        self._fire(callback)

    def _fire(self, callback: Callable[[], None]) -> None:
        self._handle = None
        callback()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
