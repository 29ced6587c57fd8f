"""What the link-layer tests share: recorders for both ends, a lone host link, a bounded wait.

``HostRecorder`` and ``DeviceRecorder`` are the upper layers of a ``HostLink`` and a
``DeviceLink``: they keep what the link hands up. ``host_alone`` is a host link on a
transport that only records, after a HELLO: the test plays the device by hand.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from firmware_bridge.serial.device import DeviceLink
from firmware_bridge.serial.frames import PROTOCOL_VERSION, Capability, Frame, Hello, Message
from firmware_bridge.serial.link import HostLink
from support.serial_fakes import FakeTransport, feed_bytewise

HELLO = Hello(PROTOCOL_VERSION, (1, 0, 0), Capability.BUZZER, 0x1234, 0x0042, 1)


class HostRecorder:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.ups: list[Hello] = []
        self.downs: list[tuple[str, object]] = []  # (reason, error) of each time it broke

    def link_message(self, message: Message, recv_ns: int) -> None:
        self.messages.append(message)

    def link_established(self, hello: Hello, *args: object) -> None:
        self.ups.append(hello)

    def link_broken(self, reason: str, error: object) -> None:
        self.downs.append((reason, error))


class DeviceRecorder:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    def device_message(self, message: Message) -> None:
        self.messages.append(message)


async def until(predicate: Callable[[], object], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)


def _alone(link: HostLink | DeviceLink) -> FakeTransport:
    proto = link.protocol()
    transport = FakeTransport(proto)
    proto.connection_made(transport)
    return transport


def host_alone() -> tuple[HostLink, HostRecorder, FakeTransport]:
    """A host link on a transport that only records: the test plays the device by hand."""
    rec = HostRecorder()
    link = HostLink(rec)
    transport = _alone(link)
    feed_bytewise(transport.protocol, Frame(0, HELLO).to_bytes())
    assert link.up and rec.ups == [HELLO]
    return link, rec, transport


def device_alone() -> tuple[DeviceLink, DeviceRecorder, FakeTransport]:
    """A device link on a transport that only records: the test plays the host by hand."""
    rec = DeviceRecorder()
    link = DeviceLink(rec)
    return link, rec, _alone(link)
