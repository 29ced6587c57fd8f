"""The station's receive queue, bounded by not reading: past ``high`` messages waiting for the
collector, the MQTT socket is no longer read; below ``low`` it is read again.

Why not rely on the broker: MQTT 5's Receive Maximum caps what the broker sends unacked, and
Mosquitto keeps to it on a live connection — but on a resumed session (the station back after
a broken connection, with a backlog queued for it) Mosquitto 2.0 sent the whole queue at once:
12,593 messages in the client's queue in a test, 1 GB of station memory after 5 minutes at
twice its capacity. Not reading is flow control the broker cannot skip: TCP's window fills,
and the backlog waits in the broker's queue, where it belongs.

The collector pauses only past its Receive Maximum (a broker keeping to it never meets the
gate): a paused socket also holds back the PUBACKs of the station's own commands.

Given to aiomqtt as its ``queue_type``; ``attach`` names the connection's socket and its
reader once it is open (wire_contract/aiomqtt_adapter.py: the same work as aiomqtt's own
reader). aiomqtt reads the socket through an asyncio reader callback; pausing removes it with
the loop's public ``remove_reader`` (it is level-triggered: leaving it would spin) and
resuming adds the reader back with ``add_reader``. Without a reader to put back (a client
that is not the project's) the queue cannot pause: it then only counts, and says so once in
the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["ReadGateQueue", "gated_queue"]

log = logging.getLogger(__name__)


class ReadGateQueue(asyncio.Queue[Any]):
    high: int = 1000
    low: int = 500
    # aiomqtt takes a class and makes the queue itself: the class (one per client, from
    # gated_queue) keeps the queue it made, so the collector finds it without the client's
    # private parts.
    made: ReadGateQueue | None = None

    def __init__(self, maxsize: int = 0) -> None:
        super().__init__(maxsize)
        type(self).made = self
        self._fd: int | None = None
        self._reader: Callable[[], None] | None = None
        self.paused = False
        self.pauses = 0  # how often the socket was paused (a gauge of overload)
        self.most = 0  # the largest length seen

    def attach(self, fd: int, reader: Callable[[], None] | None) -> None:
        """The connection's socket and what reads it (new ones on every reconnect)."""
        self._fd, self._reader, self.paused = fd, reader, False

    def put_nowait(self, item: Any) -> None:
        super().put_nowait(item)
        size = self.qsize()
        self.most = max(self.most, size)
        if size >= self.high and not self.paused:
            self._pause()

    def get_nowait(self) -> Any:
        item = super().get_nowait()
        if self.paused and self.qsize() <= self.low:
            self._resume()
        return item

    def _pause(self) -> None:
        if self._fd is None or self._reader is None:
            if self.pauses == 0:
                log.warning("receive queue at %d: cannot pause reading here", self.qsize())
                self.pauses = 1
            return
        try:
            removed = asyncio.get_running_loop().remove_reader(self._fd)
        except (OSError, ValueError):
            return  # the socket is closing: nothing more will be read from it anyway
        if not removed:
            return  # no reader on it (closed): nothing to pause
        self.paused = True
        self.pauses += 1

    def _resume(self) -> None:
        self.paused = False
        if self._reader is None or self._fd is None:
            return
        try:
            asyncio.get_running_loop().add_reader(self._fd, self._reader)
        except (OSError, ValueError):
            pass  # the socket closed while paused: the client reconnects on a new one


def gated_queue(high: int, low: int) -> type[ReadGateQueue]:
    """A ``ReadGateQueue`` class with these bounds (aiomqtt takes a class, not an instance)."""
    if not 0 < low < high:
        raise ValueError(f"read gate: need 0 < low ({low}) < high ({high})")
    return type("BoundedReadGateQueue", (ReadGateQueue,), {"high": high, "low": low})
