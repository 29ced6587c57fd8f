"""Frames: CRC, COBS, every message's round trip and validation, the decoder's resync."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clock_service import Side
from firmware_bridge.face import FaceError
from firmware_bridge.serial.frames import (
    MAX_WIRE,
    Ack,
    BadPayloadError,
    Battery,
    Beep,
    Brightness,
    Capability,
    CobsError,
    CrcError,
    Frame,
    FrameError,
    FrameTooLongError,
    FrameTooShortError,
    Hello,
    HelloAck,
    Key,
    KeyKind,
    Nak,
    NakReason,
    Ping,
    Pong,
    Power,
    PowerState,
    Press,
    Show,
    UnknownMessageTypeError,
    cobs_decode,
    cobs_encode,
    crc16,
)
from firmware_bridge.serial.golden import EXAMPLES
from firmware_bridge.serial.stream import FrameDecoder, LinkStats

u32 = st.integers(0, 0xFFFF_FFFF)
seqs = st.integers(1, 255)
sides = st.sampled_from(list(Side))
messages = st.one_of(
    st.builds(Hello, st.integers(0, 255), st.tuples(*[st.integers(0, 255)] * 3),
              st.integers(0, 0xFFFF).map(Capability), u32, st.integers(0, 0xFFFF), seqs),
    st.builds(HelloAck, st.integers(0, 255), st.integers(0, 0xFFFF), seqs),
    st.builds(Press, sides, u32),
    st.builds(Key, st.sampled_from(list(KeyKind)), u32),
    st.builds(Power, st.sampled_from(list(PowerState)), u32),
    st.builds(Battery, st.booleans(), u32),
    st.builds(Show, u32, u32, st.sampled_from([None, *Side]), st.integers(0, 255),
              st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=8)),
    st.builds(Beep, st.integers(0, 0xFFFF)),
    st.builds(Brightness, st.integers(0, 15)),
    st.builds(Ping, u32, st.integers(0, 255)),
    st.builds(Pong, u32, u32),
    st.builds(Ack, seqs),
    st.builds(Nak, st.integers(0, 255), st.sampled_from(list(NakReason))),
)  # fmt: skip


def test_crc16_ccitt_false_check_value() -> None:
    assert crc16(b"123456789") == 0x29B1


@given(st.binary(max_size=700))
def test_cobs_round_trip_and_no_zero(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert cobs_decode(encoded) == data


@given(messages, seqs)
def test_every_message_round_trips(message, seq: int) -> None:
    frame = Frame(seq if message.RELIABLE else 0, message)
    wire = frame.to_bytes()
    assert wire.endswith(b"\0") and 0 not in wire[:-1] and len(wire) - 1 <= MAX_WIRE
    assert Frame.from_bytes(wire) == frame
    assert type(message).from_bytes(message.to_bytes()) == message
    assert eval(repr(frame), {**globals(), "Capability": Capability}) == frame


def test_golden_examples_cover_all_reprs() -> None:
    for _name, frame in EXAMPLES:
        assert Frame.from_bytes(frame.to_bytes()) == frame


def test_errors_belong_to_the_package_root() -> None:
    assert issubclass(FrameError, FaceError) and issubclass(FrameError, ValueError)


def wire_of(body: bytes) -> bytes:
    return cobs_encode(body + crc16(body).to_bytes(2, "big"))


@pytest.mark.parametrize(
    ("wire", "error", "says"),
    [
        (b"\x05\x10\x01\x00", CobsError, "offset 0"),
        (b"\x03\x10\x00\x05", CobsError, "0x00 inside"),
        (wire_of(b"\x10"), FrameTooShortError, "at least 4"),
        (b"\x01" * (MAX_WIRE + 1), FrameTooLongError, "at most"),
        (wire_of(bytes([0x10, 1]) + bytes(60)), BadPayloadError, "Press"),
        (wire_of(bytes([0x7E, 3, 1])), UnknownMessageTypeError, "0x7e"),
        (wire_of(bytes([0x10, 1, 2, 0, 0, 0, 0])), BadPayloadError, "side code 2"),
        (wire_of(bytes([0x10, 0, 0, 0, 0, 0, 0])), BadPayloadError, "seq 0"),
        (wire_of(bytes([0x30, 4, 0, 0, 0, 0, 0])), BadPayloadError, "seq 4"),
        (wire_of(bytes([0x22, 1, 16])), BadPayloadError, "above 15"),
        (wire_of(bytes([0x20, 1]) + bytes(8) + bytes([3, 0, 9]) + b"x"), BadPayloadError, "text"),
        (
            wire_of(bytes([0x20, 1]) + bytes(8) + bytes([0, 0, 1]) + b"\xe4"),
            BadPayloadError,
            "Show",
        ),
        (wire_of(bytes([0x11, 1, 7, 0, 0, 0, 0])), BadPayloadError, "KeyKind"),
        (wire_of(bytes([0x41, 0, 1, 99])), BadPayloadError, "NakReason"),
        (wire_of(bytes([0x40, 0, 0])), BadPayloadError, "seq 0"),
    ],
)
def test_bad_frames_raise_a_clear_error(wire: bytes, error: type, says: str) -> None:
    with pytest.raises(error, match=says):
        Frame.from_bytes(wire)


def test_bad_crc_is_detected_and_reported() -> None:
    wire = bytearray(Frame(1, Press(Side.RED, 5)).to_bytes())
    wire[-3] ^= 0x01
    with pytest.raises(CrcError, match="CRC"):
        Frame.from_bytes(bytes(wire))


@pytest.mark.parametrize(
    "build",
    [
        lambda: Press(Side.RED, -1),
        lambda: Press("red", 1),  # type: ignore[arg-type]
        lambda: Show(1, 2, text="ninechars"),
        lambda: Show(1, 2, text="暂停"),
        lambda: Brightness(16),
        lambda: Beep(70000),
        lambda: Key(5, 1),  # type: ignore[arg-type]
        lambda: Frame(0, Press(Side.RED, 1)),
        lambda: Frame(3, Ping(1)),
        lambda: Hello(1, (1, 2), Capability(0), 1, 1, 1),  # type: ignore[arg-type]
    ],
)
def test_constructors_refuse_values_the_wire_cannot_carry(build) -> None:
    with pytest.raises(ValueError):
        build()


def test_decoder_resyncs_after_garbage_and_counts_each_kind() -> None:
    stats = LinkStats()
    decoder = FrameDecoder(stats)
    good = Frame(1, Press(Side.RED, 5)).to_bytes()
    bad_crc = bytearray(Frame(2, Press(Side.BLACK, 6)).to_bytes())
    bad_crc[3] ^= 0xFF
    stream = (
        b"\x13\x37garbage" + good  # a partial frame at the start swallows the first frame
        + good  # resynced at the delimiter
        + bytes(bad_crc)
        + good[:4] + b"\0"  # truncated
        + b"\x55" * 300 + b"\0"  # oversized, dropped up to the delimiter
        + b"\0\0"  # idle delimiters
        + good
    )  # fmt: skip
    frames = []
    for i in range(0, len(stream), 7):  # in odd-sized chunks, as a UART delivers
        frames += decoder.feed(stream[i : i + 7])
    assert frames == [Frame(1, Press(Side.RED, 5))] * 2
    assert stats.frames_rx == 2
    assert stats.oversized == 1
    assert stats.rejected == 4  # garbage+good merged, bad CRC, truncated, oversized
    assert stats.bytes_rx == len(stream)


def test_receive_buffer_is_bounded() -> None:
    stats = LinkStats()
    decoder = FrameDecoder(stats)
    for _ in range(1000):
        decoder.feed(b"\x01" * 1000)
    assert len(decoder._buf) <= MAX_WIRE
    assert stats.oversized == 1  # one overlong run, counted once
    assert decoder.feed(Frame(0, Ack(3)).to_bytes()) == []  # the run ends at this delimiter
    assert decoder.feed(Frame(0, Ack(3)).to_bytes()) == [Frame(0, Ack(3))]
