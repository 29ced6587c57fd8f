"""The link layer of the serial clock: handshake, acks and retransmits, keepalive.

``LinkBase`` sits on a ``FrameProtocol`` and is shared by both ends: acks, naks, the reliable
sender and receiver, muting and a send delay (used by the emulator). ``HostLink`` is the
host's end: it pings every ``ping_interval``, notices a silent device after ``lost_after``
(well inside 2 s), asks for a HELLO until one with the right protocol version arrives, and
estimates the device clock's offset from PING/PONG round trips.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from firmware_bridge.serial.codec import (
    PROTOCOL_VERSION,
    BadPayloadError,
    FrameError,
    SerialFaceError,
    UnknownMessageTypeError,
)
from firmware_bridge.serial.frames import Frame
from firmware_bridge.serial.messages import (
    Ack,
    Hello,
    HelloAck,
    Message,
    Nak,
    NakReason,
    Ping,
    Pong,
)
from firmware_bridge.serial.reliable import Receiver, ReliableSender
from firmware_bridge.serial.stream import FrameProtocol, LinkStats

__all__ = [
    "HostLink",
    "HostLinkListener",
    "LinkBase",
    "LinkError",
    "OffsetEstimator",
    "ProtocolVersionError",
]

log = logging.getLogger(__name__)


class LinkError(SerialFaceError):
    """The serial link cannot be opened or has failed."""


class ProtocolVersionError(LinkError):
    """The device speaks another protocol version; the host refuses it."""

    def __init__(self, message: str, *, version: int) -> None:
        super().__init__(message)
        self.version = version


class LinkBase:
    """What both ends share. Subclasses handle the unreliable control messages."""

    #: reliable messages this end accepts (``FROM_DEVICE`` of the peer's messages)
    ACCEPTS_FROM_DEVICE: bool

    def __init__(
        self,
        *,
        stats: LinkStats | None = None,
        window: int = 8,
        rto: float = 0.1,
        max_retries: int = 8,
        keep_on_give_up: bool = False,
        late_delivery: bool = True,
    ) -> None:
        self.stats = stats if stats is not None else LinkStats()
        self.frames: FrameProtocol | None = None
        self.sender = ReliableSender(
            self._transmit, self.stats, window=window, rto=rto, max_retries=max_retries,
            keep_on_give_up=keep_on_give_up,
        )  # fmt: skip
        self.receiver = Receiver(self._deliver, self.stats, late_delivery=late_delivery)
        self.muted = False  # emulator: a device that stops answering (drops rx and tx)
        self.tx_delay = 0.0  # emulator: seconds every outgoing frame is held back
        self._delayed: deque[tuple[float, bytes]] = deque()
        self._delay_timer: asyncio.TimerHandle | None = None

    def protocol(self) -> FrameProtocol:
        """A fresh frame Protocol for a new transport (the asyncio ``protocol_factory``)."""
        return FrameProtocol(self, self.stats)

    # -- sending ----------------------------------------------------------------------------
    def send_reliable(self, message: Message) -> None:
        self.sender.submit(message)

    def send(self, message: Message) -> None:
        self._transmit(Frame(0, message))

    def write_raw(self, data: bytes) -> None:
        self._write(data)

    def _transmit(self, frame: Frame) -> None:
        if self.frames is None or self.muted:
            return
        self.stats.frames_tx += 1
        self._write(frame.to_bytes())

    def _write(self, data: bytes) -> None:
        frames = self.frames
        if frames is None:
            return
        if self.tx_delay <= 0 and not self._delayed:
            frames.write_raw(data)
            return
        loop = asyncio.get_running_loop()
        self._delayed.append((loop.time() + self.tx_delay, data))
        if self._delay_timer is None:
            self._delay_timer = loop.call_at(self._delayed[0][0], self._flush_delayed)

    def _flush_delayed(self) -> None:
        # A FIFO, not one timer per frame: equal deadlines must keep their order on the wire.
        self._delay_timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        while self._delayed and self._delayed[0][0] <= now:
            data = self._delayed.popleft()[1]
            if self.frames is not None:
                self.frames.write_raw(data)
        if self._delayed:
            self._delay_timer = loop.call_at(self._delayed[0][0], self._flush_delayed)

    # -- FrameListener ----------------------------------------------------------------------
    def frame_connection_made(self, frames: FrameProtocol) -> None:
        if self.frames is not None and self.frames is not frames:
            self.frames.close()  # one transport at a time
        self.frames = frames
        self.stats.connects += 1
        self.connection_made()

    def frame_connection_lost(self, frames: FrameProtocol, exc: Exception | None) -> None:
        if frames is not self.frames:
            return
        self.frames = None
        self._delayed.clear()
        self.sender.pause()
        self.connection_lost(exc)

    def frame_rejected(self, error: FrameError) -> None:
        if self.muted or not error.seq:
            return
        # An intact frame we cannot take: say so, or the peer retransmits it forever.
        if isinstance(error, UnknownMessageTypeError):
            self._nak(error.seq, NakReason.UNKNOWN_TYPE)
        elif isinstance(error, BadPayloadError):
            self._nak(error.seq, NakReason.BAD_PAYLOAD)

    def frame_received(self, frame: Frame) -> None:
        if self.muted:
            return
        message = frame.message
        recv_ns = time.monotonic_ns()
        self.heard(recv_ns)
        if isinstance(message, Ack):
            self.sender.ack(message.seq)
        elif isinstance(message, Nak):
            if message.seq:
                self.sender.nak(message.seq, message.reason.name)
            else:
                self.stats.naks_rx += 1
                self.control_received(message, recv_ns)
        elif message.RELIABLE and message.FROM_DEVICE is self.ACCEPTS_FROM_DEVICE:
            if not self.accepting():
                self.stats.not_ready += 1  # unacknowledged: resent after the handshake
            elif self.receiver.receive(frame.seq, message, recv_ns):
                self.send(Ack(frame.seq))
        elif message.RELIABLE:
            self.stats.unexpected += 1
            self._nak(frame.seq, NakReason.UNEXPECTED)
        elif message.FROM_DEVICE is self.ACCEPTS_FROM_DEVICE:
            self.control_received(message, recv_ns)
        else:
            self.stats.unexpected += 1

    def _nak(self, seq: int, reason: NakReason) -> None:
        self.stats.naks_tx += 1
        self.send(Nak(seq, reason))

    # -- for subclasses ---------------------------------------------------------------------
    def accepting(self) -> bool:
        return True

    def connection_made(self) -> None: ...
    def connection_lost(self, exc: Exception | None) -> None: ...
    def heard(self, recv_ns: int) -> None: ...
    def control_received(self, message: Message, recv_ns: int) -> None: ...
    def _deliver(self, message: Message, recv_ns: int) -> None: ...

    def close(self) -> None:
        self.sender.drop_all()
        self.receiver.forget()
        if self._delay_timer is not None:
            self._delay_timer.cancel()
            self._delay_timer = None
        if self.frames is not None:
            self.frames.close()


class OffsetEstimator:
    """Maps device milliseconds to host monotonic ns from PING/PONG round trips.

    Like NTP's clock filter: of the recent samples the one with the shortest round trip is
    the most trustworthy, and the device answered somewhere inside it, best guess the middle.
    """

    def __init__(self, keep: int = 16) -> None:
        self._samples: deque[tuple[int, int, int]] = deque(maxlen=keep)  # rtt, mid_ns, dev_ms

    def add(self, sent_ns: int, recv_ns: int, device_ms: int) -> None:
        self._samples.append((recv_ns - sent_ns, (sent_ns + recv_ns) // 2, device_ms))

    def reset(self) -> None:
        self._samples.clear()

    @property
    def best_rtt_ns(self) -> int | None:
        return min(self._samples)[0] if self._samples else None

    def to_host_ns(self, device_ms: int) -> int | None:
        if not self._samples:
            return None
        _rtt, mid_ns, ref_ms = min(self._samples)
        delta = (device_ms - ref_ms) & 0xFFFFFFFF
        if delta >= 0x80000000:  # the device clock wraps every 49.7 days
            delta -= 0x100000000
        return mid_ns + delta * 1_000_000


class HostLinkListener(Protocol):
    def link_message(self, message: Message, recv_ns: int) -> None: ...
    def link_established(self, hello: Hello) -> None: ...
    def link_broken(self, reason: str, error: SerialFaceError | None) -> None: ...

    # Optional: ``device_rebooted(old, new)`` — a new session of the clock (a reboot or a
    # swapped clock); ``link_established`` follows it, even while the link stayed up.


class HostLink(LinkBase):
    """The host's end of the link."""

    ACCEPTS_FROM_DEVICE = True

    def __init__(
        self,
        listener: HostLinkListener,
        *,
        stats: LinkStats | None = None,
        ping_interval: float = 0.25,
        lost_after: float = 1.5,
        rto: float = 0.1,
        max_retries: int = 8,
    ) -> None:
        super().__init__(stats=stats, rto=rto, max_retries=max_retries)
        if ping_interval + lost_after > 2.0:
            raise ValueError("ping_interval + lost_after must stay within 2 s")
        self.listener = listener
        self.ping_interval = ping_interval
        self.lost_after_ns = int(lost_after * 1e9)
        self.state = "disconnected"  # handshake | up | lost | refused | closed
        self.device: Hello | None = None
        self.offset = OffsetEstimator()
        self._last_rx_ns = 0
        self._since_ns = 0
        self._down_reported = False
        self._pings: dict[int, int] = {}
        self._ping_timer: asyncio.TimerHandle | None = None
        self._hello_waiters: list[asyncio.Future[None]] = []
        self._pong_waiters: dict[int, asyncio.Future[None]] = {}
        self._token = 0
        self._extra_ping_ns = 0
        self.delivered = 0  # reliable messages handed to the listener
        self.on_sample: Callable[[], None] | None = None  # a new PING/PONG offset sample

    @property
    def up(self) -> bool:
        return self.state == "up"

    def accepting(self) -> bool:
        return self.state == "up"

    def connection_made(self) -> None:
        self.state = "handshake"
        self._since_ns = self._last_rx_ns = time.monotonic_ns()
        self._ping()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_pinging()
        if self.state != "closed":
            self._go_down(f"transport closed ({exc or 'eof'})", LinkError, lost=True)
            self.state = "disconnected"

    def heard(self, recv_ns: int) -> None:
        self._last_rx_ns = recv_ns

    def control_received(self, message: Message, recv_ns: int) -> None:
        if isinstance(message, Hello):
            self._hello(message)
        elif isinstance(message, Pong):
            sent = self._pings.pop(message.token, None)
            if sent is not None:
                self.offset.add(sent, recv_ns, message.device_ms)
                if self.on_sample is not None:
                    self.on_sample()
            waiter = self._pong_waiters.pop(message.token, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)
        elif isinstance(message, Nak):
            log.warning("device refused an unreliable frame: %s", message.reason.name)

    def _deliver(self, message: Message, recv_ns: int) -> None:
        self.delivered += 1
        self.listener.link_message(message, recv_ns)

    def _hello(self, hello: Hello) -> None:
        self.stats.hellos += 1
        if hello.version != PROTOCOL_VERSION:
            self.stats.version_mismatch += 1
            self._nak(0, NakReason.VERSION)
            if self.state != "refused":
                self.sender.pause()
                msg = (
                    f"device {hello.device_id:#010x} speaks protocol version {hello.version}, "
                    f"this host speaks {PROTOCOL_VERSION}: refused"
                )
                log.warning(msg)
                self.state = "refused"
                self._down_reported = True
                self.stats.link_lost += 1
                self.listener.link_broken(msg, ProtocolVersionError(msg, version=hello.version))
            return
        known = self.device
        same = (
            known is not None
            and (known.device_id, known.session) == (hello.device_id, hello.session)
            and self.receiver.expected is not None
        )
        rebooted = known is not None and not same
        if not same:
            # A new device or a reboot: its seq numbering starts afresh where it says.
            self.receiver.reset(hello.tx_seq)
            self.offset.reset()
            if self.frames is not None:
                # A sample at once: events resent after this handshake wait for one (face).
                loop = asyncio.get_running_loop()
                loop.call_soon(self.ping_now)
        elif hello.tx_seq == self.receiver.expected and self.receiver.holding:
            self.receiver.extend_gap()  # the device still holds the frame the gap waits for
        self.device = hello
        self.send(HelloAck(PROTOCOL_VERSION, hello.session, self.sender.oldest()))
        for waiter in self._hello_waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._hello_waiters.clear()
        if rebooted:
            assert known is not None
            self.stats.reboots += 1
            log.warning(
                "clock %#010x session %d -> %#010x session %d: the clock rebooted",
                known.device_id, known.session, hello.device_id, hello.session,
            )  # fmt: skip
            notify = getattr(self.listener, "device_rebooted", None)
            if notify is not None:
                notify(known, hello)
        if self.state == "up" and not rebooted:
            return  # the device missed our HELLO_ACK; nothing else changed
        self.state = "up"
        self.sender.resume()
        if self._down_reported:
            self.stats.link_restored += 1
            self._down_reported = False
        self.listener.link_established(hello)

    def _go_down(self, reason: str, error_cls: type[LinkError] | None, *, lost: bool) -> None:
        # The host drops display updates it could not deliver: the face resends its latest
        # view once the link is back, and a stale beep is worse than none.
        self.sender.drop_all()
        if self.state in ("up", "handshake") and not self._down_reported:
            self._down_reported = True
            self.stats.link_lost += 1
            log.warning("serial link lost: %s", reason)
            self.listener.link_broken(reason, error_cls(reason) if error_cls else None)
        if lost and self.state != "disconnected":
            self.state = "lost"

    def _ping(self) -> None:
        self._ping_timer = None
        if self.frames is None:
            return
        now = time.monotonic_ns()
        silent = now - self._last_rx_ns
        if self.state == "up" and silent > self.lost_after_ns:
            self._go_down(f"no answer for {silent // 1_000_000} ms", LinkError, lost=True)
        elif self.state == "handshake" and now - self._since_ns > self.lost_after_ns:
            self._go_down(f"no HELLO within {self.lost_after_ns // 1_000_000} ms", None, lost=True)
        self._send_ping(want_hello=self.state != "up")
        loop = asyncio.get_running_loop()
        self._ping_timer = loop.call_later(self.ping_interval, self._ping)

    def ping_now(self) -> None:
        """One more PING/PONG sample at once (the face wants a good offset); at most one
        per 20 ms, so a face waiting on a bad line does not flood it."""
        now = time.monotonic_ns()
        if self.frames is not None and now - self._extra_ping_ns >= 20_000_000:
            self._extra_ping_ns = now
            self._send_ping(want_hello=self.state != "up")

    def _send_ping(self, *, want_hello: bool) -> int:
        now = time.monotonic_ns()
        # The host's ms clock, made unique: two pings in one ms keep their own round trips.
        token = max((now // 1_000_000) & 0xFFFFFFFF, (self._token + 1) & 0xFFFFFFFF)
        self._token = token
        if len(self._pings) > 16:
            self._pings.clear()  # unanswered pings of a silent device
        self._pings[token] = now
        self.send(Ping(token, Ping.WANT_HELLO if want_hello else 0))
        return token

    async def probe_quiet(self) -> bool:
        """One round of proof that no event the device sent before now is still on its way.

        A PING asking for HELLO; the HELLO_ACK that answers it makes the device resend, at
        once, every event it holds (docs/protocol.md §4); then a PING whose PONG the device
        sends behind those resends, on the same ordered line. True when that round came back
        with nothing delivered, nothing held behind a gap and no frame rejected in between
        (a damaged frame might have been a resend). No timeout here: the caller bounds it.
        """
        if not self.up:
            return False
        loop = asyncio.get_running_loop()
        rejected, delivered = self.stats.rejected, self.delivered
        hello: asyncio.Future[None] = loop.create_future()
        self._hello_waiters.append(hello)
        self._send_ping(want_hello=True)
        await hello
        pong: asyncio.Future[None] = loop.create_future()
        self._pong_waiters[self._send_ping(want_hello=False)] = pong
        while len(self._pong_waiters) > 16:
            self._pong_waiters.pop(next(iter(self._pong_waiters))).cancel()
        await pong
        return (
            self.up
            and self.stats.rejected == rejected
            and self.delivered == delivered
            and not self.receiver.holding
        )

    def _stop_pinging(self) -> None:
        if self._ping_timer is not None:
            self._ping_timer.cancel()
            self._ping_timer = None

    def close(self) -> None:
        self.state = "closed"
        self._stop_pinging()
        for waiter in [*self._hello_waiters, *self._pong_waiters.values()]:
            waiter.cancel()
        self._hello_waiters.clear()
        self._pong_waiters.clear()
        super().close()
