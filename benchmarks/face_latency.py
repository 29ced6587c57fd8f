"""Press -> ClockFace event latency, over the serial link and over gpiozero MockFactory pins.

Measured on one monotonic clock in one process and event loop:

- ``bare``: the baseline, a bare pty round trip: one byte written through
  pyserial-asyncio-fast on the pty's slave side, echoed by the master side, read back.
- ``serial``: ``ClockEmulator.press()`` on the pty master -> a PRESS frame -> the
  ``SerialClockFace`` event from ``next_event()`` (frames, CRC, link, dedupe, offset mapping).
- ``gpio``: ``pin.drive_low()`` on a MockFactory pin -> gpiozero's callback thread ->
  ``call_soon_threadsafe`` -> the ``GpioClockFace`` event (debounce window included: a press
  is reported when the contact has been stable for ``debounce_ms``).

``ratio`` is serial p50 / bare p50; ``gpio_ratio`` is gpio p50 / bare p50.
"""

from __future__ import annotations

import asyncio
import os
import time
import tty

from _common import emit, parse_args, percentiles

from clock_service import Side
from firmware_bridge.serial.emulator import ClockEmulator
from firmware_bridge.serial.face import SerialClockFace

GPIO_DEBOUNCE_MS = 1  # the smallest window the config allows: measure the path, not the wait


async def measure_bare_pty(rounds: int) -> list[float]:
    import serial_asyncio_fast

    master, slave = os.openpty()
    tty.setraw(slave)
    loop = asyncio.get_running_loop()
    os.set_blocking(master, False)
    loop.add_reader(master, lambda: os.write(master, os.read(master, 64)))
    reader, writer = await serial_asyncio_fast.open_serial_connection(
        url=os.ttyname(slave), baudrate=115_200
    )
    samples = []
    try:
        for _ in range(rounds):
            t0 = time.monotonic_ns()
            writer.write(b"x")
            await reader.readexactly(1)
            samples.append((time.monotonic_ns() - t0) / 1e3)
    finally:
        loop.remove_reader(master)
        writer.close()
        await asyncio.sleep(0.05)
        os.close(master)
        os.close(slave)
    return samples


async def measure_serial_face(rounds: int) -> list[float]:
    samples = []
    async with ClockEmulator() as emu:
        url = await emu.open_pty()
        async with SerialClockFace(url) as face:
            for i in range(rounds):
                t0 = time.monotonic_ns()
                await emu.press(Side.RED if i % 2 else Side.BLACK)
                await face.next_event()
                samples.append((time.monotonic_ns() - t0) / 1e3)
    return samples


async def measure_gpio_face(rounds: int) -> list[float]:
    from gpiozero.pins.mock import MockFactory

    from firmware_bridge.displays import NullDisplay
    from firmware_bridge.face import FaceEventKind
    from firmware_bridge.gpio_face import GpioClockFace, GpioFaceConfig

    config = GpioFaceConfig(
        red_button=17, black_button=27, pause_key=22, arbiter_key=23, power_sense=24,
        debounce_ms=GPIO_DEBOUNCE_MS, sense_debounce_ms=1,
    )  # fmt: skip
    factory = MockFactory()
    samples = []
    try:
        async with GpioClockFace(config, pin_factory=factory, display=NullDisplay()) as face:
            factory.pin(24).drive_high()  # the clock is switched on
            while (await face.next_event()).kind is not FaceEventKind.POWER_ON:
                pass
            for i in range(rounds):
                pin = factory.pin(17 if i % 2 else 27)
                t0 = time.monotonic_ns()
                pin.drive_low()
                while (await face.next_event()).kind is not FaceEventKind.PRESS:
                    pass
                samples.append((time.monotonic_ns() - t0) / 1e3)
                pin.drive_high()
                await asyncio.sleep(2 * GPIO_DEBOUNCE_MS / 1000)  # released and settled
    finally:
        factory.close()
    return samples


async def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    rounds = 300 if args.quick else 2000
    bare = percentiles(await measure_bare_pty(rounds))
    serial = percentiles(await measure_serial_face(rounds))
    gpio = percentiles(await measure_gpio_face(rounds // 2))
    emit(
        {
            "rounds": rounds,
            "bare_pty_rtt_p50_us": bare["p50"],
            "bare_pty_rtt_p99_us": bare["p99"],
            "serial_p50_us": serial["p50"],
            "serial_p99_us": serial["p99"],
            "gpio_p50_us": gpio["p50"],
            "gpio_p99_us": gpio["p99"],
            "gpio_debounce_ms": GPIO_DEBOUNCE_MS,
            "gpio_ratio": gpio["p50"] / bare["p50"],
            "serial_p99_ratio": serial["p99"] / bare["p99"],
            "ratio": serial["p50"] / bare["p50"],
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
