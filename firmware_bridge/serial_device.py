"""The device's end of the serial link, as a compatible clock must behave (used by the emulator).

On every new connection, and whenever a PING asks for it (or arrives before a HELLO_ACK), the
device sends HELLO. It answers every PING with PONG. Reliable events (PRESS, KEY, POWER,
BATTERY) wait until a HELLO_ACK and are kept until acknowledged, across retries and
reconnects, so no press is ever lost; the host's dedupe makes sure none counts twice.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Protocol

from firmware_bridge.serial_codec import PROTOCOL_VERSION
from firmware_bridge.serial_link import LinkBase
from firmware_bridge.serial_messages import (
    Capability,
    Hello,
    HelloAck,
    Message,
    Nak,
    NakReason,
    Ping,
    Pong,
)
from firmware_bridge.serial_stream import LinkStats

__all__ = ["DEFAULT_CAPABILITIES", "DeviceLink", "DeviceLinkListener"]

log = logging.getLogger(__name__)

DEFAULT_CAPABILITIES = (
    Capability.PAUSE_KEY | Capability.ARBITER_KEY | Capability.POWER_SENSE
    | Capability.BATTERY_SENSE | Capability.BUZZER | Capability.BRIGHTNESS | Capability.TEXT
)  # fmt: skip


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
    ) -> None:
        super().__init__(stats=stats, rto=rto, max_retries=max_retries, keep_on_give_up=True)
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

    def hello(self) -> Hello:
        return Hello(
            self.version, self.firmware, self.capabilities, self.device_id, self.session,
            self.sender.oldest(),
        )  # fmt: skip

    def accepting(self) -> bool:
        return self.acked

    def connection_made(self) -> None:
        self.acked = False
        self.send(self.hello())

    def connection_lost(self, exc: Exception | None) -> None:
        self.acked = False

    def control_received(self, message: Message, recv_ns: int) -> None:
        if isinstance(message, Ping):
            self.send(Pong(message.token, self.clock_ms()))
            if message.flags & Ping.WANT_HELLO or not self.acked:
                self.send(self.hello())
        elif isinstance(message, HelloAck):
            if message.session != self.session or message.version != self.version:
                self.stats.unexpected += 1
                return
            self.acked = True
            self.refused_version = False
            # Everything before the host's oldest unacknowledged seq has been delivered here.
            self.receiver.reset(message.tx_seq)
            self.sender.resume()
        elif isinstance(message, Nak) and message.reason is NakReason.VERSION:
            if not self.refused_version:
                log.warning("host refused protocol version %d", self.version)
            self.refused_version = True
            self.acked = False
            self.sender.pause()

    def _deliver(self, message: Message, recv_ns: int) -> None:
        self.listener.device_message(message)
