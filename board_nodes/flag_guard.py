"""When a flag stands: only once no earlier press of that side can still arrive.

At the deadline the clock core already knows the flag would fall, but a press from just
before it may still be on its way (a serial frame resent after a bad CRC, an edge the loop
has not read yet). So at the deadline the board asks the face to prove that nothing from
before it is in flight (``ClockFace.quiet``: for a serial clock an acknowledged round trip
after the deadline, see docs/protocol.md §6), at most ``FLAG_PROOF_S``; until then nobody is
told of a flag and the face shows none. A press that arrives meanwhile is applied at its own
instant and the flag never falls. If the proof does not come in time (the link is down), the
flag stands; a press from before the deadline that arrives later is published as a
``warning`` (``press_before_flag``) beside the flag's pending loss, for the arbiter to rule.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from board_nodes.timer_slot import TimerSlot
from clock_service import GameClock, Side
from firmware_bridge.face import ClockFace

__all__ = ["FLAG_PROOF_S", "FlagGuard"]

log = logging.getLogger(__name__)

FLAG_PROOF_S = 2.0  # at most this long after the deadline before a flag stands unproven


class FlagGuard:
    """Schedules one board's flag at the deadline and lets it stand once the face is quiet."""

    def __init__(
        self,
        face: ClockFace,
        *,
        clock: Callable[[], GameClock | None],
        stand: Callable[[], None],
        proof_s: float = FLAG_PROOF_S,
    ) -> None:
        self.face = face
        self._clock = clock
        self._stand = stand  # settle the core and publish what it returns
        self.proof_s = proof_s
        self._timer = TimerSlot()
        self._probe: asyncio.Task[None] | None = None
        self._probe_deadline: int | None = None
        # the flag that stood: (side, deadline ns), for a press from before it arriving late
        self.stood: tuple[Side, int] | None = None
        # a press of that side from before it, arrived after it stood: (side, instant ns),
        # for the arbiter's ruling (flag_rulings.py)
        self.late_press: tuple[Side, int] | None = None
        # the other side pressed before the flag too (its frame as late): a late press is then
        # not the clock's to replay, it is the arbiter's to weigh (flag_rulings.py)
        self.other_pressed = False
        self.unproven = 0  # flags that stood after the proof timed out

    @staticmethod
    def standing(clock: GameClock | None) -> Side | None:
        """The flag that stands: settled in the core (a running clock past its deadline has
        a flag only in waiting)."""
        if clock is None or clock.deadline_ns() is not None:
            return None
        return clock.flag

    def schedule(self) -> None:
        self.cancel_timer()
        clock = self._clock()
        if clock is None:
            return
        deadline = clock.deadline_ns()
        if deadline is not None:
            self._timer.call_exactly_at(deadline / 1e9, self._due)

    def _due(self) -> None:
        clock = self._clock()
        if clock is None:
            return
        deadline = clock.deadline_ns()
        if deadline is None:
            return
        if clock.flag is None:
            self.schedule()  # the loop woke a hair early: wait for the exact instant
            return
        if self._probe is not None and self._probe_deadline == deadline:
            return  # already proving this one
        if self._probe is not None:
            self._probe.cancel()
        self._probe_deadline = deadline
        self._probe = asyncio.get_running_loop().create_task(
            self._prove(deadline), name="flag-proof"
        )

    async def _prove(self, deadline: int) -> None:
        try:
            proved = await self.face.quiet(self.proof_s)
        finally:
            self._probe = None
            self._probe_deadline = None
        clock = self._clock()
        if clock is None or clock.deadline_ns() != deadline or clock.flag is None:
            return  # a press came in time (or the game changed): no flag
        if not proved:
            self.unproven += 1
            log.warning(
                "%s: flag stands after %.1f s without proof that no press is in flight",
                self.face.name, self.proof_s,
            )  # fmt: skip
        self.stood = (clock.flag, deadline)
        self._stand()

    def press_before_flag(self, side: Side, instant_ns: int) -> int | None:
        """If ``side``'s flag stood and this press happened before it: how many ms before."""
        if self.stood is None or instant_ns >= self.stood[1]:
            return None
        if self.stood[0] is not side:
            self.other_pressed = True
            return None
        if self.late_press is None:  # the first press is the one that ends the turn
            self.late_press = (side, instant_ns)
        return (self.stood[1] - instant_ns) // 1_000_000

    def forget(self) -> None:
        """The flag that stood is no news any more (a new game, the flag ruled on)."""
        self.stood = self.late_press = None
        self.other_pressed = False

    def cancel_timer(self) -> None:
        self._timer.cancel()

    def close(self) -> None:
        self.cancel_timer()
        if self._probe is not None:
            self._probe.cancel()
            self._probe = None
