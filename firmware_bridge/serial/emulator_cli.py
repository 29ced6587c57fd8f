"""``qizhong emulate-clock``: the serial clock emulator as a program, with a keyboard UI.

``--listen socket://127.0.0.1:PORT`` serves TCP (the host opens ``socket://127.0.0.1:PORT``);
``--pty`` creates a pty and prints its path (the host opens that path as a serial port). The
first line printed is ``clock emulator: <url>``. When stdin is a terminal the keys play the
clock (see ``KEYS``) and the status line shows what the host displays; otherwise the
emulator just serves until interrupted (SIGINT/SIGTERM), which it always handles cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import termios
import tty
from collections.abc import Awaitable, Callable

from clock_service import Side
from firmware_bridge.serial.codec import PROTOCOL_VERSION
from firmware_bridge.serial.device import FAULTS
from firmware_bridge.serial.emulator import ClockEmulator

__all__ = ["KEYS", "add_arguments", "run"]

KEYS = {
    "a": "red presses",
    "l": "black presses",
    "p": "pause key",
    "r": "arbiter key",
    "o": "power switch off/on",
    "b": "battery low",
    "g": "inject 16 bytes of garbage",
    "s": "stop/resume answering",
    "x": "reboot (a brown-out: new session)",
    "q": "quit",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--listen", metavar="URL", help="serve socket://HOST:PORT (PORT 0: any)")
    where.add_argument("--pty", action="store_true", help="create a pty and print its path")
    parser.add_argument(
        "--device-id", type=lambda s: int(s, 0), default=0x51A0_0001, help="32-bit device id"
    )
    parser.add_argument(
        "--protocol-version", type=int, default=PROTOCOL_VERSION,
        help="version announced in HELLO (another one tests the host's refusal)",
    )  # fmt: skip
    parser.add_argument("--delay-ms", type=float, default=0.0, help="hold back every sent byte")
    parser.add_argument("--no-ui", action="store_true", help="no keyboard UI even on a terminal")
    parser.add_argument(
        "--auto-press-ms", type=int, default=0, metavar="MS",
        help="press red and black in turn every MS ms (a clock for the conformance kit)",
    )  # fmt: skip
    parser.add_argument(
        "--fault", action="append", default=[], choices=sorted(FAULTS),
        help="break one rule of docs/protocol.md on purpose (tests of the conformance kit)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))


async def _main(args: argparse.Namespace) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with ClockEmulator(device_id=args.device_id, faults=frozenset(args.fault)) as emu:
        emu.hello_version = args.protocol_version
        emu.set_delay(args.delay_ms)
        url = await emu.listen(args.listen) if args.listen else await emu.open_pty()
        print(f"clock emulator: {url}", flush=True)
        presser = None
        if args.auto_press_ms > 0:
            presser = loop.create_task(_auto_press(emu, args.auto_press_ms / 1000))
        if sys.stdin.isatty() and not args.no_ui:
            await _keyboard(emu, stop)
        else:
            await stop.wait()
        if presser is not None:
            presser.cancel()
    return 0


async def _auto_press(emu: ClockEmulator, every_s: float) -> None:
    side = Side.RED
    while True:
        await asyncio.sleep(every_s)
        if emu.connected:
            await emu.press(side)
            side = side.other


async def _keyboard(emu: ClockEmulator, stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    print("  ".join(f"[{k}] {v}" for k, v in KEYS.items()), flush=True)

    def draw() -> None:
        state = "host connected" if emu.connected else "waiting for host"
        if emu.link.muted:
            state = "SILENT"
        power = "on" if emu.power_on_state else "OFF"
        sys.stdout.write(f"\r\x1b[K{emu.display()}  | power {power} | {state}")
        sys.stdout.flush()

    actions: dict[str, Callable[[], Awaitable[None]]] = {
        "a": lambda: emu.press(Side.RED),
        "l": lambda: emu.press(Side.BLACK),
        "p": emu.pause_key,
        "r": emu.arbiter_key,
        "o": lambda: emu.power_off() if emu.power_on_state else emu.power_on(),
        "b": emu.battery_low,
        "g": lambda: emu.inject_garbage(os.urandom(16)),
    }

    pending: set[asyncio.Task[None]] = set()

    def key_ready() -> None:
        ch = os.read(fd, 1).decode(errors="replace").lower()
        if ch in ("q", "\x03", "\x04"):
            stop.set()
        elif ch == "s":
            emu.resume_answering() if emu.link.muted else emu.stop_answering()
        elif ch == "x":
            emu.reboot()
        elif ch in actions:
            task = loop.create_task(_await(actions[ch]()), name=f"key {ch}")
            pending.add(task)  # the loop keeps only weak references to tasks
            task.add_done_callback(pending.discard)
        draw()

    tty.setcbreak(fd)
    loop.add_reader(fd, key_ready)
    emu.on_change = draw
    try:
        while not stop.is_set():
            draw()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.1):
                    await stop.wait()
    finally:
        emu.on_change = None
        loop.remove_reader(fd)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        print()


async def _await(awaitable: Awaitable[None]) -> None:
    await awaitable
