"""One side's time budget on a GameClock: what is left of it, and how a turn spends it.

The budget is consumed in a fixed order — the simple delay of the current turn, then the main
time, then the byo-yomi periods — so ``to_flag()`` is the time until the side would flag if it
ran on uninterrupted. Integer nanoseconds; ``clock.py`` speaks ms to its callers.
"""

from __future__ import annotations

import dataclasses

from clock_service.timecontrol import Bonus, TimeControl

__all__ = ["NS_PER_MS", "SideBudget", "ceil_ms", "fresh_budget"]

NS_PER_MS = 1_000_000


@dataclasses.dataclass(slots=True)
class SideBudget:
    tc: TimeControl
    main_ns: int
    delay_ns: int = 0  # simple delay left in the current turn
    periods: int = 0  # byo-yomi periods left
    period_used_ns: int = 0  # of the current byo-yomi period, in this turn
    moves: int = 0
    used_ns: int = 0  # all time used on this clock, up to the last settle
    turn_ns: int = 0  # time used in the current turn, up to the last settle

    @property
    def period_ns(self) -> int:
        byo = self.tc.byoyomi
        return byo.period_ms * NS_PER_MS if byo is not None else 0

    def to_flag(self) -> int:
        byo = self.periods * self.period_ns - self.period_used_ns if self.periods else 0
        return self.delay_ns + self.main_ns + byo

    def consume(self, elapsed: int) -> None:
        """Spend ``elapsed`` ns (at most ``to_flag()``): delay first, then main, then byo-yomi."""
        self.used_ns += elapsed
        self.turn_ns += elapsed
        part = min(elapsed, self.delay_ns)
        self.delay_ns -= part
        elapsed -= part
        part = min(elapsed, self.main_ns)
        self.main_ns -= part
        elapsed -= part
        if elapsed and self.periods:
            lost, self.period_used_ns = divmod(self.period_used_ns + elapsed, self.period_ns)
            self.periods = max(0, self.periods - lost)
            if not self.periods:
                self.period_used_ns = 0

    def give_back(self, ns: int) -> None:
        """Undo the last ``ns`` of this turn's ``consume``: main time first, then the turn's
        simple delay. Byo-yomi periods are not tracked per turn, so a budget with byo-yomi
        cannot be given back (ValueError)."""
        if self.periods or self.tc.byoyomi is not None:
            raise ValueError("time spent in byo-yomi cannot be given back")
        if not 0 < ns <= self.turn_ns:
            raise ValueError(f"{ns} ns is not within this turn's {self.turn_ns} ns")
        _, period = self.tc.period_for(self.moves)
        delay = period.bonus_ms * NS_PER_MS if period.bonus is Bonus.SIMPLE_DELAY else 0
        main = min(ns, max(0, self.turn_ns - delay))  # spent after the delay ran out
        self.main_ns += main
        self.delay_ns += ns - main
        self.used_ns -= ns
        self.turn_ns -= ns

    def begin_turn(self) -> None:
        _, period = self.tc.period_for(self.moves)
        self.delay_ns = period.bonus_ms * NS_PER_MS if period.bonus is Bonus.SIMPLE_DELAY else 0
        self.turn_ns = 0

    def end_turn(self) -> None:
        """The side completed a move: bonus of the move's period, then any new period's time."""
        _, period = self.tc.period_for(self.moves)
        bonus = period.bonus_ms * NS_PER_MS
        if period.bonus is Bonus.FISCHER:
            self.main_ns += bonus
        elif period.bonus is Bonus.BRONSTEIN:
            self.main_ns += min(self.turn_ns, bonus)
        self.delay_ns = 0  # an unused simple delay is not banked
        self.period_used_ns = 0  # a move inside a byo-yomi period keeps that period
        self.moves += 1
        self.main_ns += self.tc.time_added_after(self.moves) * NS_PER_MS
        self.turn_ns = 0

    def copy(self) -> SideBudget:
        return dataclasses.replace(self)


def ceil_ms(ns: int) -> int:
    # Round remaining time up: a display never shows 0 before the flag actually falls.
    return -(-ns // NS_PER_MS)


def fresh_budget(tc: TimeControl) -> SideBudget:
    return SideBudget(
        tc=tc,
        main_ns=tc.base_ms * NS_PER_MS,
        periods=tc.byoyomi.periods if tc.byoyomi is not None else 0,
    )
