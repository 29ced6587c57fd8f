"""Byte-level coding of the serial clock protocol: CRC-16, COBS, and the frame errors.

CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor) guards each frame;
COBS removes every 0x00 from it so 0x00 can delimit frames and a receiver resyncs after any
garbage at the next delimiter.
"""

from __future__ import annotations

import binascii

from firmware_bridge.face import FaceError

__all__ = [
    "MAX_BODY",
    "MAX_WIRE",
    "PROTOCOL_VERSION",
    "BadPayloadError",
    "CobsError",
    "CrcError",
    "FrameError",
    "FrameTooLongError",
    "FrameTooShortError",
    "SerialFaceError",
    "UnknownMessageTypeError",
    "cobs_decode",
    "cobs_encode",
    "crc16",
]

PROTOCOL_VERSION = 1
MAX_BODY = 64  # type + seq + payload; keeps a frame inside a small MCU's UART buffer
# COBS adds one byte per 254 and the CRC two; a receiver drops anything longer than this.
MAX_WIRE = MAX_BODY + 2 + 2


class SerialFaceError(FaceError):
    """Root of the serial clock's errors."""


class FrameError(SerialFaceError, ValueError):
    """A frame that cannot be accepted. ``seq`` is known when the body was intact."""

    stat = "bad_frames"

    def __init__(self, message: str, *, seq: int | None = None) -> None:
        super().__init__(message)
        self.seq = seq


class CobsError(FrameError):
    stat = "cobs_errors"


class FrameTooShortError(FrameError):
    stat = "truncated"


class FrameTooLongError(FrameError):
    stat = "oversized"


class CrcError(FrameError):
    stat = "crc_errors"


class UnknownMessageTypeError(FrameError):
    stat = "unknown_type"


class BadPayloadError(FrameError):
    stat = "bad_payload"


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection); "123456789" -> 0x29B1."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing: the result holds no 0x00 (the frame delimiter)."""
    out = bytearray()
    for chunk in data.split(b"\x00"):
        # A chunk longer than 254 bytes is cut into 0xFF-coded blocks with no implied zero.
        while len(chunk) >= 254:
            out.append(0xFF)
            out += chunk[:254]
            chunk = chunk[254:]
        out.append(len(chunk) + 1)
        out += chunk
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise CobsError(f"COBS: 0x00 inside a frame at offset {i}")
        end = i + code
        if end > n:
            raise CobsError(f"COBS: block at offset {i} needs {code - 1} bytes, has {n - i - 1}")
        block = data[i + 1 : end]
        if 0 in block:
            raise CobsError(f"COBS: 0x00 inside a block at offset {i + 1 + block.index(0)}")
        out += block
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)
