"""Fake transports for the serial link tests, in the manner of bellows' tests.

``FakeTransport`` captures what a protocol writes; ``LossyWire`` delivers bytes to a peer
protocol one byte at a time, losing a fraction of them at random and delaying them, in
order. ``connect_pair`` joins a host link and a device link with two wires.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from typing import Any


class LossyWire:
    """One direction of a serial line: in-order, byte-at-a-time, lossy, delayed."""

    def __init__(
        self,
        protocol: asyncio.Protocol,
        *,
        rng: random.Random | None = None,
        loss: float = 0.0,
        delay: float = 0.0,
    ) -> None:
        self.protocol = protocol
        self.rng = rng or random.Random(0)
        self.loss = loss
        self.delay = delay
        self.lost = 0
        self.delivered = 0
        self.cut = False
        self._queue: deque[tuple[float, int]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    def send(self, data: bytes) -> None:
        if self.cut:
            return
        loop = asyncio.get_running_loop()
        due = loop.time() + self.delay
        for byte in data:
            if self.loss and self.rng.random() < self.loss:
                self.lost += 1
                continue
            self._queue.append((due, byte))
        if self._timer is None and self._queue:
            self._timer = loop.call_at(self._queue[0][0], self._pump)

    def _pump(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        while self._queue and self._queue[0][0] <= now and not self.cut:
            _, byte = self._queue.popleft()
            self.delivered += 1
            self.protocol.data_received(bytes([byte]))
        if self._queue and not self.cut:
            self._timer = loop.call_at(self._queue[0][0], self._pump)

    def close(self) -> None:
        self.cut = True
        self._queue.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class FakeTransport(asyncio.Transport):
    """A transport with ``write()``/``close()`` that records every byte written."""

    def __init__(self, protocol: asyncio.Protocol, wire: LossyWire | None = None) -> None:
        super().__init__()
        self.protocol = protocol
        self.wire = wire
        self.written = bytearray()
        self.closed = False

    def write(self, data: Any) -> None:
        if self.closed:
            return
        self.written += data
        if self.wire is not None:
            self.wire.send(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.wire is not None:
            self.wire.close()
        asyncio.get_running_loop().call_soon(self.protocol.connection_lost, None)


def feed_bytewise(protocol: asyncio.Protocol, data: bytes) -> None:
    """Deliver ``data`` to ``protocol`` one byte per ``data_received`` call."""
    for i in range(len(data)):
        protocol.data_received(data[i : i + 1])


def connect_pair(
    host_link: Any,
    device_link: Any,
    *,
    seed: int = 0,
    loss: float = 0.0,
    delay: float = 0.0,
) -> tuple[FakeTransport, FakeTransport]:
    """Join two links (anything with ``.protocol()``) with lossy wires; returns their transports."""
    rng = random.Random(seed)
    host_proto = host_link.protocol()
    device_proto = device_link.protocol()
    to_device = LossyWire(device_proto, rng=rng, loss=loss, delay=delay)
    to_host = LossyWire(host_proto, rng=rng, loss=loss, delay=delay)
    host_t = FakeTransport(host_proto, to_device)
    device_t = FakeTransport(device_proto, to_host)
    device_proto.connection_made(device_t)
    host_proto.connection_made(host_t)
    return host_t, device_t


def reboot_emulator(emu: Any, *, seed: int = 1) -> None:
    """What a brown-out does to a clock: a new session, no receive state, and a HELLO at once.

    Done by hand (not ``ClockEmulator.reboot``) so the same step runs against any version of
    the emulator. Events the device still held are kept, as a clock that stores them would.
    """
    link = emu.link
    old = link.session
    link.session = random.Random(seed).randrange(1, 0x10000)
    if link.session == old:
        link.session = old % 0xFFFF + 1
    link.acked = False
    link.receiver.forget()
    emu.shown = None
    emu.brightness = None
    link.send(link.hello())
