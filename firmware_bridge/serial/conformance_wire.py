"""The conformance kit's end of the line: raw frames both ways, everything that came logged.

It is a host with no protocol logic of its own (no HostLink): the cases in
``conformance.py`` decide every frame it sends, including the ones a well-behaved host never
would (a HELLO_ACK naming an old seq, a refusal of version 1, a frame with a bad CRC), and
judge the device by the frames it answers with. Only two things run by themselves, both
switchable: a PING every 250 ms (so the device never takes the kit for a host that
restarted, §4.4) and an ACK for every reliable event (so events do not pile up).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import serial_asyncio_fast

from firmware_bridge.serial.codec import FrameError, cobs_encode, crc16
from firmware_bridge.serial.frames import Frame
from firmware_bridge.serial.messages import Ack, Hello, Message, Ping, Pong
from firmware_bridge.serial.stream import FrameDecoder, LinkStats

__all__ = ["ClockUnderTest", "Received", "raw_frame"]

Received = tuple[int, Frame]  # (monotonic ns when it was decoded, the frame)


def raw_frame(body: bytes, *, good_crc: bool = True) -> bytes:
    """A frame from a hand-made body (to send what a codec would refuse to build)."""
    crc = crc16(body) ^ (0 if good_crc else 0x0101)
    return cobs_encode(body + crc.to_bytes(2, "big")) + b"\x00"


class ClockUnderTest:
    """``async with ClockUnderTest(url) as clock``: the device on the other end of ``url``."""

    def __init__(self, url: str, *, baudrate: int = 115200) -> None:
        self.url = url
        self.baudrate = baudrate
        self.stats = LinkStats()
        self.received: list[Received] = []
        self.rejected: list[FrameError] = []
        self.keepalive = False
        self.auto_ack = True
        self._decoder = FrameDecoder(self.stats, self.rejected.append)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._arrived = asyncio.Event()
        self._token = 0

    async def __aenter__(self) -> ClockUnderTest:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def open(self) -> None:
        self._reader, self._writer = await serial_asyncio_fast.open_serial_connection(
            url=self.url, baudrate=self.baudrate
        )
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read()), loop.create_task(self._ping_forever())]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
            self._writer = None

    # -- sending ----------------------------------------------------------------------------
    def send(self, message: Message, seq: int = 0) -> None:
        self.write(Frame(seq, message).to_bytes())

    def write(self, data: bytes) -> None:
        if self._writer is None:
            raise ConnectionError(f"{self.url}: not open")
        self._writer.write(data)

    def ping(self, *, want_hello: bool = False) -> int:
        """A PING with a fresh token (returned)."""
        self._token = (self._token + 1) & 0xFFFFFFFF
        self.send(Ping(self._token, Ping.WANT_HELLO if want_hello else 0))
        return self._token

    # -- receiving --------------------------------------------------------------------------
    @property
    def mark(self) -> int:
        """A place in ``received``: frames after it arrived after now."""
        return len(self.received)

    def since(self, mark: int, what: Callable[[Frame], bool] = lambda f: True) -> list[Received]:
        return [r for r in self.received[mark:] if what(r[1])]

    async def expect(
        self, what: Callable[[Frame], bool], *, after: int, timeout: float
    ) -> Received | None:
        """The first frame after ``after`` that ``what`` accepts, waiting up to ``timeout`` s;
        None if none came."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.since(after, what)
            if found:
                return found[0]
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(left, 0.05)):
                    await self._arrived.wait()

    async def quiet_for(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def _read(self) -> None:
        assert self._reader is not None
        while True:
            data = await self._reader.read(256)
            if not data:
                return
            now = time.monotonic_ns()
            for frame in self._decoder.feed(data):
                self.received.append((now, frame))
                message = frame.message
                if self.auto_ack and message.RELIABLE and message.FROM_DEVICE and frame.seq:
                    self.send(Ack(frame.seq))
            self._arrived.set()

    async def _ping_forever(self) -> None:
        while True:
            await asyncio.sleep(0.25)
            if self.keepalive and self._writer is not None:
                self.ping()


def is_hello(frame: Frame) -> bool:
    return isinstance(frame.message, Hello)


def is_pong(token: int) -> Callable[[Frame], bool]:
    return lambda f: isinstance(f.message, Pong) and f.message.token == token


def is_event(frame: Frame) -> bool:
    return bool(frame.message.RELIABLE and frame.message.FROM_DEVICE and frame.seq != 0)
