"""``ClockEmulator``: the device side of the serial clock protocol, byte for byte, in software.

It listens on ``socket://host:port`` (a TCP server the host connects to) or creates a pty
whose path the host opens like a serial port. Tests drive it through the Python API (press,
keys, power, garbage, silence, delay) and read what the host showed; ``qizhong
emulate-clock`` puts a keyboard UI on top for bench use.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import tty
import urllib.parse
from collections.abc import Callable
from typing import Any

from clock_service import Side
from firmware_bridge.face import format_clock
from firmware_bridge.serial.codec import SerialFaceError
from firmware_bridge.serial.device import DEFAULT_CAPABILITIES, DeviceLink
from firmware_bridge.serial.messages import (
    Battery,
    Beep,
    Brightness,
    Capability,
    Key,
    KeyKind,
    Message,
    Power,
    PowerState,
    Press,
    Show,
)
from firmware_bridge.serial.stream import LinkStats

__all__ = ["ClockEmulator", "EmulatorError"]


class EmulatorError(SerialFaceError):
    """The emulator cannot listen or is used in the wrong state."""


class _PtyTransport(asyncio.Transport):
    """A minimal transport on a pty master (asyncio has none for a tty that is not a pipe)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, protocol: asyncio.Protocol):
        super().__init__()
        self._loop, self._fd, self._protocol = loop, fd, protocol
        self._out = bytearray()
        self._closing = False
        os.set_blocking(fd, False)
        loop.add_reader(fd, self._read_ready)
        loop.call_soon(protocol.connection_made, self)

    def _read_ready(self) -> None:
        try:
            data = os.read(self._fd, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # EIO: no process has the slave open; nothing to read
            return
        if data:
            self._protocol.data_received(data)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing:
            return
        if not self._out:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                written = 0
            data = bytes(data)[written:]
            if not data:
                return
            self._loop.add_writer(self._fd, self._write_ready)
        self._out += data

    def _write_ready(self) -> None:
        try:
            written = os.write(self._fd, self._out)
        except BlockingIOError:
            return
        del self._out[:written]
        if not self._out:
            self._loop.remove_writer(self._fd)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._loop.remove_reader(self._fd)
        self._loop.remove_writer(self._fd)
        self._loop.call_soon(self._protocol.connection_lost, None)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


class ClockEmulator:
    """A serial clock in software: ``async with ClockEmulator() as emu: await emu.listen()``."""

    def __init__(
        self,
        *,
        device_id: int = 0x51A0_0001,
        firmware: tuple[int, int, int] = (1, 0, 0),
        capabilities: Capability = DEFAULT_CAPABILITIES,
        retransmit_timeout: float = 0.1,
        max_retries: int = 8,
        faults: frozenset[str] = frozenset(),
    ) -> None:
        self.stats = LinkStats()
        self.link = DeviceLink(
            self, device_id=device_id, firmware=firmware, capabilities=capabilities,
            stats=self.stats, rto=retransmit_timeout, max_retries=max_retries, faults=faults,
        )  # fmt: skip
        self.url: str | None = None
        self.shown: Show | None = None
        self.shown_ns = 0  # host monotonic ns when ``shown`` arrived (the device counts from it)
        self.shows: list[Show] = []
        self.beeps: list[int] = []
        self.brightness: int | None = None
        self.power_on_state = True
        # The truth for fault tests: every press as (side, device_ms, host monotonic ns).
        self.presses: list[tuple[Side, int, int]] = []
        self.on_change: Callable[[], None] | None = None  # the keyboard UI redraws on it
        self._changed = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._pty: tuple[int, int] | None = None
        self._pty_transport: _PtyTransport | None = None

    # -- setup ------------------------------------------------------------------------------
    async def listen(self, url: str = "socket://127.0.0.1:0") -> str:
        """Serve ``socket://host:port`` (port 0 picks a free one); returns the URL to connect to."""
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme != "socket" or not parsed.hostname or parsed.port is None:
            raise EmulatorError(f"listen needs socket://host:port, not {url!r}")
        loop = asyncio.get_running_loop()
        try:
            self._server = await loop.create_server(
                self.link.protocol, parsed.hostname, parsed.port
            )
        except OSError as exc:
            raise EmulatorError(f"cannot listen on {url}: {exc}") from exc
        host, port = self._server.sockets[0].getsockname()[:2]
        self.url = f"socket://{host}:{port}"
        return self.url

    async def open_pty(self) -> str:
        """Create a pty, play the device on its master side; returns the path for the host."""
        master, slave = os.openpty()
        # Raw before the host opens it: an echoing line discipline would bounce our bytes back.
        tty.setraw(slave)
        self._pty = (master, slave)  # keeping the slave open spares the master EIO between hosts
        loop = asyncio.get_running_loop()
        self._pty_transport = _PtyTransport(loop, master, self.link.protocol())
        self.url = os.ttyname(slave)
        return self.url

    async def close(self) -> None:
        self.link.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await self._server.wait_closed()
            self._server = None
        if self._pty_transport is not None:
            self._pty_transport.close()
            await asyncio.sleep(0)
            self._pty_transport = None
        if self._pty is not None:
            for fd in self._pty:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._pty = None

    async def __aenter__(self) -> ClockEmulator:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the clock's keys -------------------------------------------------------------------
    def now_ms(self) -> int:
        """The device's own millisecond clock."""
        return self.link.clock_ms()

    async def press(self, side: Side) -> None:
        device_ms = self.now_ms()
        self.presses.append((side, device_ms, time.monotonic_ns()))
        self._event(Press(side, device_ms))

    async def pause_key(self) -> None:
        self._event(Key(KeyKind.PAUSE, self.now_ms()))

    async def arbiter_key(self) -> None:
        self._event(Key(KeyKind.ARBITER, self.now_ms()))

    async def power_off(self) -> None:
        self.power_on_state = False
        self._event(Power(PowerState.OFF, self.now_ms()))

    async def power_on(self) -> None:
        self.power_on_state = True
        self._event(Power(PowerState.ON, self.now_ms()))

    async def battery_low(self, low: bool = True) -> None:
        self._event(Battery(low, self.now_ms()))

    def _event(self, message: Message) -> None:
        self.link.send_reliable(message)

    # -- misbehaving ------------------------------------------------------------------------
    async def inject_garbage(self, data: bytes) -> None:
        """Write ``data`` to the host as it is, between frames."""
        self.link.write_raw(bytes(data))

    def stop_answering(self) -> None:
        """Go silent: ignore what arrives, send nothing (events pile up, as on a cut cable)."""
        self.link.muted = True
        self._notify()

    def resume_answering(self) -> None:
        self.link.muted = False
        self._notify()

    def reboot(self) -> None:
        """A brown-out and power-up: a new session, HELLO at once (held events are kept)."""
        self.shown = None
        self.link.reboot()
        self._notify()

    def set_delay(self, ms: float) -> None:
        """Hold back every byte the device sends by ``ms`` milliseconds."""
        if ms < 0:
            raise ValueError(f"delay must be >= 0 ms, not {ms}")
        self.link.tx_delay = ms / 1000

    @property
    def hello_version(self) -> int:
        return self.link.version

    @hello_version.setter
    def hello_version(self, version: int) -> None:
        self.link.version = version

    # -- what the host did ------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        """The host acknowledged our HELLO on the current connection."""
        return self.link.acked and self.link.frames is not None

    @property
    def settled(self) -> bool:
        """Every event was acknowledged by the host."""
        return self.link.sender.idle

    def device_message(self, message: Message) -> None:
        if isinstance(message, Show):
            self.shown, self.shown_ns = message, time.monotonic_ns()
            self.shows.append(message)
        elif isinstance(message, Beep):
            self.beeps.append(message.ms)
        elif isinstance(message, Brightness):
            self.brightness = message.level
        self._notify()

    def display(self, now_ns: int | None = None) -> str:
        """What the clock's display shows now: both times (the running one counting) and text."""
        shown = self.shown
        if shown is None:
            return "--:--:--  --:--:--"
        elapsed = max(0, (now_ns or time.monotonic_ns()) - self.shown_ns) // 1_000_000
        red = shown.red_ms - (elapsed if shown.running is Side.RED else 0)
        black = shown.black_ms - (elapsed if shown.running is Side.BLACK else 0)
        marks = {Side.RED: "<", Side.BLACK: ">", None: " "}[shown.running]
        return f"{format_clock(red):>8} {marks} {format_clock(black):>8}  {shown.text}"

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait until ``predicate()`` holds (re-checked on every change); TimeoutError if not."""
        async with asyncio.timeout(timeout):
            while not predicate():
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    # Also poll: acks and connection changes do not all pass through _notify.
                    async with asyncio.timeout(0.02):
                        await self._changed.wait()

    async def wait_connected(self, timeout: float = 5.0) -> None:
        await self.wait_until(lambda: self.connected, timeout)

    async def wait_settled(self, timeout: float = 5.0) -> None:
        await self.wait_until(lambda: self.settled, timeout)

    def _notify(self) -> None:
        self._changed.set()
        if self.on_change is not None:
            self.on_change()
