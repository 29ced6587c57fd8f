"""Issue 13, cases 2–4 on the link: no press lost while the link stays up, a second HELLO_ACK
never rewinds a counter, a clock reboot while the link is up is a new session.

Written from docs/protocol.md §4–§6 and the issue: a device keeps every event until it is
acknowledged; a device that gives up on one re-handshakes so it is resent; the host takes
events it has not delivered, by the seq the device gave them.
"""

from __future__ import annotations

import asyncio

from support.serial_fakes import FakeTransport, connect_pair, feed_bytewise, reboot_emulator
from support.serial_link import DeviceRecorder, HostRecorder, device_alone, host_alone, until

from clock_service import Side
from firmware_bridge.face import FaceEventKind, FaceView
from firmware_bridge.serial.device import DeviceLink
from firmware_bridge.serial.emulator import ClockEmulator
from firmware_bridge.serial.face import SerialClockFace
from firmware_bridge.serial.frames import (
    PROTOCOL_VERSION,
    Capability,
    Frame,
    Hello,
    HelloAck,
    Press,
    Show,
)
from firmware_bridge.serial.link import HostLink
from firmware_bridge.serial.stream import FrameDecoder, LinkStats


def drop_presses_to_host(device_t: FakeTransport) -> dict[str, bool]:
    """Make the device→host wire lose every PRESS frame while ``switch['on']``; PONGs pass."""
    switch = {"on": False}
    wire = device_t.wire
    assert wire is not None
    send = wire.send

    def filtered(data: bytes) -> None:
        frames = FrameDecoder(LinkStats()).feed(bytes(data))
        if switch["on"] and any(isinstance(f.message, Press) for f in frames):
            return
        send(data)

    wire.send = filtered  # type: ignore[method-assign]
    return switch


async def test_a_press_whose_every_copy_is_lost_while_pings_pass_is_still_delivered() -> None:
    # Case 2: all 9 copies lost, the link never looks down; the device must re-handshake.
    host_rec, dev_rec = HostRecorder(), DeviceRecorder()
    host, device = HostLink(host_rec), DeviceLink(dev_rec)
    _, device_t = connect_pair(host, device)
    await until(lambda: host.up and device.acked)
    switch = drop_presses_to_host(device_t)
    switch["on"] = True
    device.send_reliable(Press(Side.RED, 1023))
    await until(lambda: device.stats.tx_failed >= 1, timeout=3)  # 1 + 8 copies, all lost
    switch["on"] = False
    await until(lambda: host_rec.messages, timeout=3)
    assert host_rec.messages == [Press(Side.RED, 1023)]
    assert host.stats.link_lost == 0  # it came back without the link ever looking lost
    await until(lambda: device.sender.idle)
    host.close()
    device.close()


async def test_a_frame_the_host_skipped_a_gap_for_is_delivered_when_it_comes() -> None:
    # Case 2: the host goes by the device's seq (which it has not delivered), not its counter.
    link, rec, _ = host_alone()
    link.receiver.gap_timeout = 0.05
    feed_bytewise(link.frames, Frame(1, Press(Side.RED, 10)).to_bytes())  # type: ignore[arg-type]
    feed_bytewise(link.frames, Frame(3, Press(Side.RED, 30)).to_bytes())  # type: ignore[arg-type]
    await until(lambda: len(rec.messages) == 2)
    feed_bytewise(link.frames, Frame(2, Press(Side.BLACK, 20)).to_bytes())  # type: ignore[arg-type]
    assert rec.messages[-1] == Press(Side.BLACK, 20)
    # ... once: a repeat of it is a duplicate now
    feed_bytewise(link.frames, Frame(2, Press(Side.BLACK, 20)).to_bytes())  # type: ignore[arg-type]
    assert len(rec.messages) == 3
    link.close()


async def test_a_second_hello_ack_never_rewinds_the_device_counter() -> None:
    # Case 3: the device sent HELLO on connect and again on the first PING; both answered
    # with the host's oldest unacknowledged seq, the second after SHOW 1 was delivered.
    link, rec, _ = device_alone()
    session = link.session
    feed_bytewise(link.frames, Frame(0, HelloAck(PROTOCOL_VERSION, session, 1)).to_bytes())  # type: ignore[arg-type]
    feed_bytewise(link.frames, Frame(1, Show(1000, 2000)).to_bytes())  # type: ignore[arg-type]
    feed_bytewise(link.frames, Frame(0, HelloAck(PROTOCOL_VERSION, session, 1)).to_bytes())  # type: ignore[arg-type]
    feed_bytewise(link.frames, Frame(2, Show(900, 2000)).to_bytes())  # type: ignore[arg-type]
    assert rec.messages == [Show(1000, 2000), Show(900, 2000)]  # at once, no 3 s gap
    link.close()


async def test_a_second_hello_in_one_session_never_rewinds_the_host_counter() -> None:
    link, rec, _ = host_alone()
    feed_bytewise(link.frames, Frame(1, Press(Side.RED, 10)).to_bytes())  # type: ignore[arg-type]
    again = Hello(PROTOCOL_VERSION, (1, 0, 0), Capability.BUZZER, 0x1234, 0x0042, 1)
    feed_bytewise(link.frames, Frame(0, again).to_bytes())  # type: ignore[arg-type]
    feed_bytewise(link.frames, Frame(2, Press(Side.BLACK, 20)).to_bytes())  # type: ignore[arg-type]
    assert rec.messages == [Press(Side.RED, 10), Press(Side.BLACK, 20)]
    link.close()


async def test_the_display_follows_at_once_after_connecting_to_the_emulator() -> None:
    # Case 3 end to end: every update shown within a few hundred ms, right from the start.
    async with ClockEmulator() as emu:
        url = await emu.listen()
        async with SerialClockFace(url) as face:
            for i in range(12):
                await face.show(FaceView(60_000 - i, 60_000, None, text=f"u{i}"))
                await emu.wait_until(
                    lambda i=i: emu.shown is not None and emu.shown.text == f"u{i}", timeout=0.5
                )
                await asyncio.sleep(0.1)


async def test_a_clock_reboot_while_the_link_is_up_is_a_new_session() -> None:
    # Case 4: SHOW and BRIGHTNESS again at once, and the node is told (a face event).
    async with ClockEmulator() as emu:
        url = await emu.listen()
        async with SerialClockFace(url) as face:
            await face.show(FaceView(300_000, 300_000, None, text="PAUSE"))
            await face.set_brightness(11)
            await emu.wait_until(lambda: emu.shown is not None and emu.brightness == 11)
            before = face.device
            assert before is not None
            reboot_emulator(emu)
            await emu.wait_until(
                lambda: emu.shown is not None and emu.brightness == 11, timeout=1.0
            )
            assert emu.shown is not None and emu.shown.text == "PAUSE"
            event = await asyncio.wait_for(face.next_event(), 1.0)
            assert event.kind is FaceEventKind.CLOCK_REBOOTED
            assert face.device is not None and face.device.session != before.session
            assert face.link_up
