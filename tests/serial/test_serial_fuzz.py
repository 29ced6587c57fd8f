"""Fuzz the frame and link layers with >= 100,000 random and mutated frames.

The stream carries genuine presses numbered by ``device_ms``; around them go garbage,
truncated, oversized, bit-flipped, unknown-type, duplicated and swapped frames. Whatever
happens, nothing raises, every chunk is accounted for, and each genuine press is delivered
exactly once, in order.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from support.serial_fakes import FakeTransport

from clock_service import Side
from firmware_bridge.serial.frames import (
    PROTOCOL_VERSION,
    Capability,
    Frame,
    Hello,
    Message,
    Press,
    cobs_encode,
    crc16,
)
from firmware_bridge.serial.link import HostLink

HELLO = Hello(PROTOCOL_VERSION, (1, 0, 0), Capability(0), 7, 0x77, 1)


class Presses:
    def __init__(self) -> None:
        self.device_ms: list[int] = []

    def link_message(self, message: Message, recv_ns: int) -> None:
        assert isinstance(message, Press)
        self.device_ms.append(message.device_ms)

    def link_established(self, hello: Hello) -> None: ...
    def link_broken(self, reason: str, error: object) -> None: ...


def up_host() -> tuple[HostLink, Presses]:
    rec = Presses()
    link = HostLink(rec)
    proto = link.protocol()
    proto.connection_made(FakeTransport(proto))
    proto.data_received(Frame(0, HELLO).to_bytes())
    assert link.up
    return link, rec


def mutated_stream(rng: random.Random, presses: int) -> tuple[bytes, int]:
    """Genuine presses 0..presses-1 among damage; returns the bytes and the frame count."""
    out: list[bytes] = []
    genuine = [Frame(i % 255 + 1, Press(Side(("red", "black")[i % 2]), i)).to_bytes()
               for i in range(presses)]  # fmt: skip
    count = 0
    i = 0
    while i < presses:
        roll = rng.random()
        if roll < 0.05 and i + 1 < presses:  # out of order: the next one first
            out += [genuine[i + 1], genuine[i]]
            i += 2
            count += 2
            continue
        out.append(genuine[i])
        count += 1
        i += 1
        roll = rng.random()
        if roll < 0.10:  # a duplicate of a recent frame
            out.append(genuine[max(0, i - 1 - rng.randrange(min(i, 100)))])
        elif roll < 0.20:  # random bytes, ended by a delimiter
            out.append(rng.randbytes(rng.randrange(1, 40)).replace(b"\0", b"\1") + b"\0")
        elif roll < 0.30:  # a bit flipped in a copy
            bad = bytearray(genuine[i - 1])
            bad[rng.randrange(len(bad) - 1)] ^= 1 << rng.randrange(8)
            out.append(bytes(bad).replace(b"\0", b"\1")[:-1] + b"\0")
        elif roll < 0.40:  # truncated
            out.append(genuine[i - 1][: rng.randrange(1, 6)] + b"\0")
        elif roll < 0.45:  # oversized
            out.append(b"\x42" * rng.randrange(70, 400) + b"\0")
        elif roll < 0.55:  # intact frame of an unknown type
            body = bytes([rng.randrange(0x50, 0x100), rng.randrange(256)]) + rng.randbytes(4)
            out.append(cobs_encode(body + crc16(body).to_bytes(2, "big")) + b"\0")
        else:
            continue
        count += 1
    return b"".join(out), count


async def test_100k_random_and_mutated_frames_each_press_delivered_once() -> None:
    rng = random.Random(20240601)
    link, rec = up_host()
    proto = link.frames
    assert proto is not None
    total = 0
    stream, frames = mutated_stream(rng, 70_000)
    total += frames
    for i in range(0, len(stream), 4096):  # in bulk, as a fast UART read delivers
        proto.data_received(stream[i : i + 4096])
    assert rec.device_ms == list(range(70_000))
    # pure noise with many delimiters on top
    noise = rng.randbytes(600_000)
    total += noise.count(0)
    proto.data_received(noise + b"\0")
    assert total >= 100_000
    stats = link.stats
    assert stats.duplicates > 0 and stats.out_of_order > 0 and stats.unknown_type > 0
    assert stats.crc_errors > 0 and stats.truncated > 0 and stats.oversized > 0
    assert rec.device_ms == list(range(70_000))  # the noise delivered nothing
    link.close()


@settings(max_examples=200, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(1, 60), st.integers(1, 9))
async def test_structured_damage_delivered_byte_by_byte(rng, presses: int, chunk: int) -> None:
    link, rec = up_host()
    proto = link.frames
    assert proto is not None
    stream, _ = mutated_stream(rng, presses)
    for i in range(0, len(stream), chunk):
        proto.data_received(stream[i : i + chunk])
    assert rec.device_ms == list(range(presses))
    link.close()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
async def test_arbitrary_bytes_never_raise_and_every_chunk_is_accounted(data: bytes) -> None:
    link, _rec = up_host()
    assert link.frames is not None
    before = link.stats.frames_rx + link.stats.rejected
    link.frames.data_received(data + b"\0")
    chunks = [c for c in data.split(b"\0") if c]
    assert link.stats.frames_rx + link.stats.rejected - before == len(chunks)
    link.close()
