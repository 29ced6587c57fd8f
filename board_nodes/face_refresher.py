"""Keeps a board's clock face showing its time: now, and again when the digits next change.

The face is told a view after every change of the board, and while a clock runs, at the next
instant the running side's digits change (the next whole second, or the next tenth below
20 s): one ``loop.call_at`` per change of digits, never a poll. A face that refuses a view is
counted and logged; the board goes on (the players' time is the core's, not the face's).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from board_nodes.timer_slot import TimerSlot
from clock_service import Side
from firmware_bridge.face import ClockFace, FaceView

__all__ = ["FaceRefresher"]

log = logging.getLogger(__name__)

TENTHS_BELOW_MS = 20_000  # below this the face shows tenths of a second


class FaceRefresher:
    """Shows ``view()`` on ``face`` on each ``refresh`` and whenever its digits next change."""

    def __init__(self, face: ClockFace, *, view: Callable[[], FaceView], board_id: str) -> None:
        self.face = face
        self._view = view
        self._board_id = board_id  # for the log: which board's face refused
        self._timer = TimerSlot()
        self._showing: set[asyncio.Task[None]] = set()  # held: the loop keeps only weak refs
        self.refused = 0  # views the face refused

    def refresh(self) -> None:
        self._timer.cancel()
        view = self._view()
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._show(view))
        self._showing.add(task)
        task.add_done_callback(self._showing.discard)
        if view.running is None or view.flag is not None:
            return
        remaining = view.red_ms if view.running is Side.RED else view.black_ms
        step = 100 if remaining <= TENTHS_BELOW_MS else 1000
        wait_ms = remaining % step or step
        self._timer.call_at(loop.time() + wait_ms / 1000, self.refresh)

    async def _show(self, view: FaceView) -> None:
        try:
            await self.face.show(view)
        except Exception:
            self.refused += 1
            log.warning("board %s: the face refused a view", self._board_id, exc_info=True)

    def close(self) -> None:
        """Stop refreshing (a view already on its way to the face is left to arrive)."""
        self._timer.cancel()
