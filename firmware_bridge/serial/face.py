"""``SerialClockFace``: a microcontroller clock on a serial line, as a ``ClockFace``.

Layers, bottom up: the transport from pyserial-asyncio-fast (a device path, ``socket://``, a
pty), ``FrameProtocol`` (bytes -> frames), ``HostLink`` (handshake, acks, keepalive) and this
face, which turns delivered messages into ``FaceEvent`` values and ``show``/``beep``/
``set_brightness`` into messages. A dropped transport is reopened every
``reconnect_interval``; the device's own timestamps are mapped to host monotonic time with
the PING/PONG offset estimate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import serial_asyncio_fast

from clock_service import Side
from firmware_bridge.face import ClockFace, FaceEvent, FaceEventKind, FaceView
from firmware_bridge.serial.codec import SerialFaceError
from firmware_bridge.serial.link import HostLink, LinkError, ProtocolVersionError
from firmware_bridge.serial.messages import (
    SHOW_FLAG_BLACK,
    SHOW_FLAG_RED,
    Battery,
    Beep,
    Brightness,
    Hello,
    Key,
    KeyKind,
    Message,
    Power,
    PowerState,
    Press,
    Show,
)
from firmware_bridge.serial.stream import LinkStats

__all__ = ["LinkError", "ProtocolVersionError", "SerialClockFace", "SerialFaceError"]

# An event that comes before the session has a good offset sample (a round trip of at most
# _PLACE_RTT_NS: the mapping is then good to half of it) waits for one, at most _PLACE_WAIT_S;
# then it is placed with the best sample there is, or at its receive time.
_PLACE_WAIT_S = 1.0
_PLACE_RTT_NS = 5_000_000

log = logging.getLogger(__name__)


class SerialClockFace(ClockFace):
    """A clock face behind the serial clock protocol (docs/protocol.md).

    ``open()`` connects and waits up to ``handshake_timeout`` for the device's HELLO. It raises
    ``LinkError`` when the URL cannot be opened and ``ProtocolVersionError`` when the device
    speaks another protocol version; a device that does not answer is no error: the face
    emits ``LINK_LOST`` and keeps trying, then ``LINK_RESTORED`` once it answers.
    """

    def __init__(
        self,
        url: str,
        *,
        baudrate: int = 115_200,
        name: str | None = None,
        handshake_timeout: float = 2.0,
        reconnect_interval: float = 1.0,
        ping_interval: float = 0.25,
        lost_after: float = 1.5,
        retransmit_timeout: float = 0.1,
        max_retries: int = 8,
        max_backdate_ms: int = 10_000,
    ) -> None:
        if not url:
            raise ValueError("a serial clock needs a URL: /dev/ttyUSB0, socket://host:port, …")
        if handshake_timeout <= 0 or reconnect_interval <= 0 or max_backdate_ms < 0:
            raise ValueError("timeouts and intervals must be positive")
        super().__init__(name=name or f"serial {url}")
        self.url = url
        self.baudrate = baudrate
        self.handshake_timeout = handshake_timeout
        self.reconnect_interval = reconnect_interval
        self.max_backdate_ns = max_backdate_ms * 1_000_000
        self.stats = LinkStats()
        self.link = HostLink(
            self, stats=self.stats, ping_interval=ping_interval, lost_after=lost_after,
            rto=retransmit_timeout, max_retries=max_retries,
        )  # fmt: skip
        self.last_error: SerialFaceError | None = None
        self._down = False
        self._closing = False
        self._brightness: int | None = None
        self._handshake = asyncio.Event()
        self._disconnected = asyncio.Event()
        self._supervisor: asyncio.Task[None] | None = None
        # Events that came before the first offset sample of a session (the device's clock
        # is not mapped yet): held, in order, until a PONG maps it (at most ``_PLACE_WAIT_S``)
        self._unplaced: list[tuple[FaceEventKind, int, int, Side | None]] = []
        self._place_timer: asyncio.TimerHandle | None = None
        self.link.on_sample = self._place_held

    # -- state ------------------------------------------------------------------------------
    @property
    def link_up(self) -> bool:
        return self.link.up

    @property
    def device(self) -> Hello | None:
        """The device's last accepted HELLO: firmware, capabilities, device id."""
        return self.link.device

    def __repr__(self) -> str:
        return f"<SerialClockFace {self.url} {self.link.state}>"

    # -- lifecycle --------------------------------------------------------------------------
    async def _open(self) -> None:
        # open() may be tried again after a failure (the node retries a bad clock each second)
        self._closing = False
        self._handshake.clear()
        self.last_error = None
        try:
            await self._connect()
        except (OSError, ValueError) as exc:
            raise LinkError(f"{self.name}: cannot open {self.url}: {exc}") from exc
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.handshake_timeout):
                await self._handshake.wait()
        if isinstance(self.last_error, ProtocolVersionError) and not self.link.up:
            error = self.last_error
            await self._shutdown()
            raise error
        self._supervisor = asyncio.get_running_loop().create_task(
            self._reconnect_forever(), name=f"{self.name} reconnect"
        )

    async def _connect(self) -> None:
        self._disconnected.clear()
        loop = asyncio.get_running_loop()
        await serial_asyncio_fast.create_serial_connection(
            loop, self._protocol, self.url, baudrate=self.baudrate
        )

    def _protocol(self) -> asyncio.Protocol:
        frames = self.link.protocol()
        face = self

        # Wrap connection_lost so the reconnect loop and close() learn the transport is gone.
        def connection_lost(exc: Exception | None) -> None:
            type(frames).connection_lost(frames, exc)
            face._disconnected.set()

        frames.connection_lost = connection_lost  # type: ignore[method-assign]
        return frames

    async def _reconnect_forever(self) -> None:
        while not self._closing:
            await self._disconnected.wait()
            await asyncio.sleep(self.reconnect_interval)
            if self._closing:
                return
            try:
                await self._connect()
            except (OSError, ValueError) as exc:
                self._disconnected.set()
                log.debug("%s: reconnect failed: %s", self.name, exc)

    async def _close(self) -> None:
        await self._shutdown()

    async def _shutdown(self) -> None:
        self._closing = True
        if self._place_timer is not None:
            self._place_timer.cancel()
            self._place_timer = None
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        connected = self.link.frames is not None
        self.link.close()
        if connected:
            # Let the transport finish closing (pyserial-asyncio closes the port in a thread).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2.0):
                    await self._disconnected.wait()

    # -- HostLinkListener -------------------------------------------------------------------
    def link_message(self, message: Message, recv_ns: int) -> None:
        if self._closing:
            return
        if isinstance(message, Press):
            self._event(FaceEventKind.PRESS, message.device_ms, recv_ns, message.side)
        elif isinstance(message, Key):
            kind = FaceEventKind.PAUSE_KEY
            if message.key is KeyKind.ARBITER:
                kind = FaceEventKind.ARBITER_KEY
            self._event(kind, message.device_ms, recv_ns)
        elif isinstance(message, Power):
            kind = (
                FaceEventKind.POWER_ON
                if message.state is PowerState.ON
                else FaceEventKind.POWER_OFF
            )
            self._event(kind, message.device_ms, recv_ns)
        elif isinstance(message, Battery):
            if message.low:
                self._event(FaceEventKind.BATTERY_LOW, message.device_ms, recv_ns)
            else:
                log.info("%s: battery recovered", self.name)

    def link_established(self, hello: Hello) -> None:
        self.last_error = None
        self._handshake.set()
        if self._closing:
            return
        if self._down:
            self._down = False
            self._emit(FaceEvent(FaceEventKind.LINK_RESTORED, self.now_ns()))
        # The host dropped what it could not deliver; bring the device up to date.
        if self.last_view is not None:
            self.link.send_reliable(self._show_message(self.last_view))
        if self._brightness is not None:
            self.link.send_reliable(Brightness(self._brightness))

    def device_rebooted(self, old: Hello, new: Hello) -> None:
        if self._closing:
            return
        log.warning("%s: clock rebooted (session %d -> %d)", self.name, old.session, new.session)
        self._emit(FaceEvent(FaceEventKind.CLOCK_REBOOTED, self.now_ns()))

    async def quiet(self, timeout: float) -> bool:
        """Prove, within ``timeout`` s, that no event the clock sent before now can still
        arrive: two clean probe rounds in a row (``HostLink.probe_quiet``), then the face's
        queue drained. False when the link cannot prove it in time (e.g. it is down)."""
        clean = 0
        try:
            async with asyncio.timeout(timeout):
                while clean < 2:
                    if not self.link.up:
                        clean = 0
                        await asyncio.sleep(self.link.ping_interval / 5)
                        continue
                    proved = await self.link.probe_quiet()
                    clean = clean + 1 if proved and not self._unplaced else 0
                await self._drained()
        except TimeoutError:
            return False
        return True

    def link_broken(self, reason: str, error: SerialFaceError | None) -> None:
        if error is not None:
            self.last_error = error
        if isinstance(error, ProtocolVersionError):
            self._handshake.set()  # open() stops waiting and raises it
        if self._closing or self._down:
            return
        self._down = True
        self._emit(FaceEvent(FaceEventKind.LINK_LOST, self.now_ns()))

    def _event(
        self, kind: FaceEventKind, device_ms: int, recv_ns: int, side: Side | None = None
    ) -> None:
        best = self.link.offset.best_rtt_ns
        if self._unplaced or best is None or best > _PLACE_RTT_NS:
            self._unplaced.append((kind, device_ms, recv_ns, side))
            if self._place_timer is None:
                loop = asyncio.get_running_loop()
                self._place_timer = loop.call_later(_PLACE_WAIT_S, self._place_held, True)
                self.link.ping_now()
            return
        self._emit(FaceEvent(kind, self._event_ns(device_ms, recv_ns), side, device_ms))

    def _place_held(self, timed_out: bool = False) -> None:
        """A new offset sample came (or the wait ran out: then the events are placed with
        the best sample there is, or at their receive time)."""
        if not self._unplaced:
            return
        best = self.link.offset.best_rtt_ns
        if not timed_out and (best is None or best > _PLACE_RTT_NS):
            self.link.ping_now()  # not good enough to place a press by: another sample
            return
        if self._place_timer is not None:
            self._place_timer.cancel()
            self._place_timer = None
        held, self._unplaced = self._unplaced, []
        for kind, device_ms, recv_ns, side in held:
            if not self._closing:
                self._emit(FaceEvent(kind, self._event_ns(device_ms, recv_ns), side, device_ms))

    def _event_ns(self, device_ms: int, recv_ns: int) -> int:
        """When it happened on the host's clock: the receive time, moved back by the transit
        time the offset estimate reveals (never later than receipt, never absurdly earlier)."""
        estimate = self.link.offset.to_host_ns(device_ms)
        if estimate is None or estimate > recv_ns or recv_ns - estimate > self.max_backdate_ns:
            return recv_ns
        return estimate

    # -- into the face ----------------------------------------------------------------------
    @staticmethod
    def _show_message(view: FaceView) -> Show:
        now = ClockFace.now_ns()
        flags = 0
        if view.flag is Side.RED:
            flags |= SHOW_FLAG_RED
        elif view.flag is Side.BLACK:
            flags |= SHOW_FLAG_BLACK
        return Show(
            min(view.remaining_ms(Side.RED, now), 0xFFFFFFFF),
            min(view.remaining_ms(Side.BLACK, now), 0xFFFFFFFF),
            view.running if view.flag is None else None,
            flags,
            view.text,
        )

    async def show(self, view: FaceView) -> None:
        message = self._show_message(view)  # raises ValueError for text a 7-segment cannot show
        await super().show(view)
        if self.link.up:
            self.link.send_reliable(message)

    async def beep(self, ms: int = 100) -> None:
        message = Beep(ms)
        if self.link.up:  # a beep that comes late is worse than none
            self.link.send_reliable(message)

    async def set_brightness(self, level: int) -> None:
        await super().set_brightness(level)
        self._brightness = level
        if self.link.up:
            self.link.send_reliable(Brightness(level))
