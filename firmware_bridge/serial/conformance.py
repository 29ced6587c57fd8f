"""The conformance kit: drive a serial clock through docs/protocol.md, PASS/FAIL per section.

``qizhong clock-conformance --url socket://host:port`` (or a serial port). The kit plays the
host (``conformance_wire.ClockUnderTest``) and runs the cases in order on one device:
handshake (§4.1, §6), acknowledgements (§5), the counter never moved back (§4.4), bounds
and refusals (§2), resend and re-handshake after 1 + 8 sends (§5), the flag proof's round
(§6), version refusal (§4.2), and a reconnect starting the counter afresh (§4.4). Cases
that need an event from the device wait for one (a key pressed on the clock, or
``qizhong emulate-clock --auto-press-ms``). A reboot (§4.3) needs a power cycle by hand and
is not run. Every check is one ``Check``: the section, what was checked, PASS or FAIL, why.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from firmware_bridge.serial.codec import PROTOCOL_VERSION
from firmware_bridge.serial.conformance_wire import (
    ClockUnderTest,
    Received,
    is_event,
    is_hello,
    is_pong,
    raw_frame,
)
from firmware_bridge.serial.frames import Frame
from firmware_bridge.serial.messages import Ack, Hello, HelloAck, Nak, NakReason, Show

__all__ = ["Check", "Conformance", "run_conformance"]

ANSWER_S = 0.5  # how long the kit gives a device to answer a frame (generous: §5 asks 100 ms)


@dataclass(frozen=True)
class Check:
    section: str  # "§4.4"
    what: str
    passed: bool
    detail: str = ""  # what was seen; printed with a FAIL

    def line(self) -> str:
        if self.passed:
            return f"PASS {self.section} {self.what}"
        return f"FAIL {self.section} {self.what}" + (f": {self.detail}" if self.detail else "")


def _show(n: int) -> Show:
    return Show(600_000 - n * 1000, 600_000, None, 0, f"c{n}")


class Conformance:
    """One run against one device. ``checks`` fills as it goes; ``say`` prints a prompt."""

    def __init__(
        self, url: str, *, event_timeout: float = 30.0, say: Callable[[str], None] = print
    ) -> None:
        self.url = url
        self.event_timeout = event_timeout
        self.say = say
        self.checks: list[Check] = []
        self.session = 0
        self.tx = 1  # the kit's next reliable seq (host → device)

    def check(self, section: str, what: str, passed: bool, detail: str = "") -> bool:
        self.checks.append(Check(section, what, passed, detail))
        return passed

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    async def run(self) -> list[Check]:
        clock = ClockUnderTest(self.url)
        try:
            await clock.open()
        except (OSError, ValueError) as exc:
            self.check("§1", "the line opens", False, f"{self.url}: {exc}")
            return self.checks
        try:
            cases: list[Callable[[ClockUnderTest], Awaitable[bool]]] = [
                self.handshake, self.acknowledgements, self.never_back, self.bounds,
                self.resend_and_rehandshake, self.flag_proof, self.version_refusal,
            ]  # fmt: skip
            for case in cases:
                if not await case(clock):
                    self.say(f"  stopped after {case.__name__}: the cases after it build on it")
                    break
            else:
                await clock.close()
                clock = ClockUnderTest(self.url)
                await clock.open()
                await self.reconnect(clock)
        finally:
            await clock.close()
        return self.checks

    # -- helpers ----------------------------------------------------------------------------
    def hello_ack(self, clock: ClockUnderTest, tx_seq: int | None = None) -> None:
        tx = self.tx if tx_seq is None else tx_seq
        clock.send(HelloAck(PROTOCOL_VERSION, self.session, tx))

    async def deliver(self, clock: ClockUnderTest, seq: int) -> bool:
        """Send SHOW ``seq``; True when its ACK came."""
        mark = clock.mark
        clock.send(_show(seq), seq)
        acked = lambda f: isinstance(f.message, Ack) and f.message.seq == seq  # noqa: E731
        return await clock.expect(acked, after=mark, timeout=ANSWER_S) is not None

    async def an_event(self, clock: ClockUnderTest) -> tuple[int, Frame] | None:
        """Wait for a new reliable event from the device (a key pressed): a seq not seen yet,
        not a late copy of one the kit already acknowledged."""
        mark = clock.mark
        seen = {f.seq for _, f in clock.received if is_event(f)}
        self.say(f"  press a key on the clock (waiting up to {self.event_timeout:.0f} s)")
        new = lambda f: is_event(f) and f.seq not in seen  # noqa: E731
        return await clock.expect(new, after=mark, timeout=self.event_timeout)

    # -- the cases --------------------------------------------------------------------------
    async def first_hello(self, clock: ClockUnderTest) -> Received | None:
        """The HELLO of a new connection: on connect, or (a serial port or pty, where the
        device may have spoken before the line was opened) in answer to a PING with bit 0,
        as a host sends while it has no HELLO (§6)."""
        got = await clock.expect(is_hello, after=0, timeout=0.5)
        if got is None:
            clock.ping(want_hello=True)
            got = await clock.expect(is_hello, after=0, timeout=1.5)
        return got

    async def handshake(self, clock: ClockUnderTest) -> bool:
        got = await self.first_hello(clock)
        if not self.check("§4.1", "HELLO on connect (or on the first PING)", got is not None,
                          "none within 2 s"):  # fmt: skip
            return False
        assert got is not None
        hello = got[1].message
        assert isinstance(hello, Hello)
        ok = hello.version == PROTOCOL_VERSION and hello.session != 0
        self.check("§3", "HELLO names version 1 and a session 1..65535", ok, f"{hello!r}")
        self.session = hello.session
        self.hello_ack(clock)
        clock.keepalive = True
        mark = clock.mark
        token = clock.ping()
        pong = await clock.expect(is_pong(token), after=mark, timeout=ANSWER_S)
        self.check("§6", "PONG echoes the PING's token", pong is not None, "no PONG")
        mark = clock.mark
        clock.ping(want_hello=True)
        again = await clock.expect(is_hello, after=mark, timeout=ANSWER_S)
        self.check("§4.1", "HELLO in answer to PING flag bit 0", again is not None, "none")
        self.hello_ack(clock)
        return pong is not None

    async def acknowledgements(self, clock: ClockUnderTest) -> bool:
        for _ in range(20):
            if not await self.deliver(clock, self.tx):
                return self.check("§5", "every reliable frame acknowledged", False,
                                  f"no ACK for SHOW seq {self.tx}")  # fmt: skip
            self.tx += 1
        return self.check("§5", "every reliable frame acknowledged", True, "SHOW seq 1..20")

    async def never_back(self, clock: ClockUnderTest) -> bool:
        # A later HELLO_ACK naming a seq 20 behind: the counter must stay where it is, so the
        # next SHOW is delivered at once (a rewound counter would find it out of window).
        mark = clock.mark
        clock.ping(want_hello=True)
        await clock.expect(is_hello, after=mark, timeout=ANSWER_S)
        self.hello_ack(clock, tx_seq=1)
        await asyncio.sleep(0.05)
        ok = await self.deliver(clock, self.tx)
        self.tx += 1
        return self.check(
            "§4.4", "a later HELLO_ACK never moves the receive counter back", ok,
            "" if ok else f"SHOW seq {self.tx - 1} not acknowledged after HELLO_ACK(tx_seq 1)",
        )  # fmt: skip

    async def bounds(self, clock: ClockUnderTest) -> bool:
        def nak_of(seq: int, reason: NakReason) -> Callable[[Frame], bool]:
            return lambda f: isinstance(f.message, Nak) and (f.message.seq, f.message.reason) == (
                seq, reason)  # fmt: skip

        def any_answer(seq: int) -> Callable[[Frame], bool]:
            return lambda f: isinstance(f.message, Ack | Nak) and f.message.seq == seq

        show = Frame(self.tx, _show(self.tx)).body()
        mark = clock.mark
        clock.write(raw_frame(show, good_crc=False))
        silent = await clock.expect(any_answer(self.tx), after=mark, timeout=0.3) is None
        self.check("§2", "a frame with a bad CRC gets no reply", silent)
        cases = [
            (bytes([0x7F, 201, 1, 2]), NakReason.UNKNOWN_TYPE, "an unknown type"),
            (bytes([0x20, 202]) + show[2:12] + bytes([9]) + b"ABCDEFGHI", NakReason.BAD_PAYLOAD,
             "a SHOW with text_len 9"),
            (bytes([0x10, 203, 0, 0, 0, 0, 1]), NakReason.UNEXPECTED, "a PRESS sent to it"),
        ]  # fmt: skip
        for body, reason, what in cases:
            mark = clock.mark
            clock.write(raw_frame(body))
            nak = await clock.expect(nak_of(body[1], reason), after=mark, timeout=ANSWER_S)
            self.check("§2", f"{what} gets NAK(seq, {int(reason)})", nak is not None, "no NAK")
        mark = clock.mark
        clock.write(bytes(range(1, 101)) + b"\x00")  # a run longer than any frame
        token = clock.ping()
        pong = await clock.expect(is_pong(token), after=mark, timeout=ANSWER_S)
        self.check("§2", "after an oversized run the next frame is read", pong is not None)
        mark = clock.mark
        clock.write(raw_frame(bytes([0x30, 0, 0, 0, 0])))  # a PING 2 bytes short, seq 0
        await asyncio.sleep(0.3)
        replies = clock.since(mark, lambda f: isinstance(f.message, Nak))
        self.check("§2", "a refused frame without a seq gets no reply", not replies)
        return True

    async def resend_and_rehandshake(self, clock: ClockUnderTest) -> bool:
        clock.auto_ack = False
        try:
            got = await self.an_event(clock)
            if not self.check("§5", "an event arrives", got is not None, "no key pressed"):
                return False
            assert got is not None
            seq = got[1].seq

            def same(f: Frame) -> bool:
                return is_event(f) and f.seq == seq

            mark = clock.received.index(got)
            hello = await clock.expect(is_hello, after=mark, timeout=2.0)
            end = clock.received.index(hello) if hello else clock.mark
            copies = [r for r in clock.received[mark:end] if same(r[1])]
            self.check("§5", "an unacknowledged event is sent 1 + 8 = 9 times",
                       len(copies) == 9, f"seq {seq} sent {len(copies)} times")  # fmt: skip
            gaps = [(b[0] - a[0]) // 1_000_000 for a, b in itertools.pairwise(copies)]
            self.check("§5", "resends ~100 ms apart", all(50 <= g <= 400 for g in gaps),
                       f"gaps {gaps} ms")  # fmt: skip
            if not self.check("§5", "a new HELLO after the 9th send", hello is not None,
                              "none within 2 s of the first send: no re-handshake"):  # fmt: skip
                return False
            mark = clock.mark
            self.hello_ack(clock)
            resent = await clock.expect(same, after=mark, timeout=0.2)
            self.check("§4.4", "the HELLO_ACK makes it resend the held event at once",
                       resent is not None, f"seq {seq} not resent within 200 ms")  # fmt: skip
        finally:
            clock.auto_ack = True
        self._ack_all(clock)
        return True

    async def flag_proof(self, clock: ClockUnderTest) -> bool:
        clock.auto_ack = False
        try:
            got = await self.an_event(clock)
            if got is None:
                return self.check("§6", "an event arrives", False, "no key pressed")
            seq = got[1].seq
            mark = clock.mark
            clock.ping(want_hello=True)
            hello = await clock.expect(is_hello, after=mark, timeout=ANSWER_S)
            mark = clock.mark
            self.hello_ack(clock)
            token = clock.ping()
            pong = await clock.expect(is_pong(token), after=mark, timeout=ANSWER_S)
            before = clock.received[mark : clock.received.index(pong)] if pong else []
            resent = any(is_event(f) and f.seq == seq for _, f in before)
            self.check("§6", "the proof's round: HELLO on bit 0, then the held event before "
                       "the next PONG", hello is not None and resent,
                       f"hello={hello is not None} event before PONG={resent}")  # fmt: skip
        finally:
            clock.auto_ack = True
        self._ack_all(clock)
        return True

    async def version_refusal(self, clock: ClockUnderTest) -> bool:
        await asyncio.sleep(0.2)
        clock.send(Nak(0, NakReason.VERSION))
        await asyncio.sleep(0.05)  # a frame already on the line may still come
        mark = clock.mark
        self.say("  press keys on the clock now: a refused clock must not send them")
        await asyncio.sleep(1.5)
        events = clock.since(mark, is_event)
        hellos = clock.since(mark, is_hello)
        self.check("§4.2", "a refused device sends no events", not events,
                   f"{len(events)} event frames after NAK(0, 3)")  # fmt: skip
        self.check("§4.2", "a refused device answers every PING with PONG and HELLO",
                   len(hellos) >= 3, f"{len(hellos)} HELLOs to ~6 PINGs")  # fmt: skip
        mark = clock.mark
        self.hello_ack(clock)
        await asyncio.sleep(0.3)
        self._ack_all(clock)
        return not events

    async def reconnect(self, clock: ClockUnderTest) -> bool:
        got = await self.first_hello(clock)
        if not self.check("§4.1", "HELLO on reconnect", got is not None, "none within 2 s"):
            return False
        assert got is not None
        hello = got[1].message
        assert isinstance(hello, Hello)
        self.check("§3", "the session survives a reconnect", hello.session == self.session,
                   f"{self.session:#06x} then {hello.session:#06x}")  # fmt: skip
        self.session = hello.session
        self.tx = 100
        self.hello_ack(clock)
        clock.keepalive = True
        await asyncio.sleep(0.05)
        ok = await self.deliver(clock, self.tx)
        return self.check("§4.4", "the first HELLO_ACK after connecting starts the counter",
                          ok, "" if ok else "SHOW seq 100 not acknowledged")  # fmt: skip

    def _ack_all(self, clock: ClockUnderTest) -> None:
        for seq in sorted({f.seq for _, f in clock.received if is_event(f)}):
            clock.send(Ack(seq))


async def run_conformance(
    url: str, *, event_timeout: float = 30.0, say: Callable[[str], None] = print
) -> list[Check]:
    return await Conformance(url, event_timeout=event_timeout, say=say).run()
