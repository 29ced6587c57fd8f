"""Clock probes: an NTP-style round trip over MQTT to every board's node (docs/wire.md).

The station sends ``clock_probe`` (``t0``: its wall ms) on a board's ``cmd`` topic; the node
answers on ``reply`` with its wall ms when the probe arrived (``rx``) and when the answer left
(``tx``); the station notes when the answer arrived (``t3``). Then, whatever the network's
delay::

    delay  = (t3 - t0) - (tx - rx)             the time the two messages spent travelling
    behind = ((t0 - rx) + (t3 - tx)) / 2       how far the node's clock is behind the station's

and the true offset lies within ``behind ± delay / 2`` (the two legs can differ by at most the
whole delay). ``clock_truth.ClockTruth`` judges on that interval, so 200 ms of network delay
is never read as a clock 200 ms behind.

:class:`ClockProbes` is the bookkeeping (which probes are out, what an answer means) and the
loop that sends them: every ``interval_s`` to each board that is not offline or lost, and at
once for a board the one-way estimate suspects. At most one probe per board is out at a time;
one not answered within ``timeout_ms`` is forgotten (counted), so the map holds at most one
entry per board and never grows past ``max_boards``.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

import aiomqtt

from wire_contract.messages import ClockProbeArgs, Command, Reply, Topics, WireError, decode, encode
from wire_contract.wallclock import wall_ms

__all__ = ["REFUSED", "ClockProbes", "RoundTrip"]

log = logging.getLogger(__name__)
TXN_PREFIX = "cp-"
REFUSED = "refused"  # the node does not answer probes (it predates them): judge one way only


@dataclass(frozen=True, slots=True)
class RoundTrip:
    """One answered probe, all in wall ms: sent, received by the node, answered, received."""

    t0: int
    rx: int
    tx: int
    t3: int

    @property
    def delay_ms(self) -> int:
        return max(0, (self.t3 - self.t0) - (self.tx - self.rx))

    @property
    def behind_ms(self) -> int:
        """How far the node's clock is behind the station's (negative: ahead)."""
        return round(((self.t0 - self.rx) + (self.t3 - self.tx)) / 2)


@dataclass
class ClockProbes:
    topics: Topics
    interval_s: float = 5.0
    timeout_ms: int = 10_000
    max_boards: int = 10_000
    sent: int = 0
    answered: int = 0
    timed_out: int = 0
    _out: dict[str, tuple[str, int]] = field(default_factory=dict)  # board -> (txn, t0)
    _wanted: set[str] = field(default_factory=set)
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        if self.interval_s <= 0 or self.timeout_ms <= 0 or self.max_boards < 1:
            raise ValueError("interval_s, timeout_ms and max_boards must be positive")

    def want(self, board: str) -> None:
        """Probe ``board`` now rather than at the next round (the one-way estimate doubts it)."""
        if board not in self._out and len(self._wanted) < self.max_boards:
            self._wanted.add(board)
            self._wake.set()

    def probe(self, board: str, now: int) -> tuple[str, bytes] | None:
        """The (topic, payload) of a new probe to ``board``; None while one is still out."""
        out = self._out.get(board)
        if out is not None:
            if now - out[1] < self.timeout_ms:
                return None
            self.timed_out += 1
        elif len(self._out) >= self.max_boards:
            return None
        txn = f"{TXN_PREFIX}{secrets.token_hex(6)}"
        self._out[board] = (txn, now)
        self.sent += 1
        args = ClockProbeArgs(t0=now).model_dump()
        return self.topics.cmd(board), encode(Command(txn=txn, cmd="clock_probe", args=args))

    def take_reply(self, board: str, payload: bytes, received_ms: int) -> RoundTrip | str | None:
        """What a reply of ``board`` means for the clock: a :class:`RoundTrip`, :data:`REFUSED`
        (an answer without times), or None when it is not the answer to our probe."""
        out = self._out.get(board)
        if out is None or not payload.startswith(b"{") or out[0].encode() not in payload:
            return None
        try:
            reply = decode(Reply, payload)
        except WireError:
            return None  # the command bus counts and logs bad replies
        if reply.txn != out[0]:
            return None
        del self._out[board]
        if not reply.ok or reply.clock is None:
            return REFUSED
        self.answered += 1
        return RoundTrip(out[1], reply.clock.rx, reply.clock.tx, received_ms)

    async def run(
        self,
        publish: Callable[[str, bytes], Awaitable[None]],
        boards: Callable[[], Iterable[str]],
        connected: Callable[[], bool],
    ) -> None:
        """Send probes until cancelled: every ``interval_s`` to each of ``boards()``, and to a
        wanted board at once."""
        loop = asyncio.get_running_loop()
        next_round = loop.time()
        while True:
            timeout = max(0.0, next_round - loop.time())
            try:
                async with asyncio.timeout(timeout):  # not wait_for: see commands.py
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            due = set(self._wanted)
            self._wanted.clear()
            if loop.time() >= next_round:
                due.update(boards())
                next_round = loop.time() + self.interval_s
            if not connected():
                continue
            for board in sorted(due):
                probe = self.probe(board, wall_ms())
                if probe is None:
                    continue
                try:
                    await publish(*probe)
                except (ConnectionError, aiomqtt.MqttError) as exc:  # the next round retries
                    self._out.pop(board, None)
                    log.info("clock probe to board %s not sent: %s", board, exc)
