"""Frames of the serial clock protocol: ``COBS(type | seq | payload | crc16) 0x00``.

The body (``type | seq | payload``) is at most ``MAX_BODY`` bytes; ``crc16`` is
CRC-16/CCITT-FALSE of the body, big endian. ``Frame`` pairs a message (``serial_messages``)
with its seq and turns it into wire bytes and back. This module re-exports the messages and
the codec so a user needs one import. docs/protocol.md is the normative description, with
golden bytes checked by the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware_bridge.serial.codec import *  # noqa: F403
from firmware_bridge.serial.codec import (
    MAX_BODY,
    MAX_WIRE,
    BadPayloadError,
    CrcError,
    FrameTooLongError,
    FrameTooShortError,
    UnknownMessageTypeError,
    cobs_decode,
    cobs_encode,
    crc16,
)
from firmware_bridge.serial.codec import __all__ as _codec_all
from firmware_bridge.serial.messages import *  # noqa: F403
from firmware_bridge.serial.messages import MESSAGE_TYPES, Message, _check
from firmware_bridge.serial.messages import __all__ as _messages_all

__all__ = ["Frame", *_codec_all, *_messages_all]


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame: a message and its seq (1..255 for reliable messages, 0 for the others)."""

    seq: int
    message: Message

    def __post_init__(self) -> None:
        if self.message.RELIABLE:
            _check(f"seq of {type(self.message).__name__}", self.seq, 255, 1)
        elif self.seq != 0:
            raise ValueError(f"{type(self.message).__name__} is unreliable and has seq 0")

    def body(self) -> bytes:
        """``type | seq | payload``, the part the CRC covers."""
        return bytes([self.message.TYPE, self.seq]) + self.message.to_bytes()

    def to_bytes(self) -> bytes:
        """The wire form: COBS-encoded body and CRC, then the 0x00 delimiter."""
        body = self.body()
        return cobs_encode(body + crc16(body).to_bytes(2, "big")) + b"\x00"

    @classmethod
    def from_bytes(cls, wire: bytes) -> Frame:
        """Parse one wire frame, with or without its 0x00 delimiter."""
        if wire.endswith(b"\x00"):
            wire = wire[:-1]
        if len(wire) > MAX_WIRE:
            raise FrameTooLongError(f"frame of {len(wire)} bytes, at most {MAX_WIRE} allowed")
        data = cobs_decode(wire)
        if len(data) < 4:
            raise FrameTooShortError(f"frame of {len(data)} bytes, at least 4 needed")
        body, crc = data[:-2], int.from_bytes(data[-2:], "big")
        if crc16(body) != crc:
            raise CrcError(
                f"CRC {crc:#06x} does not match {crc16(body):#06x} (type {body[0]:#04x})"
            )
        return cls.from_body(body)

    @classmethod
    def from_body(cls, body: bytes) -> Frame:
        type_, seq = body[0], body[1]
        if len(body) > MAX_BODY:
            raise FrameTooLongError(f"body of {len(body)} bytes, at most {MAX_BODY}", seq=seq)
        msg_cls = MESSAGE_TYPES.get(type_)
        if msg_cls is None:
            raise UnknownMessageTypeError(f"unknown message type {type_:#04x}", seq=seq)
        try:
            message = msg_cls.from_bytes(body[2:])
        except BadPayloadError as exc:
            raise BadPayloadError(str(exc), seq=seq) from None
        except ValueError as exc:  # a constructor check the payload parser did not pre-empt
            raise BadPayloadError(f"{msg_cls.__name__}: {exc}", seq=seq) from None
        if (seq != 0) != msg_cls.RELIABLE:
            raise BadPayloadError(
                f"{msg_cls.__name__} with seq {seq}: reliable messages use 1..255, others 0",
                seq=seq,
            )
        return cls(seq, message)

    def __repr__(self) -> str:
        return f"Frame(seq={self.seq}, message={self.message!r})"
