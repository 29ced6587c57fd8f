"""``GpioClockFace``: a clock face wired straight to the Pi's pins, on gpiozero.

Every input is a ``DigitalInputDevice`` with gpiozero's ``bounce_time=None``; debounce is ours
(``debounce.Debouncer``) because gpiozero's drops edges and MockFactory has none to drop.
gpiozero calls back on its own thread: the callback stamps ``time.monotonic_ns()`` there, at
the edge, and hands the stamp to the asyncio loop with ``call_soon_threadsafe``; everything
after that — debounce, events, timers — runs on the loop thread and needs no lock.

The display refreshes itself: after ``show`` it redraws each time the running side's shown
time changes, counted down from ``FaceView.mono_ns``; the node never sends a tick.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from typing import Any

from gpiozero import LED, Buzzer, CompositeDevice, Device, DigitalInputDevice

from clock_service import Side
from firmware_bridge.debounce import DebounceMode, Debouncer, Transition
from firmware_bridge.display_drivers import open_display
from firmware_bridge.displays import ClockDisplay, DisplayError, SideMarks
from firmware_bridge.face import (
    ClockFace,
    FaceError,
    FaceEvent,
    FaceEventKind,
    FaceView,
    format_clock,
)
from firmware_bridge.gpio_config import GpioFaceConfig

__all__ = ["GpioClockFace", "GpioFaceConfig", "GpioFaceError", "render_view"]

log = logging.getLogger(__name__)

_KEYS = ("red_button", "black_button", "pause_key", "arbiter_key")
_SENSES = ("power_sense", "battery_low")
TEXT_PERIOD_S = 4  # with a text in the view: 1 s of text, then 3 s of times, repeating


class GpioFaceError(FaceError):
    """A GPIO face could not claim or drive its pins."""


def render_view(
    view: FaceView, now_ns: int, *, left_side: Side = Side.RED
) -> tuple[str, str, SideMarks, SideMarks] | str:
    """What the display shows for ``view`` at ``now_ns``: the text, or (left, right, marks).

    A view with a text shows it for the first second of every ``TEXT_PERIOD_S``, counted from
    the view's ``mono_ns``, and both times the rest of the time.
    """
    if view.text and (max(0, now_ns - view.mono_ns) // 1_000_000_000) % TEXT_PERIOD_S == 0:
        return view.text
    right_side = left_side.other

    def marks(side: Side) -> SideMarks:
        return SideMarks(running=view.running is side, flag=view.flag is side)

    return (
        format_clock(view.remaining_ms(left_side, now_ns)),
        format_clock(view.remaining_ms(right_side, now_ns)),
        marks(left_side),
        marks(right_side),
    )


def _next_redraw_s(view: FaceView, now_ns: int) -> float | None:
    """Seconds until the rendering of ``view`` can next change; ``None`` if never."""
    waits: list[int] = []  # nanoseconds
    if view.running is not None and view.flag is None:
        ms = view.remaining_ms(view.running, now_ns)
        if ms > 0:
            step = 100 if ms <= 20_000 else 1000
            left_in_step = ms % step or step
            elapsed_ns = max(0, now_ns - view.mono_ns) % 1_000_000
            waits.append(left_in_step * 1_000_000 - elapsed_ns)
    if view.text:
        waits.append(1_000_000_000 - max(0, now_ns - view.mono_ns) % 1_000_000_000)
    if not waits:
        return None
    return max(0.0005, min(waits) / 1e9)


class GpioClockFace(ClockFace):
    """A clock face on gpiozero pins. Pins are claimed at ``open()`` and freed at ``close()``.

    ``pin_factory`` is handed to every child device (``None``: gpiozero's default);
    ``display`` overrides the driver the config names (tests pass a luma dummy); ``loop`` is
    the loop events are delivered on (default: the running loop at ``open()``).
    """

    def __init__(
        self,
        config: GpioFaceConfig,
        *,
        pin_factory: Any = None,
        display: ClockDisplay | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        name: str = "gpio",
    ) -> None:
        super().__init__(name=name)
        if not isinstance(config, GpioFaceConfig):
            raise TypeError(f"config must be a GpioFaceConfig, not {type(config).__name__}")
        self.config = config
        self.pin_factory = pin_factory
        self.display: ClockDisplay | None = display
        self._loop = loop
        self.devices: CompositeDevice | None = None
        key_ns = config.debounce_ms * 1_000_000
        sense_ns = config.sense_debounce_ms * 1_000_000
        self._debouncers: dict[str, Debouncer] = {
            **{k: Debouncer(key_ns) for k in _KEYS},
            **{k: Debouncer(sense_ns, mode=DebounceMode.SETTLED) for k in _SENSES},
        }
        self._settle_timers: dict[str, asyncio.TimerHandle] = {}
        self._redraw: asyncio.TimerHandle | None = None
        self._beep_off: asyncio.TimerHandle | None = None
        self.lever_side: Side | None = None  # lever faces: the side the lever rests on
        self.stats = {"edges": 0, "lever_repeats": 0, "late_edges": 0, "display_errors": 0}
        # Edges stamped on gpiozero's thread vs taken on the loop: ``quiet`` waits for both
        # to match, so a flag never stands while an edge from before it is still posted.
        self._stamp_lock = threading.Lock()
        self._stamped = 0
        self._taken = 0

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open" if self._opened else "new"
        return f"<GpioClockFace {self.name} {state} display={type(self.display).__name__}>"

    @property
    def power_on(self) -> bool:
        """The clock face's power switch as last debounced (``False`` before ``open()``)."""
        return self._debouncers["power_sense"].level

    # -- lifecycle -----------------------------------------------------------------------------
    async def _open(self) -> None:
        self._loop = self._loop or asyncio.get_running_loop()
        children: dict[str, Device] = {}
        try:
            for field, pin in self.config.pin_map().items():
                if field.startswith("display."):
                    continue
                children[field] = self._make_device(field, pin)
            self.devices = CompositeDevice(
                _order=list(children), pin_factory=self.pin_factory, **children
            )
            if self.display is None:
                self.display = open_display(self.config.display, pin_factory=self.pin_factory)
        except Exception as exc:
            for dev in children.values():
                dev.close()
            if isinstance(exc, FaceError):
                raise
            raise GpioFaceError(f"{self.name}: {exc}") from exc
        # Callbacks first, then the initial levels: an edge in between is then seen twice
        # (harmless: same level) rather than never.
        for field, dev in children.items():
            if field in self._debouncers:
                assert isinstance(dev, DigitalInputDevice)
                dev.when_activated = functools.partial(self._edge, field, True)
                dev.when_deactivated = functools.partial(self._edge, field, False)
        now = time.monotonic_ns()
        for field, deb in self._debouncers.items():
            dev = children.get(field)
            deb.reset(bool(dev.is_active) if isinstance(dev, DigitalInputDevice) else False)
        if self.config.lever:
            red, black = self._debouncers["red_button"], self._debouncers["black_button"]
            self.lever_side = Side.RED if red.level else Side.BLACK if black.level else None
        if not self._debouncers["power_sense"].level:
            self._emit(FaceEvent(FaceEventKind.POWER_OFF, now))
        if self._debouncers["battery_low"].level:
            self._emit(FaceEvent(FaceEventKind.BATTERY_LOW, now))

    def _make_device(self, field: str, pin: str) -> Device:
        cfg = self.config
        try:
            if field in _KEYS:
                return DigitalInputDevice(
                    pin, pull_up=cfg.pull_up, bounce_time=None, pin_factory=self.pin_factory
                )
            if field in _SENSES:
                on = cfg.power_on_level if field == "power_sense" else cfg.battery_low_level
                # Pulled to the inactive level, so a cut sense wire reads "off" / "battery fine".
                return DigitalInputDevice(
                    pin, pull_up=(on == "low"), bounce_time=None, pin_factory=self.pin_factory
                )
            if field == "buzzer":
                return Buzzer(pin, pin_factory=self.pin_factory)
            return LED(pin, pin_factory=self.pin_factory)
        except Exception as exc:
            raise GpioFaceError(f"{self.name}: cannot claim {field} on {pin}: {exc}") from exc

    async def _close(self) -> None:
        for handle in (*self._settle_timers.values(), self._redraw, self._beep_off):
            if handle is not None:
                handle.cancel()
        self._settle_timers.clear()
        try:
            if self.devices is not None:
                self.devices.close()
        finally:
            if self.display is not None:
                self.display.close()

    # -- out of the face -----------------------------------------------------------------------
    def _edge(self, field: str, active: bool) -> None:
        """gpiozero's thread: stamp now, then let the loop do the rest."""
        with self._stamp_lock:
            self._stamped += 1
        t_ns = time.monotonic_ns()
        loop = self._loop
        try:
            if loop is None or self._closed:
                raise RuntimeError("no loop")
            loop.call_soon_threadsafe(self._on_edge, field, t_ns, active)
        except RuntimeError:  # the loop closed under a late edge; nothing left to tell
            with self._stamp_lock:
                self._stamped -= 1  # never reaches the loop: nothing for ``quiet`` to wait on
            self.stats["late_edges"] += 1

    async def quiet(self, timeout: float) -> bool:
        """Every edge stamped before now has reached the loop and been taken (a loop late
        to read them takes them first), then the node consumed the events they made."""
        with self._stamp_lock:
            target = self._stamped
        try:
            async with asyncio.timeout(timeout):

                while self._taken < target and not self._closed:  # noqa: ASYNC110
                    await asyncio.sleep(0.001)
                await self._drained()
        except TimeoutError:
            return False
        return True

    def _on_edge(self, field: str, t_ns: int, active: bool) -> None:
        self._taken += 1
        if self._closed:
            self.stats["late_edges"] += 1
            return
        self.stats["edges"] += 1
        deb = self._debouncers[field]
        self._take(field, deb.feed(t_ns, active))
        self._arm_settle(field)

    def _arm_settle(self, field: str) -> None:
        old = self._settle_timers.pop(field, None)
        if old is not None:
            old.cancel()
        deadline = self._debouncers[field].deadline_ns
        if deadline is not None and self._loop is not None:
            delay = max(0.0, (deadline - time.monotonic_ns()) / 1e9)
            self._settle_timers[field] = self._loop.call_later(delay, self._settle, field)

    def _settle(self, field: str) -> None:
        self._settle_timers.pop(field, None)
        if self._closed:
            return
        self._take(field, self._debouncers[field].settle(time.monotonic_ns()))
        self._arm_settle(field)

    def _take(self, field: str, transitions: list[Transition]) -> None:
        for tr in transitions:
            event = self._event_for(field, tr)
            if event is not None:
                self._emit(event)

    def _event_for(self, field: str, tr: Transition) -> FaceEvent | None:
        if field in ("red_button", "black_button"):
            if not tr.level:
                return None
            side = Side.RED if field == "red_button" else Side.BLACK
            if self.config.lever:
                # A rocker rests on one side: rocking back to the same side is no new move.
                if self.lever_side is side:
                    self.stats["lever_repeats"] += 1
                    return None
                self.lever_side = side
            return FaceEvent(FaceEventKind.PRESS, tr.t_ns, side=side)
        if field == "pause_key":
            return FaceEvent(FaceEventKind.PAUSE_KEY, tr.t_ns) if tr.level else None
        if field == "arbiter_key":
            return FaceEvent(FaceEventKind.ARBITER_KEY, tr.t_ns) if tr.level else None
        if field == "power_sense":
            kind = FaceEventKind.POWER_ON if tr.level else FaceEventKind.POWER_OFF
            return FaceEvent(kind, tr.t_ns)
        if field == "battery_low" and tr.level:
            return FaceEvent(FaceEventKind.BATTERY_LOW, tr.t_ns)
        return None

    # -- into the face -------------------------------------------------------------------------
    async def show(self, view: FaceView) -> None:
        await super().show(view)
        if not self._opened or self._closed:
            return
        for field, side in (("red_led", Side.RED), ("black_led", Side.BLACK)):
            led = self._child(field)
            if led is not None:
                led.value = view.running is side or view.flag is side
        self._draw()

    def _draw(self) -> None:
        self._redraw = None
        view = self.last_view
        if view is None or self._closed or self.display is None:
            return
        now = time.monotonic_ns()
        shown = render_view(view, now, left_side=self.config.left_side)
        try:
            if isinstance(shown, str):
                self.display.show_text(shown)
            else:
                left, right, lm, rm = shown
                self.display.show(left, right, left_marks=lm, right_marks=rm)
        except (DisplayError, OSError) as exc:
            # A display fault must not stop the clock; count it and try again next redraw.
            self.stats["display_errors"] += 1
            log.warning("%s: display write failed: %s", self.name, exc)
        delay = _next_redraw_s(view, now)
        if delay is not None and self._loop is not None:
            self._redraw = self._loop.call_later(delay, self._draw)

    async def beep(self, ms: int = 100) -> None:
        if ms < 0:
            raise ValueError(f"beep length must be >= 0 ms, not {ms}")
        buzzer = self._child("buzzer")
        if buzzer is None or self._closed or self._loop is None:
            return
        if self._beep_off is not None:
            self._beep_off.cancel()
        buzzer.on()
        self._beep_off = self._loop.call_later(ms / 1000, buzzer.off)

    async def set_brightness(self, level: int) -> None:
        await super().set_brightness(level)
        if self.display is not None:
            self.display.set_brightness(level)

    def _child(self, field: str) -> Any:
        if (
            self.devices is None
            or self.devices.closed
            or field not in self.devices.namedtuple._fields
        ):
            return None
        return getattr(self.devices, field)
