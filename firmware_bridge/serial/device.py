"""The device's end of the serial link, as a compatible clock must behave (used by the emulator).

On every new connection, and whenever a PING asks for it (or arrives before a HELLO_ACK), the
device sends HELLO. It answers every PING with PONG. Reliable events (PRESS, KEY, POWER,
BATTERY) wait until a HELLO_ACK and are kept until acknowledged, across retries and
reconnects, so no press is ever lost; the host's dedupe makes sure none counts twice. A
device that gives up on an event (1 + 8 tries) re-handshakes at once, so the event is resent
even while the link stays up. Only the first HELLO_ACK of a handshake sets the receive
counter; a later one (the answer to a second HELLO) only ever moves it forward.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Protocol

from firmware_bridge.serial.codec import PROTOCOL_VERSION
from firmware_bridge.serial.link import LinkBase
from firmware_bridge.serial.messages import (
    Capability,
    Hello,
    HelloAck,
    Message,
    Nak,
    NakReason,
    Ping,
    Pong,
)
from firmware_bridge.serial.stream import LinkStats

__all__ = ["DEFAULT_CAPABILITIES", "FAULTS", "DeviceLink", "DeviceLinkListener"]

log = logging.getLogger(__name__)

DEFAULT_CAPABILITIES = (
    Capability.PAUSE_KEY | Capability.ARBITER_KEY | Capability.POWER_SENSE
    | Capability.BATTERY_SENSE | Capability.BUZZER | Capability.BRIGHTNESS | Capability.TEXT
)  # fmt: skip


# Deliberate faults, for testing the conformance kit (firmware_bridge/serial/conformance.py)
# against a device that breaks one rule of docs/protocol.md; never on by default.
FAULTS = {
    "rewind-counter": "§4.4: every HELLO_ACK sets the receive counter, even backwards",
    "no-rehandshake": "§5: no new HELLO after giving up on an event (1 + 8 sends)",
    "ignore-version-refusal": "§4.2: a NAK reason 3 changes nothing (events keep coming)",
}


class DeviceLinkListener(Protocol):
    def device_message(self, message: Message) -> None: ...


class DeviceLink(LinkBase):
    """The device end: HELLO on demand, PONG, events held until acknowledged."""

    ACCEPTS_FROM_DEVICE = False

    def __init__(
        self,
        listener: DeviceLinkListener,
        *,
        device_id: int = 0x51A0_0001,
        firmware: tuple[int, int, int] = (1, 0, 0),
        capabilities: Capability = DEFAULT_CAPABILITIES,
        clock_ms: Callable[[], int] | None = None,
        stats: LinkStats | None = None,
        rto: float = 0.1,
        max_retries: int = 8,
        faults: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__(
            stats=stats, rto=rto, max_retries=max_retries, keep_on_give_up=True,
            late_delivery=False,  # §5: a frame a gap passed over is acknowledged, not shown
        )  # fmt: skip
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown device faults {sorted(unknown)}; known: {sorted(FAULTS)}")
        self.faults = frozenset(faults)
        self.listener = listener
        self.device_id = device_id
        self.firmware = firmware
        self.capabilities = capabilities
        self.version = PROTOCOL_VERSION
        self.session = random.randrange(1, 0x10000)  # a new session per boot
        boot_ns = time.monotonic_ns()
        # A device clock that does not start at the host's zero, so offset mapping is exercised.
        base = random.randrange(0, 1 << 31)
        self.clock_ms = clock_ms or (
            lambda: (base + (time.monotonic_ns() - boot_ns) // 1_000_000) & 0xFFFFFFFF
        )
        self.acked = False  # a HELLO_ACK for this session arrived on this connection
        self.refused_version = False
        self.sender.on_give_up = self._give_up
        self.rehandshakes = 0
        # A host silent this long may have restarted: its next HELLO_ACK starts afresh.
        self.host_restart_after_ns = 1_500_000_000
        self._last_rx_ns = 0
        self._rx_gap_ns = 0
        self._handshaken = False  # a HELLO_ACK set the receive counter on this connection

    def hello(self) -> Hello:
        return Hello(
            self.version, self.firmware, self.capabilities, self.device_id, self.session,
            self.sender.oldest(),
        )  # fmt: skip

    def accepting(self) -> bool:
        return self.acked

    def connection_made(self) -> None:
        self.acked = False
        self._handshaken = False
        self.send(self.hello())

    def connection_lost(self, exc: Exception | None) -> None:
        self.acked = False

    def heard(self, recv_ns: int) -> None:
        self._rx_gap_ns = recv_ns - self._last_rx_ns if self._last_rx_ns else 0
        self._last_rx_ns = recv_ns

    def reboot(self) -> None:
        """A brown-out: a new session, no receive state, HELLO at once. Events not yet
        acknowledged are kept (a clock that stores them in flash); they go after the handshake."""
        old = self.session
        while self.session == old:
            self.session = random.randrange(1, 0x10000)
        self.acked = False
        self._handshaken = False
        self.receiver.forget()
        self.sender.pause()
        self.send(self.hello())

    def _give_up(self) -> None:
        """The retry budget ran out on an event: ask for a new handshake, whose HELLO_ACK
        makes us resend every held event (the link may be up the whole time: a noise burst)."""
        if not self.acked or self.frames is None or "no-rehandshake" in self.faults:
            return
        self.rehandshakes += 1
        log.info("gave up on an event; handshaking again to resend it")
        self.acked = False
        self.sender.pause()
        self.send(self.hello())

    def control_received(self, message: Message, recv_ns: int) -> None:
        if isinstance(message, Ping):
            self.send(Pong(message.token, self.clock_ms()))
            if message.flags & Ping.WANT_HELLO or not self.acked:
                self.send(self.hello())
        elif isinstance(message, HelloAck):
            if message.session != self.session or message.version != self.version:
                self.stats.unexpected += 1
                return
            fresh = (
                not self._handshaken
                or self.receiver.expected is None
                or self._rx_gap_ns > self.host_restart_after_ns
            )
            self.acked = True
            self._handshaken = True
            self.refused_version = False
            # Everything before the host's oldest unacknowledged seq has been delivered here.
            # The answer to a second HELLO of one handshake may name a seq this end has
            # delivered since: never rewind to it (the next update would wait out a gap).
            if fresh or "rewind-counter" in self.faults:
                self.receiver.reset(message.tx_seq)
            else:
                self.receiver.advance_to(message.tx_seq)
            self.sender.resume()
        elif isinstance(message, Nak) and message.reason is NakReason.VERSION:
            if "ignore-version-refusal" in self.faults:
                return
            if not self.refused_version:
                log.warning("host refused protocol version %d", self.version)
            self.refused_version = True
            self.acked = False
            self.sender.pause()

    def _deliver(self, message: Message, recv_ns: int) -> None:
        self.listener.device_message(message)
