"""SerialClockFace <-> ClockEmulator end to end, over socket:// and over a pty."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import AsyncIterator

import pytest

from clock_service import Side
from firmware_bridge.face import FaceEvent, FaceEventKind, FaceView
from firmware_bridge.serial.emulator import ClockEmulator, EmulatorError
from firmware_bridge.serial.face import LinkError, ProtocolVersionError, SerialClockFace
from firmware_bridge.serial.frames import PROTOCOL_VERSION, SHOW_FLAG_RED, Frame, Press

K = FaceEventKind


@pytest.fixture(params=["socket", "pty"])
async def emu(request: pytest.FixtureRequest) -> AsyncIterator[ClockEmulator]:
    async with ClockEmulator() as emulator:
        if request.param == "socket":
            await emulator.listen("socket://127.0.0.1:0")
        else:
            await emulator.open_pty()
        yield emulator


@pytest.fixture
async def face(emu: ClockEmulator) -> AsyncIterator[SerialClockFace]:
    assert emu.url is not None
    async with SerialClockFace(emu.url) as f:
        assert f.link_up
        yield f


async def next_event(face: SerialClockFace, timeout: float = 3.0) -> FaceEvent:
    return await asyncio.wait_for(face.next_event(), timeout)


async def test_every_key_becomes_one_face_event(face: SerialClockFace, emu: ClockEmulator):
    assert face.device is not None and face.device.device_id == 0x51A0_0001
    before = time.monotonic_ns()
    await emu.press(Side.RED)
    await emu.press(Side.BLACK)
    await emu.pause_key()
    await emu.arbiter_key()
    await emu.power_off()
    await emu.power_on()
    await emu.battery_low()
    events = [await next_event(face) for _ in range(7)]
    assert [(e.kind, e.side) for e in events] == [
        (K.PRESS, Side.RED), (K.PRESS, Side.BLACK), (K.PAUSE_KEY, None), (K.ARBITER_KEY, None),
        (K.POWER_OFF, None), (K.POWER_ON, None), (K.BATTERY_LOW, None),
    ]  # fmt: skip
    device_ms = [e.device_ms for e in events]
    assert all(ms is not None for ms in device_ms) and device_ms == sorted(device_ms)  # type: ignore[type-var]
    # The offset estimate may place a press up to half a round trip early.
    assert all(before - 5_000_000 <= e.mono_ns <= time.monotonic_ns() for e in events)
    assert face.stats.rejected == 0


async def test_show_beep_brightness_reach_the_clock(face: SerialClockFace, emu: ClockEmulator):
    now = face.now_ns()
    await face.show(FaceView(1_712_345, 19_950, Side.RED, flag=None, text="r7 b12", mono_ns=now))
    await face.beep(250)
    await face.set_brightness(9)
    await emu.wait_until(lambda: emu.shown is not None and emu.beeps and emu.brightness == 9)
    assert emu.shown is not None
    assert emu.shown.text == "r7 b12" and emu.shown.running is Side.RED
    assert 1_712_000 < emu.shown.red_ms <= 1_712_345 and emu.shown.black_ms == 19_950
    assert emu.beeps == [250]
    assert "19.9" in emu.display() and "r7 b12" in emu.display()
    await face.show(FaceView(0, 5000, None, flag=Side.RED, text="FLAG", mono_ns=face.now_ns()))
    await emu.wait_until(lambda: emu.shown is not None and emu.shown.text == "FLAG")
    assert emu.shown is not None and emu.shown.flags == SHOW_FLAG_RED
    with pytest.raises(ValueError, match="ASCII"):
        await face.show(FaceView(1, 1, text="暂停"))


async def test_garbage_between_frames_is_counted_and_changes_nothing(face, emu):
    for i in range(20):
        await emu.inject_garbage(bytes([0x07, 0x99, 0x00, 0x42] * (i + 1)))
        await emu.press(Side.RED if i % 2 else Side.BLACK)
    # a genuine frame repeated by the line: delivered once
    await emu.inject_garbage(b"\0" + Frame(200, Press(Side.RED, 1)).to_bytes())
    events = [await next_event(face) for _ in range(20)]
    assert all(e.kind is K.PRESS for e in events)
    await asyncio.sleep(0.3)
    assert face._queue.empty()
    assert face.stats.rejected >= 20 and face.stats.duplicates == 1


async def test_silent_clock_is_lost_within_2s_then_restored_without_repeats(face, emu):
    await face.show(FaceView(60_000, 60_000, Side.RED, mono_ns=face.now_ns()))
    await emu.wait_until(lambda: emu.shown is not None)
    emu.stop_answering()
    start = time.monotonic()
    assert (await next_event(face)).kind is K.LINK_LOST
    assert time.monotonic() - start < 2.0
    await emu.press(Side.BLACK)  # pressed while nobody listens
    await face.show(FaceView(50_000, 60_000, Side.BLACK, text="NEW", mono_ns=face.now_ns()))
    emu.resume_answering()
    kinds = [(await next_event(face)).kind for _ in range(2)]
    assert kinds == [K.LINK_RESTORED, K.PRESS]
    await emu.wait_until(lambda: emu.shown is not None and emu.shown.text == "NEW")
    await asyncio.sleep(0.5)
    assert face._queue.empty()  # the resent press did not come twice
    assert face.stats.link_lost == 1 and face.stats.link_restored == 1


async def test_delayed_clock_still_delivers_and_stays_up(face, emu):
    emu.set_delay(80)
    await emu.press(Side.RED)
    event = await next_event(face)
    assert event.kind is K.PRESS and face.link_up
    emu.set_delay(0)


async def test_other_protocol_version_at_open_is_a_clear_error(emu: ClockEmulator):
    emu.hello_version = PROTOCOL_VERSION + 1
    assert emu.url is not None
    face = SerialClockFace(emu.url)
    with pytest.raises(ProtocolVersionError, match="version 2"):
        await face.open()
    assert face.stats.version_mismatch >= 1
    await face.close()


async def test_other_protocol_version_after_a_reboot_reports_link_lost(face, emu):
    emu.stop_answering()
    assert (await next_event(face)).kind is K.LINK_LOST
    emu.hello_version = PROTOCOL_VERSION + 1
    emu.resume_answering()
    await emu.press(Side.RED)
    await asyncio.sleep(0.8)
    assert face._queue.empty() and not face.link_up
    assert isinstance(face.last_error, ProtocolVersionError)
    assert face.stats.version_mismatch >= 1


async def test_dropped_connection_reconnects() -> None:
    async with ClockEmulator() as emu:
        url = await emu.listen()
        async with SerialClockFace(url, reconnect_interval=0.2) as face:
            assert emu.link.frames is not None
            emu.link.frames.close()  # the TCP connection drops
            assert (await next_event(face)).kind is K.LINK_LOST
            assert (await next_event(face)).kind is K.LINK_RESTORED
            await emu.press(Side.RED)
            assert (await next_event(face)).kind is K.PRESS
            assert face.stats.connects == 2


async def test_unopenable_url_is_a_link_error() -> None:
    face = SerialClockFace("/dev/does-not-exist-qizhong")
    with pytest.raises(LinkError, match="does-not-exist"):
        await face.open()
    await face.close()
    with pytest.raises(EmulatorError):
        await ClockEmulator().listen("tcp://nowhere")


async def test_emulate_clock_command_serves_and_stops_cleanly() -> None:
    code = (
        "import argparse, sys; from firmware_bridge.serial import emulator_cli as m; "
        "p = argparse.ArgumentParser(); m.add_arguments(p); "
        "sys.exit(m.run(p.parse_args(sys.argv[1:])))"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, "--listen", "socket://127.0.0.1:0",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 10)).decode()
    assert line.startswith("clock emulator: socket://127.0.0.1:")
    async with SerialClockFace(line.split(": ", 1)[1].strip()) as face:
        assert face.link_up
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), 10) == 0
