"""``qizhong self-test``: check a freshly wired GPIO clock face, key by key.

(A serial clock — ``--url``, or a ``[[board]]`` with ``face = "serial"`` — is checked by
``selftest_serial``: the link round trip, the display, every key it has.)

Lights every segment and LED and beeps, then asks for each input in turn — red, black, pause,
arbiter, the power switch off and on — and reports each as PASS or FAIL (timeout), with any
other input seen meanwhile, which is how a swapped wire shows up. Exit code 0 only if every
input was seen. ``--mock`` runs the same code on gpiozero's MockFactory with a robot pressing
the keys (``--mock-dead KEY`` leaves one unpressed), for the demo and the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from clock_service import Side
from firmware_bridge.displays import ClockDisplay
from firmware_bridge.face import FaceError, FaceEventKind
from firmware_bridge.gpio_config import GpioFaceConfig, normalize_pin
from firmware_bridge.gpio_face import GpioClockFace
from firmware_bridge.selftest_serial import run_serial
from firmware_bridge.selftest_steps import (
    _ARB,
    _BLACK,
    _OFF,
    _ON,
    _PAUSE,
    _RED,
    KEY_STEPS,
    Step,
    StepResult,
)

__all__ = [
    "DEMO_WIRING",
    "KEY_STEPS",
    "Step",
    "StepResult",
    "add_arguments",
    "load_config",
    "plan_steps",
    "run",
    "run_selftest",
]

K = FaceEventKind

# The wiring docs/hardware.md describes; --mock uses it when no config is given.
DEMO_WIRING: dict[str, Any] = {
    "red_button": 17,
    "black_button": 27,
    "pause_key": 22,
    "arbiter_key": 23,
    "power_sense": 24,
    "battery_low": 25,
    "red_led": 5,
    "black_led": 6,
    "buzzer": 13,
    "display": {"driver": "max7219", "spi_port": 0, "spi_device": 0, "cascaded": 2},
}


_TEXT = {
    "zh": {
        "lit": "所有数码段与指示灯已点亮，请检查是否有不亮的段。",
        "ask": "请{what}（{pin}），{timeout:.0f} 秒内…",
        "pass": "  通过 {s:.2f} 秒",
        "fail": "  失败：{timeout:.0f} 秒内未收到",
        "other": "  另收到：{ev}",
        "all": "自检通过：全部 {n} 项正常。",
        "some": "自检未通过：{bad} / {n} 项失败：{names}",
    },
    "en": {
        "lit": "Every segment and LED is lit: look for any that is dark.",
        "ask": "Please {what} ({pin}), within {timeout:.0f} s...",
        "pass": "  PASS {s:.2f} s",
        "fail": "  FAIL: nothing within {timeout:.0f} s",
        "other": "  also seen: {ev}",
        "all": "Self-test PASSED: all {n} checks fine.",
        "some": "Self-test FAILED: {bad} of {n} checks failed: {names}",
    },
}


def plan_steps(face: GpioClockFace, *, power_off_now: bool) -> list[Step]:
    """The checks in order. A lever is asked for the side it is not resting on first."""
    sides = [_RED, _BLACK]
    if face.lever_side is Side.RED:
        sides.reverse()
    power = [_ON, _OFF, _ON] if power_off_now else [_OFF, _ON]
    return [*sides, _PAUSE, _ARB, *power]


async def run_selftest(
    face: GpioClockFace,
    *,
    timeout_s: float = 10.0,
    segments_s: float = 2.0,
    lang: str = "zh",
    out: Callable[[str], None] = print,
    on_ask: Callable[[Step], None] | None = None,
) -> list[StepResult]:
    """Run the checks on an open face; ``on_ask`` is told each step as it is asked."""
    text = _TEXT[lang]
    while not face._queue.empty():  # facts reported at open (power off, battery low)
        face._queue.get_nowait()
    power_off_now = not face.power_on
    display: ClockDisplay | None = face.display
    devices = face.devices
    if display is not None:
        display.all_on()
    for led in ("red_led", "black_led"):
        if devices is not None and led in devices.namedtuple._fields:
            getattr(devices, led).on()
    await face.beep(200)
    out(text["lit"])
    await asyncio.sleep(segments_s)
    if devices is not None:
        for led in ("red_led", "black_led"):
            if led in devices.namedtuple._fields:
                getattr(devices, led).off()
    pins = face.config.pin_map()
    results: list[StepResult] = []
    for step in plan_steps(face, power_off_now=power_off_now):
        what = step.zh if lang == "zh" else step.en
        out(text["ask"].format(what=what, pin=pins[step.key], timeout=timeout_s))
        if display is not None:
            display.show_text(step.shown)
        if on_ask is not None:
            on_ask(step)
        result = StepResult(step, False, timeout_s)
        start = time.monotonic()
        deadline = start + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            try:
                async with asyncio.timeout(left):
                    ev = await face.next_event()
            except TimeoutError:
                break
            if step.matches(ev):
                result.ok, result.after_s = True, time.monotonic() - start
                break
            result.others.append(ev)
            out(text["other"].format(ev=ev))
        out(
            text["pass"].format(s=result.after_s)
            if result.ok
            else text["fail"].format(timeout=timeout_s)
        )
        if result.ok:
            await face.beep(50)
        results.append(result)
    bad = [r for r in results if not r.ok]
    if bad:
        names = ", ".join(f"{r.step.key}:{r.step.kind.value}" for r in bad)
        out(text["some"].format(bad=len(bad), n=len(results), names=names))
    else:
        out(text["all"].format(n=len(results)))
    if display is not None:
        display.show_text("PASS" if not bad else "FAIL")
    return results


# -- the command ---------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_argument_group("where the wiring comes from")
    src.add_argument("--config", type=Path, help="the node config (TOML) with [[board]] tables")
    src.add_argument("--board", help="the board id whose [board.gpio] table to test")
    src.add_argument("--gpio", type=Path, help="a TOML file holding just a GpioFaceConfig table")
    src.add_argument("--url", help="a serial clock: /dev/ttyUSB0, socket://host:port, a pty")
    parser.add_argument("--serial", action="store_true", help="with --mock: a serial clock")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per check (10)")
    parser.add_argument("--segments-s", type=float, default=2.0, help="all-segments time (2)")
    parser.add_argument("--lang", choices=["zh", "en"], default="zh")
    parser.add_argument("--mock", action="store_true", help="MockFactory pins and a key robot")
    parser.add_argument(
        "--mock-dead", action="append", default=[], metavar="KEY",
        help="with --mock: an input the robot never works (e.g. pause_key)",
    )  # fmt: skip


def load_config(args: argparse.Namespace) -> GpioFaceConfig:
    """The face config from ``--gpio``, ``--config``/``--board``, or the demo wiring."""
    if args.gpio is not None:
        return GpioFaceConfig.model_validate(tomllib.loads(args.gpio.read_text("utf-8")))
    if args.config is not None:
        if not args.board:
            raise ValueError("--config needs --board ID to pick the board")
        data = tomllib.loads(args.config.read_text("utf-8"))
        boards = data.get("board", [])
        for board in boards:
            if str(board.get("id")) == args.board:
                if board.get("face") == "serial":
                    if not board.get("url"):
                        raise ValueError(f"board {args.board}: a serial face needs url")
                    raise _SerialBoard(str(board["url"]))
                if board.get("face") != "gpio":
                    raise ValueError(f"board {args.board} has face {board.get('face')!r}, not gpio")
                if "gpio" not in board:
                    raise ValueError(f"board {args.board} has no [board.gpio] table")
                return GpioFaceConfig.model_validate(board["gpio"])
        ids = ", ".join(str(b.get("id")) for b in boards) or "none"
        raise ValueError(f"no board {args.board!r} in {args.config} (boards: {ids})")
    if args.mock:
        return GpioFaceConfig.model_validate(DEMO_WIRING)
    raise ValueError("give --gpio FILE, or --config FILE --board ID (or --mock for the demo)")


class _MockHands:
    """For ``--mock``: works the mock pins the way a person would, with contact bounce."""

    def __init__(self, factory: Any, config: GpioFaceConfig, dead: set[str]) -> None:
        self.factory, self.config, self.dead = factory, config, dead
        self.tasks: set[asyncio.Task[None]] = set()

    def __call__(self, step: Step) -> None:
        if step.key not in self.dead:
            task = asyncio.get_running_loop().create_task(self._work(step))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _work(self, step: Step) -> None:
        await asyncio.sleep(0.05)
        pin = self.factory.pin(normalize_pin(getattr(self.config, step.key)))
        if step.key == "power_sense":
            on_high = self.config.power_on_level == "high"
            (pin.drive_high if (step.kind is K.POWER_ON) == on_high else pin.drive_low)()
            return
        press, release = (
            (pin.drive_low, pin.drive_high) if self.config.pull_up
            else (pin.drive_high, pin.drive_low)
        )  # fmt: skip
        for _ in range(3):  # bounce
            press()
            release()
        press()
        if self.config.lever and step.side is not None:
            other = "black_button" if step.side is Side.RED else "red_button"
            opin = self.factory.pin(normalize_pin(getattr(self.config, other)))
            (opin.drive_high if self.config.pull_up else opin.drive_low)()
            return
        await asyncio.sleep(0.08)
        release()


def _mock_display(config: GpioFaceConfig, factory: Any) -> ClockDisplay | None:
    if config.display.driver == "max7219":
        from luma.core.device import dummy

        from firmware_bridge.displays_max7219 import Max7219Display

        return Max7219Display(dummy(width=8 * config.display.cascaded, height=8, mode="1"))
    return None  # tm1637 runs on the mock pins as it is; none is none


async def _main(args: argparse.Namespace, config: GpioFaceConfig) -> int:
    factory: Any = None
    display = None
    on_ask = None
    if args.mock:
        from gpiozero.pins.mock import MockFactory

        factory = MockFactory()
        display = _mock_display(config, factory)
        on_ask = _MockHands(factory, config, set(args.mock_dead))
    face = GpioClockFace(config, pin_factory=factory, display=display, name="self-test")
    async with face:
        if args.mock:
            # A mock clock starts switched on, as a real one on the bench would.
            pin = factory.pin(normalize_pin(config.power_sense))
            (pin.drive_high if config.power_on_level == "high" else pin.drive_low)()
            await asyncio.sleep(config.sense_debounce_ms / 1000 + 0.05)
        results = await run_selftest(
            face, timeout_s=args.timeout, segments_s=args.segments_s, lang=args.lang,
            on_ask=on_ask,
        )  # fmt: skip
    return 0 if all(r.ok for r in results) else 1


class _SerialBoard(Exception):
    def __init__(self, url: str) -> None:
        self.url = url


def run(args: argparse.Namespace) -> int:
    if getattr(args, "url", None) or (args.mock and getattr(args, "serial", False)):
        return run_serial(args, getattr(args, "url", None))
    try:
        config = load_config(args)
    except _SerialBoard as board:
        return run_serial(args, board.url)
    except (OSError, ValueError, ValidationError, tomllib.TOMLDecodeError) as exc:
        print(f"self-test: bad wiring config: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_main(args, config))
    except FaceError as exc:
        print(f"self-test: {exc}", file=sys.stderr)
        return 2
