"""The one interface every clock face offers the node: ``ClockFace``.

Out of a face come ``FaceEvent`` values (a press with the device's own timestamp, the pause and
arbiter keys, the clock's power switch, battery and link state); into it go a ``FaceView`` (both
times, the running side, flags, a short text), beeps and brightness. GPIO, serial and simulated
faces implement the same asyncio interface, so the node runs unchanged on all of them.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

from clock_service import Side
from firmware_bridge.errors import FaceError

__all__ = [
    "ClockFace",
    "FaceError",
    "FaceEvent",
    "FaceEventKind",
    "FaceView",
    "format_clock",
]


class FaceEventKind(enum.Enum):
    PRESS = "press"  # a player completed a move; ``side`` says whose button/lever side
    PAUSE_KEY = "pause_key"
    ARBITER_KEY = "arbiter_key"
    POWER_OFF = "power_off"  # the clock face's own power switch, sensed apart from the Pi
    POWER_ON = "power_on"
    BATTERY_LOW = "battery_low"
    LINK_LOST = "link_lost"  # serial faces only: the device stopped answering
    LINK_RESTORED = "link_restored"
    CLOCK_REBOOTED = "clock_rebooted"  # serial faces: a new session of the clock (a reboot)


@dataclass(frozen=True, slots=True)
class FaceEvent:
    """One fact from the clock face.

    ``mono_ns`` is the host's ``time.monotonic_ns()`` best estimate of when it happened;
    ``device_ms`` is the device's own timestamp when the device has one (serial clocks).
    """

    kind: FaceEventKind
    mono_ns: int
    side: Side | None = None
    device_ms: int | None = None

    def __post_init__(self) -> None:
        if (self.kind is FaceEventKind.PRESS) != (self.side is not None):
            raise ValueError("a PRESS event names a side and no other event does")

    def __repr__(self) -> str:
        side = f" {self.side.value}" if self.side else ""
        dev = f" device_ms={self.device_ms}" if self.device_ms is not None else ""
        return f"<FaceEvent {self.kind.value}{side} mono_ns={self.mono_ns}{dev}>"


@dataclass(frozen=True, slots=True)
class FaceView:
    """What the face should show. Times are remaining milliseconds, as of ``mono_ns``.

    A face that refreshes its display by itself counts the running side down from
    ``mono_ns``; it never needs a tick from the node.
    """

    red_ms: int
    black_ms: int
    running: Side | None = None
    flag: Side | None = None
    text: str = ""
    mono_ns: int = 0

    def remaining_ms(self, side: Side, now_ns: int) -> int:
        base = self.red_ms if side is Side.RED else self.black_ms
        if self.running is side and self.flag is None:
            base -= max(0, now_ns - self.mono_ns) // 1_000_000
        return max(0, base)


def format_clock(ms: int) -> str:
    """Clock-face text for a remaining time: ``h:mm:ss``, and ``ss.t`` (tenths) below 20 s.

    Rounds down, as FIDE clocks do: a face never shows time the player does not have.
    """
    ms = max(0, ms)
    if ms < 20_000:
        return f"{ms // 1000:02d}.{(ms % 1000) // 100}"
    s = ms // 1000
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class ClockFace:
    """Base of every clock face: an asyncio queue of ``FaceEvent`` and the output calls.

    Subclasses call ``_emit`` (on the loop thread) for each fact, and implement ``show``,
    ``beep``, ``set_brightness`` and, when they hold resources, ``_open`` and ``_close``.
    ``close()`` is idempotent; a face is an async context manager.
    """

    def __init__(self, *, name: str = "face") -> None:
        self.name = name
        self._queue: asyncio.Queue[FaceEvent] = asyncio.Queue()
        self._opened = False
        self._closed = False
        self.last_view: FaceView | None = None

    # -- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        if self._closed:
            raise FaceError(f"{self.name}: cannot reopen a closed face")
        if not self._opened:
            await self._open()
            self._opened = True

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._opened:
            await self._close()

    @property
    def closed(self) -> bool:
        return self._closed

    async def __aenter__(self) -> ClockFace:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _open(self) -> None:
        """Acquire resources (pins, serial port). Default: nothing to do."""

    async def _close(self) -> None:
        """Release resources. Called once."""

    # -- out of the face -------------------------------------------------------------------
    def _emit(self, event: FaceEvent) -> None:
        self._queue.put_nowait(event)

    async def next_event(self) -> FaceEvent:
        return await self._queue.get()

    async def events(self) -> AsyncIterator[FaceEvent]:
        while True:
            yield await self._queue.get()

    async def quiet(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until no event that happened before this call can
        still come out of this face, and every one that did has been taken by the node.

        The node asks this when a flag is due: the flag stands only when no earlier press of
        that side can still arrive. Here: the events already emitted are consumed. A face
        with a slower path (a serial line, an edge thread) proves its own part first.
        """
        try:
            async with asyncio.timeout(timeout):
                await self._drained()
        except TimeoutError:
            return False
        return True

    async def _drained(self) -> None:
        # The consumer takes an event off the queue and applies it in the same loop step, so
        # an empty queue means every emitted event has been applied.
        await asyncio.sleep(0)
        while not self._queue.empty():  # noqa: ASYNC110 (Queue has no "empty" event)
            await asyncio.sleep(0.001)

    # -- into the face ---------------------------------------------------------------------
    async def show(self, view: FaceView) -> None:
        """Show both times, the running side, flag marks and the short text."""
        self.last_view = view

    async def beep(self, ms: int = 100) -> None:
        """Sound the buzzer for ``ms`` milliseconds, where the face has one."""

    async def set_brightness(self, level: int) -> None:
        """Display brightness 0 (dim) … 15 (full)."""
        if not 0 <= level <= 15:
            raise ValueError(f"brightness must be 0..15, not {level}")

    @staticmethod
    def now_ns() -> int:
        return time.monotonic_ns()
