"""``qizhong self-test --url URL``: check a serial clock — the link, the display, every key.

1. The handshake: the clock's id, firmware and capabilities.
2. The link round trip: PING/PONG round trips (the best one printed) and an acknowledged
   round trip (``SerialClockFace.quiet``: HELLO, HELLO_ACK, then PING/PONG behind it).
3. The display: every digit lit (`8`s), full brightness and a beep, each acknowledged by the
   clock; the person looks for a dark segment.
4. Each key the clock says it has (HELLO capabilities) in turn, as the GPIO self-test does.

Exit code 0 only if every check passed. ``--mock`` plays the clock with the emulator and a
robot pressing its keys (``--mock-dead KEY`` leaves one unpressed).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware_bridge.face import FaceError, FaceView
from firmware_bridge.selftest_steps import KEY_STEPS, Step
from firmware_bridge.serial.face import SerialClockFace
from firmware_bridge.serial.messages import Capability

__all__ = ["Check", "run_serial", "run_serial_selftest", "serial_steps"]

_TEXT = {
    "zh": {
        "clock": "计时钟 {id:#010x}，固件 {fw}，功能 {caps}",
        "link": "链路往返：最佳 {rtt:.2f} 毫秒，确认往返{ok}",
        "display": "所有数码段已点亮、亮度最高并鸣响，计时钟已确认{ok}；请检查是否有不亮的段。",
        "ask": "请{what}，{timeout:.0f} 秒内…",
        "pass": "  通过 {s:.2f} 秒",
        "fail": "  失败：{timeout:.0f} 秒内未收到",
        "other": "  另收到：{ev}",
        "yes": "成功",
        "no": "失败",
        "all": "自检通过：全部 {n} 项正常。",
        "some": "自检未通过：{bad} / {n} 项失败：{names}",
    },
    "en": {
        "clock": "clock {id:#010x}, firmware {fw}, capabilities {caps}",
        "link": "link round trip: best {rtt:.2f} ms, acknowledged round trip {ok}",
        "display": "every segment lit, full brightness and a beep, acknowledged {ok}; "
        "look for a dark segment.",
        "ask": "Please {what}, within {timeout:.0f} s...",
        "pass": "  PASS {s:.2f} s",
        "fail": "  FAIL: nothing within {timeout:.0f} s",
        "other": "  also seen: {ev}",
        "yes": "PASS",
        "no": "FAIL",
        "all": "Self-test PASSED: all {n} checks fine.",
        "some": "Self-test FAILED: {bad} of {n} checks failed: {names}",
    },
}


@dataclass(slots=True)
class Check:
    name: str
    ok: bool


def serial_steps(capabilities: Capability) -> list[Step]:
    """The keys this clock says it has, in the GPIO self-test's order."""
    needs = {
        "pause_key": Capability.PAUSE_KEY,
        "arbiter_key": Capability.ARBITER_KEY,
        "power_sense": Capability.POWER_SENSE,
    }
    return [s for s in KEY_STEPS if s.key not in needs or capabilities & needs[s.key]]


async def run_serial_selftest(
    face: SerialClockFace,
    *,
    timeout_s: float = 10.0,
    lang: str = "zh",
    out: Callable[[str], None] = print,
    on_ask: Callable[[Step], None] | None = None,
) -> list[Check]:
    """Run the checks on an open serial face whose link is up."""
    text = _TEXT[lang]
    yes_no = {True: text["yes"], False: text["no"]}
    checks: list[Check] = []
    hello = face.device
    if hello is None or not face.link_up:
        out(text["some"].format(bad=1, n=1, names="handshake"))
        return [Check("handshake", False)]
    fw = ".".join(map(str, hello.firmware))
    caps = "|".join(c.name or "" for c in Capability if c & hello.capabilities) or "-"
    out(text["clock"].format(id=hello.device_id, fw=fw, caps=caps))
    await asyncio.sleep(1.0)  # a few PING/PONG round trips
    quiet = await face.quiet(timeout_s)
    rtt = face.link.offset.best_rtt_ns
    ok = quiet and rtt is not None
    out(text["link"].format(rtt=(rtt or 0) / 1e6, ok=yes_no[ok]))
    checks.append(Check("link", ok))
    while not face._queue.empty():  # facts reported at connect
        face._queue.get_nowait()
    await face.set_brightness(15)
    await face.show(FaceView(8 * 3_600_000 + 88 * 60_000, 8 * 3_600_000, text="88888888"))
    await face.beep(200)
    acked = await _acknowledged(face, timeout_s)
    out(text["display"].format(ok=yes_no[acked]))
    checks.append(Check("display", acked))
    for step in serial_steps(hello.capabilities):
        what = step.zh if lang == "zh" else step.en
        out(text["ask"].format(what=what, timeout=timeout_s))
        await face.show(FaceView(0, 0, text=step.shown))
        if on_ask is not None:
            on_ask(step)
        start = time.monotonic()
        got = False
        while (left := start + timeout_s - time.monotonic()) > 0:
            try:
                async with asyncio.timeout(left):
                    event = await face.next_event()
            except TimeoutError:
                break
            if step.matches(event):
                got = True
                break
            out(text["other"].format(ev=event))
        out(text["pass"].format(s=time.monotonic() - start) if got else
            text["fail"].format(timeout=timeout_s))  # fmt: skip
        checks.append(Check(f"{step.key}:{step.kind.value}", got))
    bad = [c.name for c in checks if not c.ok]
    if bad:
        out(text["some"].format(bad=len(bad), n=len(checks), names=", ".join(bad)))
    else:
        out(text["all"].format(n=len(checks)))
    await face.show(FaceView(0, 0, text="FAIL" if bad else "PASS"))
    return checks


async def _acknowledged(face: SerialClockFace, timeout_s: float) -> bool:
    try:
        async with asyncio.timeout(timeout_s):
            while not face.link.sender.idle:  # noqa: ASYNC110 (acks have no event to wait on)
                await asyncio.sleep(0.01)
    except TimeoutError:
        return False
    return True


async def _main(args: argparse.Namespace, url: str | None) -> int:
    from firmware_bridge.serial.emulator import ClockEmulator

    async with ClockEmulator() as emu:
        on_ask = None
        if url is None:  # --mock: the emulator plays the clock, a robot its keys
            url = await emu.listen()
            on_ask = _Robot(emu, set(args.mock_dead))
        face = SerialClockFace(url, name="self-test")
        async with face:
            checks = await run_serial_selftest(
                face, timeout_s=args.timeout, lang=args.lang, on_ask=on_ask
            )
    return 0 if all(c.ok for c in checks) else 1


class _Robot:
    def __init__(self, emu: object, dead: set[str]) -> None:
        self.emu, self.dead = emu, dead
        self.tasks: set[asyncio.Task[None]] = set()

    def __call__(self, step: Step) -> None:
        if step.key in self.dead:
            return
        task = asyncio.get_running_loop().create_task(self._work(step))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _work(self, step: Step) -> None:
        await asyncio.sleep(0.05)
        emu: Any = self.emu
        if step.side is not None:
            await emu.press(step.side)
        elif step.key == "pause_key":
            await emu.pause_key()
        elif step.key == "arbiter_key":
            await emu.arbiter_key()
        elif step.kind.value == "power_off":
            await emu.power_off()
        else:
            await emu.power_on()


def run_serial(args: argparse.Namespace, url: str | None) -> int:
    """``url`` None with ``--mock``: the emulator. Exit 2 when the clock cannot be reached."""
    try:
        return asyncio.run(_main(args, url))
    except FaceError as exc:
        print(f"self-test: {exc}", file=sys.stderr)
        return 2
