"""The frame layer: a byte stream in, whole frames out, every bad byte counted.

``FrameDecoder`` is the pure part (feed bytes, get frames); ``FrameProtocol`` is the asyncio
Protocol on the transport that hands the frames to the link layer above it. The receive
buffer is bounded: a run of bytes longer than any legal frame is dropped and counted, and
decoding starts again after the next 0x00 delimiter.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Protocol

from firmware_bridge.serial.codec import MAX_WIRE, FrameError, FrameTooLongError
from firmware_bridge.serial.frames import Frame

__all__ = ["FrameDecoder", "FrameListener", "FrameProtocol", "LinkStats"]

log = logging.getLogger(__name__)


@dataclass
class LinkStats:
    """Counters of one link end; every rejected byte, frame and message lands in one of them."""

    bytes_rx: int = 0
    bytes_tx: int = 0
    frames_rx: int = 0
    frames_tx: int = 0
    # frame layer
    cobs_errors: int = 0
    truncated: int = 0
    oversized: int = 0
    crc_errors: int = 0
    unknown_type: int = 0
    bad_payload: int = 0
    bad_frames: int = 0
    # link layer
    duplicates: int = 0
    out_of_order: int = 0
    out_of_window: int = 0
    gaps_skipped: int = 0
    late_delivered: int = 0  # a frame a gap timeout had passed over, delivered when it came
    late_dropped: int = 0  # the same on the device: acknowledged, not delivered (superseded)
    unexpected: int = 0  # a valid message that does not travel this way
    not_ready: int = 0  # a reliable message before the handshake (left unacknowledged)
    retransmits: int = 0
    tx_failed: int = 0  # reliable frames given up after the retry budget
    naks_rx: int = 0
    naks_tx: int = 0
    stale_acks: int = 0
    version_mismatch: int = 0
    hellos: int = 0
    reboots: int = 0  # a new session of the same link (a clock rebooted or swapped)
    link_lost: int = 0
    link_restored: int = 0
    connects: int = 0

    @property
    def rejected(self) -> int:
        """Frames refused by the frame layer (any reason)."""
        return (
            self.cobs_errors + self.truncated + self.oversized + self.crc_errors
            + self.unknown_type + self.bad_payload + self.bad_frames
        )  # fmt: skip

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __repr__(self) -> str:
        nonzero = ", ".join(f"{k}={v}" for k, v in self.as_dict().items() if v)
        return f"LinkStats({nonzero})"


class FrameDecoder:
    """Split a byte stream at 0x00 and decode each frame; errors go to ``on_error``."""

    def __init__(self, stats: LinkStats, on_error: Callable[[FrameError], None] | None = None):
        self.stats = stats
        self._on_error = on_error
        self._buf = b""
        self._discarding = False  # inside an oversized run: drop up to the next delimiter

    def feed(self, data: bytes) -> list[Frame]:
        stats = self.stats
        stats.bytes_rx += len(data)
        parts = (self._buf + data).split(b"\x00")
        self._buf = parts.pop()
        frames: list[Frame] = []
        for part in parts:
            if self._discarding:
                self._discarding = False
                continue
            if not part:
                continue  # idle delimiters are allowed (a sender may flush with a 0x00)
            try:
                frames.append(Frame.from_bytes(part))
            except FrameError as exc:
                self._reject(exc)
        if len(self._buf) > MAX_WIRE:
            self._buf = b""
            if not self._discarding:
                self._discarding = True
                self._reject(FrameTooLongError(f"no delimiter within {MAX_WIRE} bytes"))
        stats.frames_rx += len(frames)
        return frames

    def _reject(self, exc: FrameError) -> None:
        setattr(self.stats, exc.stat, getattr(self.stats, exc.stat) + 1)
        log.debug("frame rejected: %s", exc)
        if self._on_error is not None:
            self._on_error(exc)


class FrameListener(Protocol):
    """What the frame layer calls on the layer above it (the link)."""

    def frame_connection_made(self, frames: FrameProtocol) -> None: ...
    def frame_received(self, frame: Frame) -> None: ...
    def frame_rejected(self, error: FrameError) -> None: ...
    def frame_connection_lost(self, frames: FrameProtocol, exc: Exception | None) -> None: ...


class FrameProtocol(asyncio.Protocol):
    """asyncio Protocol: bytes from the transport -> frames to the link; frames -> bytes."""

    def __init__(self, listener: FrameListener, stats: LinkStats) -> None:
        self.listener = listener
        self.stats = stats
        self.decoder = FrameDecoder(stats, listener.frame_rejected)
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.listener.frame_connection_made(self)

    def data_received(self, data: bytes) -> None:
        for frame in self.decoder.feed(data):
            self.listener.frame_received(frame)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.listener.frame_connection_lost(self, exc)

    @property
    def connected(self) -> bool:
        return self.transport is not None and not self.transport.is_closing()

    def send(self, frame: Frame) -> None:
        self.write_raw(frame.to_bytes())
        self.stats.frames_tx += 1

    def write_raw(self, data: bytes) -> None:
        """Write bytes as they are (the emulator uses this to inject garbage)."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        self.stats.bytes_tx += len(data)
        transport.write(data)  # type: ignore[attr-defined]

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
