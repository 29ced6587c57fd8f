"""One pending call on the event loop, or none: the handle the board's timers keep.

Arming the slot again replaces the call it held, so a timer rescheduled after every change
never fires twice; the slot is empty again before its callback runs, so the callback may arm
it anew (the face's next refresh) and ``pending`` is false while it acts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["TimerSlot"]


class TimerSlot:
    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None

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

    def _fire(self, callback: Callable[[], None]) -> None:
        self._handle = None
        callback()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
