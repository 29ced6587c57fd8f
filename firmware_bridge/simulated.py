"""A clock face with two simulated players, for the demo, load runs and tests.

``mode="random"``: whenever the face is shown a running side, that side's player thinks for a
time drawn from a log-normal distribution (xiangqi rapid games: most moves quick, a few long
thinks) and presses; now and then a player pauses the clock. ``mode="idle"``: nobody presses
(flag and late-arrival tests). Either way, tests and the demo can act by hand through
``press``, ``pause_key``, ``arbiter_key``, ``power_off`` and ``power_on``.
"""

from __future__ import annotations

import asyncio
import math
import random
from typing import Literal

from clock_service import Side
from firmware_bridge.face import ClockFace, FaceEvent, FaceEventKind, FaceView

__all__ = ["SimulatedFace"]


class SimulatedFace(ClockFace):
    def __init__(
        self,
        *,
        mode: Literal["random", "idle"] = "random",
        mean_move_s: float = 20.0,
        sigma: float = 0.9,
        pause_probability: float = 0.0,
        pause_s: float = 10.0,
        stop_after_moves: int | None = None,
        speed: float = 1.0,
        seed: int | None = None,
        power_off_after_s: float | None = None,
        power_off_for_s: float = 30.0,
        name: str = "simulated",
    ) -> None:
        super().__init__(name=name)
        if mode not in ("random", "idle"):
            raise ValueError(f"simulated face mode must be 'random' or 'idle', not {mode!r}")
        if mean_move_s <= 0 or speed <= 0 or sigma < 0:
            raise ValueError("mean_move_s and speed must be positive, sigma not negative")
        if not 0.0 <= pause_probability <= 1.0:
            raise ValueError("pause_probability must be within 0..1")
        self.mode = mode
        self.speed = speed
        self.pause_probability = pause_probability
        self.pause_s = pause_s
        self.stop_after_moves = stop_after_moves
        self._rng = random.Random(seed)
        # Log-normal with the asked mean: mean = exp(mu + sigma²/2).
        self._mu = math.log(mean_move_s) - sigma * sigma / 2
        self._sigma = sigma
        self._timer: asyncio.TimerHandle | None = None
        self._thinking: Side | None = None
        self._presses = 0
        self.powered = True
        # A scripted fault for the demo: the clock's power switch goes off once, after this
        # many (simulated-speed) seconds from open, for power_off_for_s.
        self.power_off_after_s = power_off_after_s
        self.power_off_for_s = power_off_for_s
        self._fault: asyncio.TimerHandle | None = None
        self.brightness = 15
        self.beeps: list[int] = []

    def think_time_s(self) -> float:
        """One move's thinking time in (simulated-speed) seconds."""
        return self._rng.lognormvariate(self._mu, self._sigma) / self.speed

    # -- by hand -------------------------------------------------------------------------------
    def press(self, side: Side) -> None:
        self._presses += 1
        self._emit(FaceEvent(FaceEventKind.PRESS, self.now_ns(), side=side))

    def pause_key(self) -> None:
        self._emit(FaceEvent(FaceEventKind.PAUSE_KEY, self.now_ns()))

    def arbiter_key(self) -> None:
        self._emit(FaceEvent(FaceEventKind.ARBITER_KEY, self.now_ns()))

    def power_off(self) -> None:
        self.powered = False
        self._cancel()
        self._emit(FaceEvent(FaceEventKind.POWER_OFF, self.now_ns()))

    def power_on(self) -> None:
        self.powered = True
        self._emit(FaceEvent(FaceEventKind.POWER_ON, self.now_ns()))

    # -- the face --------------------------------------------------------------------------------
    async def show(self, view: FaceView) -> None:
        await super().show(view)
        if self.mode == "idle" or not self.powered or self.closed:
            return
        if view.running is None or view.flag is not None:
            self._cancel()
            return
        if view.running is self._thinking:
            return  # same player still thinking: a refresh, not a new turn
        self._cancel()
        if self.stop_after_moves is not None and self._presses >= self.stop_after_moves:
            return
        self._thinking = view.running
        loop = asyncio.get_running_loop()
        if self._rng.random() < self.pause_probability:
            self._timer = loop.call_later(self.think_time_s() / 2, self._pause_then_resume)
        else:
            self._timer = loop.call_later(self.think_time_s(), self._press_now, view.running)

    def _press_now(self, side: Side) -> None:
        self._timer = None
        self._thinking = None
        if not self.closed and self.powered:
            self.press(side)

    def _pause_then_resume(self) -> None:
        self._thinking = None
        self.pause_key()
        self._timer = asyncio.get_running_loop().call_later(self.pause_s / self.speed, self._resume)

    def _resume(self) -> None:
        self._timer = None
        if not self.closed and self.powered:
            self.pause_key()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._thinking = None

    async def beep(self, ms: int = 100) -> None:
        self.beeps.append(ms)

    async def set_brightness(self, level: int) -> None:
        await super().set_brightness(level)
        self.brightness = level

    async def _open(self) -> None:
        if self.power_off_after_s is not None:
            loop = asyncio.get_running_loop()
            self._fault = loop.call_later(self.power_off_after_s / self.speed, self._power_fault)

    def _power_fault(self) -> None:
        self.power_off()
        loop = asyncio.get_running_loop()
        self._fault = loop.call_later(self.power_off_for_s / self.speed, self.power_on)

    async def _close(self) -> None:
        self._cancel()
        if self._fault is not None:
            self._fault.cancel()
