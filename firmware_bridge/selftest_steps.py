"""The self-test's steps: each input a clock face has, in the order a player is asked for it.

Shared by the GPIO self-test (``selftest``) and the serial one (``selftest_serial``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clock_service import Side
from firmware_bridge.face import FaceEvent, FaceEventKind

__all__ = ["KEY_STEPS", "Step", "StepResult"]

K = FaceEventKind


@dataclass(frozen=True, slots=True)
class Step:
    key: str  # the config field whose input this step checks
    kind: FaceEventKind
    side: Side | None
    zh: str
    en: str
    shown: str  # what the display says meanwhile (7-segment friendly)

    def matches(self, event: FaceEvent) -> bool:
        return event.kind is self.kind and event.side is self.side


@dataclass(slots=True)
class StepResult:
    step: Step
    ok: bool
    after_s: float
    others: list[FaceEvent] = field(default_factory=list)


_RED = Step("red_button", K.PRESS, Side.RED, "按红方按钮", "press RED's button", "rEd")
_BLACK = Step("black_button", K.PRESS, Side.BLACK, "按黑方按钮", "press BLACK's button", "bLAC")
_PAUSE = Step("pause_key", K.PAUSE_KEY, None, "按暂停键", "press the PAUSE key", "PAUSE")
_ARB = Step("arbiter_key", K.ARBITER_KEY, None, "按裁判键", "press the ARBITER key", "Arb")
_OFF = Step("power_sense", K.POWER_OFF, None, "关闭棋钟电源开关", "switch the clock OFF", "OFF")
_ON = Step("power_sense", K.POWER_ON, None, "打开棋钟电源开关", "switch the clock ON", "On")
KEY_STEPS = (_RED, _BLACK, _PAUSE, _ARB, _OFF, _ON)  # a serial clock's order (selftest_serial)
