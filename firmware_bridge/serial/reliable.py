"""Reliable delivery for the serial link: a selective-repeat sender and an in-order receiver.

Sequence numbers run 1..255 and wrap to 1 (0 marks unreliable frames). The sender keeps at
most ``window`` frames unacknowledged and retransmits each on its own timer, up to
``max_retries`` times. The receiver delivers every seq exactly once and in order: a frame
ahead of a gap waits (at most ``gap_timeout``) for the missing one; one already delivered is
acknowledged again but not delivered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from firmware_bridge.serial.frames import Frame, Message
from firmware_bridge.serial.stream import LinkStats

__all__ = ["Receiver", "ReliableSender", "next_seq", "seq_distance"]

log = logging.getLogger(__name__)

SEQ_SPAN = 255
DUPLICATE_HORIZON = 128  # seqs this far behind the expected one count as already delivered


def next_seq(seq: int) -> int:
    return seq % SEQ_SPAN + 1


def seq_distance(seq: int, base: int) -> int:
    """How far ``seq`` is ahead of ``base`` (0..254), on the wrapping 1..255 circle."""
    return (seq - base) % SEQ_SPAN


@dataclass
class _Pending:
    frame: Frame
    tries: int = 0
    timer: asyncio.TimerHandle | None = None


class ReliableSender:
    """Numbers reliable messages, keeps them until acknowledged, retransmits them.

    ``keep_on_give_up``: a device keeps an unacknowledged press until the next handshake
    (so none is lost); the host drops a stale display update instead.
    """

    def __init__(
        self,
        transmit: Callable[[Frame], None],
        stats: LinkStats,
        *,
        window: int = 8,
        rto: float = 0.1,
        max_retries: int = 8,
        keep_on_give_up: bool = False,
        on_give_up: Callable[[], None] | None = None,
    ) -> None:
        if not 1 <= window <= 32:
            raise ValueError(f"window must be 1..32, not {window}")
        self._transmit = transmit
        self.stats = stats
        self.window = window
        self.rto = rto
        self.max_retries = max_retries
        self.keep_on_give_up = keep_on_give_up
        # The device re-handshakes when it gives up on an event: the HELLO_ACK that answers
        # makes it resend everything it holds (docs/protocol.md §5), so none waits forever.
        self.on_give_up = on_give_up
        self.next_seq = 1
        self.in_flight: dict[int, _Pending] = {}  # insertion order = seq order
        self.queue: deque[Message] = deque()
        self.paused = True

    def submit(self, message: Message) -> None:
        self.queue.append(message)
        self._pump()

    def oldest(self) -> int:
        """The oldest unacknowledged seq, or the next seq when all are acknowledged."""
        return next(iter(self.in_flight), self.next_seq)

    @property
    def idle(self) -> bool:
        return not self.in_flight and not self.queue

    def _pump(self) -> None:
        while not self.paused and self.queue and len(self.in_flight) < self.window:
            seq = self.next_seq
            self.next_seq = next_seq(seq)
            pending = _Pending(Frame(seq, self.queue.popleft()))
            self.in_flight[seq] = pending
            self._send(pending)

    def _send(self, pending: _Pending) -> None:
        pending.tries += 1
        loop = asyncio.get_running_loop()
        pending.timer = loop.call_later(self.rto, self._timeout, pending.frame.seq)
        self._transmit(pending.frame)

    def _timeout(self, seq: int) -> None:
        pending = self.in_flight.get(seq)
        if pending is None or self.paused:
            return
        pending.timer = None
        if pending.tries > self.max_retries:
            self.stats.tx_failed += 1
            if self.keep_on_give_up:
                if self.on_give_up is not None:
                    self.on_give_up()
                return  # resent by resume() after the next handshake
            log.debug("giving up on %r after %d tries", pending.frame, pending.tries)
            del self.in_flight[seq]
            self._pump()
            return
        self.stats.retransmits += 1
        self._send(pending)

    def ack(self, seq: int) -> None:
        pending = self.in_flight.pop(seq, None)
        if pending is None:
            self.stats.stale_acks += 1
            return
        if pending.timer is not None:
            pending.timer.cancel()
        self._pump()

    def nak(self, seq: int, reason: str) -> None:
        """The peer refused ``seq``: resending cannot help, so drop it."""
        self.stats.naks_rx += 1
        pending = self.in_flight.pop(seq, None)
        if pending is not None:
            log.warning("peer refused %r: %s", pending.frame, reason)
            if pending.timer is not None:
                pending.timer.cancel()
            self._pump()

    def pause(self) -> None:
        self.paused = True
        for pending in self.in_flight.values():
            if pending.timer is not None:
                pending.timer.cancel()
                pending.timer = None

    def resume(self) -> None:
        """After a handshake: resend everything unacknowledged, oldest first, then the queue."""
        self.paused = False
        for pending in list(self.in_flight.values()):
            if pending.timer is not None:
                pending.timer.cancel()
            pending.tries = 0
            self._send(pending)
        self._pump()

    def drop_all(self) -> int:
        self.pause()
        dropped = len(self.in_flight) + len(self.queue)
        self.in_flight.clear()
        self.queue.clear()
        return dropped


class Receiver:
    """Delivers each reliable seq once, in order. ``receive`` says whether to acknowledge."""

    def __init__(
        self,
        deliver: Callable[[Message, int], None],
        stats: LinkStats,
        *,
        window: int = 16,
        gap_timeout: float = 3.0,
        late_delivery: bool = True,
    ) -> None:
        self._deliver = deliver
        self.stats = stats
        self.window = window
        self.gap_timeout = gap_timeout
        # The host delivers a frame a gap passed over when it comes after all (a press is
        # never lost); the device does not: every host message is superseded by a later one
        # (docs/protocol.md §5), and a late SHOW would put an old display back.
        self.late_delivery = late_delivery
        self.expected: int | None = None  # unknown until the handshake says where to start
        self._held: dict[int, tuple[Message, int]] = {}
        # Seqs a gap timeout passed over without delivering them: if one comes after all it
        # is delivered then (late), not taken for a duplicate — the receive counter moved
        # past it, but the sender's numbering says it was never seen. At most the duplicate
        # horizon of them, oldest forgotten first.
        self._skipped: dict[int, None] = {}
        self._gap_timer: asyncio.TimerHandle | None = None

    @property
    def holding(self) -> bool:
        """Frames wait behind a gap: the missing one is still on its way."""
        return bool(self._held)

    def reset(self, expected: int) -> None:
        self.expected = expected
        self._held.clear()
        self._skipped.clear()
        self._cancel_gap_timer()

    def forget(self) -> None:
        self.expected = None
        self._held.clear()
        self._skipped.clear()
        self._cancel_gap_timer()

    def advance_to(self, seq: int) -> None:
        """Move the counter forward to ``seq`` (never back): the sender says it moved on.

        docs/protocol.md §4.4: ``seq`` is after the counter when ``seq_distance`` is 1..126.
        The seqs before it that never came are given up (not delivered, even if they come);
        the frames held behind them were acknowledged, so the sender will not send them
        again: they are delivered now, in seq order, and the counter continues from ``seq``
        (or from past the held frames, when they reach it)."""
        if self.expected is None:
            self.reset(seq)
            return
        base = self.expected
        distance = seq_distance(seq, base)
        if not 0 < distance < SEQ_SPAN - DUPLICATE_HORIZON:
            return
        before = sorted((s for s in self._held if seq_distance(s, base) < distance),
                        key=lambda s: seq_distance(s, base))  # fmt: skip
        for held in before:
            message, recv_ns = self._held.pop(held)
            self._deliver(message, recv_ns)
        self.expected = seq
        self._drain()

    def extend_gap(self) -> None:
        """The sender still holds the missing frame (it said so): wait for it afresh."""
        if self._gap_timer is not None:
            self._gap_timer.cancel()
            self._gap_timer = asyncio.get_running_loop().call_later(
                self.gap_timeout, self._skip_gap
            )

    def receive(self, seq: int, message: Message, recv_ns: int | None = None) -> bool:
        if self.expected is None:
            self.stats.not_ready += 1
            return False
        recv_ns = time.monotonic_ns() if recv_ns is None else recv_ns
        distance = seq_distance(seq, self.expected)
        if distance == 0:
            self.expected = next_seq(seq)
            self._skipped.pop(seq, None)
            self._deliver(message, recv_ns)
            self._drain()
            return True
        if distance < self.window:
            if seq in self._held:
                self.stats.duplicates += 1
            else:
                self.stats.out_of_order += 1
                self._skipped.pop(seq, None)
                self._held[seq] = (message, recv_ns)
                if self._gap_timer is None:
                    loop = asyncio.get_running_loop()
                    self._gap_timer = loop.call_later(self.gap_timeout, self._skip_gap)
            return True
        if seq in self._skipped:
            del self._skipped[seq]
            if not self.late_delivery:
                self.stats.late_dropped += 1  # acknowledged, so the sender stops
                return True
            self.stats.late_delivered += 1
            self._deliver(message, recv_ns)
            return True
        if distance >= SEQ_SPAN - DUPLICATE_HORIZON:
            self.stats.duplicates += 1  # delivered before; its ack was lost, so ack again
            return True
        self.stats.out_of_window += 1
        return False

    def _drain(self) -> None:
        while self.expected in self._held:
            message, recv_ns = self._held.pop(self.expected)
            self.expected = next_seq(self.expected)
            self._deliver(message, recv_ns)
        if not self._held:
            self._cancel_gap_timer()

    def _skip_gap(self) -> None:
        """The sender gave up on a frame: deliver what waits behind it rather than hold forever."""
        self._gap_timer = None
        if not self._held or self.expected is None:
            return
        base = self.expected
        first = min(self._held, key=lambda s: seq_distance(s, base))
        self.stats.gaps_skipped += 1
        log.warning("gave up waiting for seq %d..%d; delivering from %d", base, first - 1, first)
        seq = base
        while seq != first:
            self._skipped[seq] = None
            seq = next_seq(seq)
        while len(self._skipped) > DUPLICATE_HORIZON:
            del self._skipped[next(iter(self._skipped))]
        self.expected = first
        self._drain()
        if self._held:
            self._gap_timer = asyncio.get_running_loop().call_later(
                self.gap_timeout, self._skip_gap
            )

    def _cancel_gap_timer(self) -> None:
        if self._gap_timer is not None:
            self._gap_timer.cancel()
            self._gap_timer = None
