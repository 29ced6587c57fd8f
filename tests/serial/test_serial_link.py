"""The link layer over fake transports: handshake, acks, retransmits, dedupe, keepalive."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.serial_fakes import FakeTransport, connect_pair, feed_bytewise
from support.serial_link import HELLO, DeviceRecorder, HostRecorder, host_alone, until

from clock_service import Side
from firmware_bridge.serial.device import DeviceLink
from firmware_bridge.serial.frames import (
    PROTOCOL_VERSION,
    Ack,
    Frame,
    Hello,
    Nak,
    NakReason,
    Pong,
    Press,
    Show,
    cobs_encode,
    crc16,
)
from firmware_bridge.serial.link import HostLink, OffsetEstimator, ProtocolVersionError
from firmware_bridge.serial.stream import FrameDecoder, LinkStats


def frames_in(data: bytes) -> list[Frame]:
    return FrameDecoder(LinkStats()).feed(bytes(data))


def press(seq: int, ms: int, side: Side = Side.RED) -> bytes:
    return Frame(seq, Press(side, ms)).to_bytes()


async def test_handshake_then_each_press_delivered_once_and_acked() -> None:
    host_rec, dev_rec = HostRecorder(), DeviceRecorder()
    host, device = HostLink(host_rec), DeviceLink(dev_rec)
    connect_pair(host, device)
    await until(lambda: host.up and device.acked)
    device.send_reliable(Press(Side.RED, 100))
    device.send_reliable(Press(Side.BLACK, 200))
    await until(lambda: len(host_rec.messages) == 2 and device.sender.idle)
    assert host_rec.messages == [Press(Side.RED, 100), Press(Side.BLACK, 200)]
    host.send_reliable(Show(1000, 2000, Side.RED, 0, "r1 b2"))
    await until(lambda: dev_rec.messages)
    assert dev_rec.messages == [Show(1000, 2000, Side.RED, 0, "r1 b2")]
    # On a loaded machine an ack can be late and a frame resent: the copy is dropped, never
    # delivered twice (checked above), and there are no more copies than resends.
    assert host.stats.rejected == 0
    assert host.stats.duplicates <= device.stats.retransmits
    host.close()
    device.close()


async def test_one_percent_byte_loss_bytewise_delayed_every_press_once_in_order() -> None:
    host_rec, dev_rec = HostRecorder(), DeviceRecorder()
    host, device = HostLink(host_rec), DeviceLink(dev_rec)
    to_device, to_host = connect_pair(host, device, seed=7, loss=0.01, delay=0.002)
    await until(lambda: host.up and device.acked)
    sent = [Press(Side.RED if i % 2 else Side.BLACK, 1000 + i) for i in range(300)]
    for message in sent:
        device.send_reliable(message)
        host.send_reliable(Show(message.device_ms, 5, None, 0, ""))
    await until(lambda: len(host_rec.messages) >= 300 and device.sender.idle, timeout=60)
    await asyncio.sleep(0.3)  # late retransmits must not add anything
    assert host_rec.messages == sent
    assert to_device.wire is not None and to_host.wire is not None
    assert to_device.wire.lost + to_host.wire.lost > 0
    # Lost bytes show up as rejected frames and are repaired by retransmits.
    assert host.stats.rejected > 0 and device.stats.retransmits > 0
    shows = [m for m in dev_rec.messages if isinstance(m, Show)]
    assert len(shows) == len({m.red_ms for m in shows})  # none delivered twice either
    host.close()
    device.close()


async def test_duplicated_frame_is_delivered_once_but_acked_again() -> None:
    link, rec, transport = host_alone()
    feed_bytewise(link.frames, press(1, 10) + press(1, 10) + press(2, 20))  # type: ignore[arg-type]
    assert rec.messages == [Press(Side.RED, 10), Press(Side.RED, 20)]
    assert link.stats.duplicates == 1
    acks = [f.message for f in frames_in(transport.written) if isinstance(f.message, Ack)]
    assert acks == [Ack(1), Ack(1), Ack(2)]
    link.close()


async def test_out_of_order_frames_are_delivered_in_order() -> None:
    link, rec, _ = host_alone()
    feed_bytewise(link.frames, press(2, 20) + press(3, 30))  # type: ignore[arg-type]
    assert rec.messages == []
    feed_bytewise(link.frames, press(1, 10))  # type: ignore[arg-type]
    assert [m.device_ms for m in rec.messages] == [10, 20, 30]  # type: ignore[attr-defined]
    assert link.stats.out_of_order == 2
    link.close()


async def test_a_gap_the_sender_gave_up_on_is_skipped_after_a_timeout() -> None:
    link, rec, _ = host_alone()
    link.receiver.gap_timeout = 0.05
    feed_bytewise(link.frames, press(1, 10) + press(3, 30))  # type: ignore[arg-type]
    assert len(rec.messages) == 1
    await until(lambda: len(rec.messages) == 2)
    assert link.stats.gaps_skipped == 1
    # Late, but never seen: delivered (by the device's seq, not the receive counter), once.
    feed_bytewise(link.frames, press(2, 20))  # type: ignore[arg-type]
    assert len(rec.messages) == 3 and link.stats.late_delivered == 1
    feed_bytewise(link.frames, press(2, 20))  # type: ignore[arg-type]
    assert len(rec.messages) == 3 and link.stats.duplicates == 1
    link.close()


async def test_unknown_type_is_rejected_counted_and_nakked() -> None:
    link, rec, transport = host_alone()
    body = bytes([0x7F, 5, 1, 2, 3])
    feed_bytewise(link.frames, cobs_encode(body + crc16(body).to_bytes(2, "big")) + b"\0")  # type: ignore[arg-type]
    assert link.stats.unknown_type == 1 and rec.messages == []
    naks = [f.message for f in frames_in(transport.written) if isinstance(f.message, Nak)]
    assert naks == [Nak(5, NakReason.UNKNOWN_TYPE)]
    link.close()


async def test_message_in_the_wrong_direction_is_refused() -> None:
    link, rec, transport = host_alone()
    feed_bytewise(link.frames, Frame(1, Show(1, 2)).to_bytes())  # type: ignore[arg-type]
    assert rec.messages == [] and link.stats.unexpected == 1
    assert Nak(1, NakReason.UNEXPECTED) in [f.message for f in frames_in(transport.written)]
    link.close()


async def test_press_before_the_handshake_is_left_unacknowledged() -> None:
    rec = HostRecorder()
    link = HostLink(rec)
    proto = link.protocol()
    transport = FakeTransport(proto)
    proto.connection_made(transport)
    feed_bytewise(proto, press(1, 10))
    assert rec.messages == [] and link.stats.not_ready == 1
    assert not [f for f in frames_in(transport.written) if isinstance(f.message, Ack)]
    link.close()


async def test_host_gives_up_after_bounded_retries() -> None:
    link, _, transport = host_alone()
    link.sender.rto, link.sender.max_retries = 0.01, 3
    link.send_reliable(Show(1, 2))
    await until(lambda: link.stats.tx_failed == 1)
    shows = [f for f in frames_in(transport.written) if isinstance(f.message, Show)]
    assert len(shows) == 4  # the first try and three retries
    assert link.sender.idle
    link.close()


async def test_silent_device_is_lost_within_2s_and_restored_without_duplicates() -> None:
    host_rec, dev_rec = HostRecorder(), DeviceRecorder()
    host, device = HostLink(host_rec), DeviceLink(dev_rec)
    connect_pair(host, device)
    await until(lambda: host.up and device.acked)
    device.muted = True
    start = time.monotonic()
    await until(lambda: host_rec.downs, timeout=3)
    assert time.monotonic() - start < 2.0
    device.send_reliable(Press(Side.BLACK, 77))  # pressed while the cable was cut
    await asyncio.sleep(0.3)
    device.muted = False
    await until(lambda: len(host_rec.ups) == 2 and host_rec.messages)
    await until(lambda: device.sender.idle)
    await asyncio.sleep(0.3)
    assert host_rec.messages == [Press(Side.BLACK, 77)]
    assert host.stats.link_lost == 1 and host.stats.link_restored == 1
    host.close()
    device.close()


async def test_other_protocol_version_is_refused_counted_and_reported() -> None:
    host_rec, dev_rec = HostRecorder(), DeviceRecorder()
    host, device = HostLink(host_rec), DeviceLink(dev_rec)
    device.version = PROTOCOL_VERSION + 1
    connect_pair(host, device)
    await until(lambda: host_rec.downs)
    device.send_reliable(Press(Side.RED, 1))
    await asyncio.sleep(0.6)  # more HELLOs: each counted, reported once
    assert host_rec.ups == [] and host_rec.messages == []
    assert len(host_rec.downs) == 1
    assert isinstance(host_rec.downs[0][1], ProtocolVersionError)
    assert host.stats.version_mismatch >= 2 and device.refused_version
    host.close()
    device.close()


@pytest.mark.parametrize("device_ms", [1_000, 0xFFFF_FFF0])
def test_offset_estimator_maps_device_ms_across_the_wrap(device_ms: int) -> None:
    est = OffsetEstimator()
    assert est.to_host_ns(5) is None
    est.add(sent_ns=10_000_000, recv_ns=14_000_000, device_ms=device_ms)  # rtt 4 ms
    est.add(sent_ns=20_000_000, recv_ns=21_000_000, device_ms=(device_ms + 10) & 0xFFFF_FFFF)
    assert est.best_rtt_ns == 1_000_000
    later = (device_ms + 40) & 0xFFFF_FFFF
    assert est.to_host_ns(later) == 20_500_000 + 30_000_000


async def test_the_offset_samples_belong_to_a_session() -> None:
    # docs/protocol.md §6: a reconnect of the same session keeps the PING/PONG samples; a
    # HELLO with a new session (a reboot) discards them, the device's clock restarted.
    link, _rec, transport = host_alone()
    token = link._send_ping(want_hello=False)
    feed_bytewise(transport.protocol, Frame(0, Pong(token, 5000)).to_bytes())
    assert link.offset.best_rtt_ns is not None
    again = Hello(HELLO.version, HELLO.firmware, HELLO.capabilities, HELLO.device_id,
                  HELLO.session, HELLO.tx_seq)  # fmt: skip
    feed_bytewise(transport.protocol, Frame(0, again).to_bytes())
    assert link.offset.best_rtt_ns is not None  # same session: kept
    rebooted = Hello(HELLO.version, HELLO.firmware, HELLO.capabilities, HELLO.device_id,
                     HELLO.session + 1, 1)  # fmt: skip
    feed_bytewise(transport.protocol, Frame(0, rebooted).to_bytes())
    assert link.offset.best_rtt_ns is None  # a new session: discarded
    link.close()
