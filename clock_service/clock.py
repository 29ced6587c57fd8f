"""GameClock: the pure two-sided clock.

Time is read from an injected monotonic ``now() -> int`` (nanoseconds) and never stored as a
count of ticks: a running side's remaining time is ``deadline - now``, so the flag is true at
the exact instant the time reaches zero without anyone polling. Arithmetic is integer ns;
the API speaks ms. Each side's time is a *budget* consumed in a fixed order — the simple
delay of the current turn, then the main time, then the byo-yomi periods — so
``remaining_ms`` is always the time until that side would flag if it ran on uninterrupted.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from typing import Any

from clock_service.clock_budget import NS_PER_MS, SideBudget, ceil_ms, fresh_budget
from clock_service.clock_snapshot import check_snapshot
from clock_service.errors import ClockServiceError
from clock_service.events import (
    Adjusted,
    ClockEvent,
    Flagged,
    Moved,
    Paused,
    Resumed,
    Started,
)
from clock_service.handicap import Handicap
from clock_service.side import Side
from clock_service.timecontrol import TimeControl

__all__ = ["ClockError", "GameClock", "Phase", "Reading"]

_SNAPSHOT_VERSION = 1
_SIDE_KEYS = ("main_ns", "delay_ns", "periods", "period_used_ns", "moves", "used_ns", "turn_ns")

Events = tuple[ClockEvent, ...]


class ClockError(ClockServiceError, ValueError):
    """A clock operation that cannot be applied (the reason says why); nothing changed."""


class Phase(enum.Enum):
    """Where the clock is; the value is the wire spelling of the state snapshot."""

    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"


@dataclasses.dataclass(frozen=True, slots=True)
class Reading:
    """What a clock face shows for one side: main time, delay left, byo-yomi state."""

    main_ms: int
    delay_ms: int
    periods: int
    period_ms: int

    @property
    def in_byoyomi(self) -> bool:
        return self.main_ms == 0 and self.periods > 0


class GameClock:
    """The two-sided clock of one game; every state-changing call returns its events."""

    __slots__ = (
        "_deadline",
        "_flag",
        "_flagged_ns",
        "_handicap",
        "_now",
        "_on_move",
        "_phase",
        "_sides",
        "_since",
        "_started",
    )

    def __init__(
        self,
        tc: TimeControl,
        *,
        now: Callable[[], int],
        black: TimeControl | None = None,
        handicap: Handicap | None = None,
    ) -> None:
        if not isinstance(tc, TimeControl):
            raise TypeError(f"tc must be a TimeControl, not {tc!r}")
        if black is not None and not isinstance(black, TimeControl):
            raise TypeError(f"black must be a TimeControl or None, not {black!r}")
        if not callable(now):
            raise TypeError(f"now must be a callable returning monotonic ns, not {now!r}")
        if handicap is not None and not isinstance(handicap, Handicap):
            raise TypeError(f"handicap must be a Handicap or None, not {handicap!r}")
        self._handicap = handicap  # 让二先: the receiver's first moves in a row
        self._now = now
        self._sides = {Side.RED: fresh_budget(tc), Side.BLACK: fresh_budget(black or tc)}
        self._phase = Phase.IDLE
        self._on_move = Side.RED
        self._flag: Side | None = None
        self._flagged_ns: int | None = None
        self._deadline = 0  # meaningful only while RUNNING
        # when the running side's budget last started running down unbroken (a run, a turn, an
        # adjustment): a late press before it cannot be replayed (take_late_press)
        self._since: int | None = None
        self._started = False

    # -- constructors for the arbiter and the journal -------------------------------------

    @classmethod
    def carry_over(
        cls,
        tc: TimeControl,
        *,
        now: Callable[[], int],
        red_ms: int,
        black_ms: int,
        moves_red: int,
        moves_black: int,
        side_on_move: Side,
        black: TimeControl | None = None,
        red_periods: int | None = None,
        black_periods: int | None = None,
        handicap: Handicap | None = None,
    ) -> GameClock:
        """A game carried over to a spare clock: paused, ``start()`` or ``resume()`` runs it.

        ``red_ms``/``black_ms`` are main times; byo-yomi periods default to the full count.
        """
        clock = cls(tc, now=now, black=black, handicap=handicap)
        if not isinstance(side_on_move, Side):
            raise ClockError(f"side_on_move must be a Side, not {side_on_move!r}")
        given = ((Side.RED, red_ms, moves_red, red_periods),
                 (Side.BLACK, black_ms, moves_black, black_periods))  # fmt: skip
        for side, ms, moves, periods in given:
            state = clock._sides[side]
            state.main_ns = _int(f"{side}_ms", ms, minimum=0) * NS_PER_MS
            state.moves = _int(f"moves_{side}", moves, minimum=0)
            if periods is not None:
                limit = state.tc.byoyomi.periods if state.tc.byoyomi else 0
                state.periods = _int(f"{side}_periods", periods, minimum=0, maximum=limit)
            if state.to_flag() <= 0:
                raise ClockError(f"{side} would have no time left ({side}_ms={ms})")
        clock._on_move = side_on_move
        clock._sides[side_on_move].begin_turn()
        clock._phase = Phase.PAUSED
        return clock

    # -- state-changing calls -------------------------------------------------------------

    def start(self) -> Events:
        """Start red's time (or the side on move of a carried-over game); else nothing."""
        now = self._now()
        if self._phase is Phase.IDLE:
            self._sides[Side.RED].begin_turn()
        elif not (self._phase is Phase.PAUSED and not self._started):
            return self._settle(now)
        self._started = True
        self._run(now)
        return (Started(self._on_move),)

    def press(self, side: Side) -> Events:
        """``side`` completed a move; by the side not on move, or when not running, nothing."""
        now = self._now()
        events = self._settle(now)
        if self._phase is not Phase.RUNNING or side is not self._on_move:
            return events
        return (*events, self._move(side, now))

    def _move(self, side: Side, now: int) -> Moved:
        state = self._sides[side]
        used_before = state.used_ns - state.turn_ns
        state.end_turn()
        used_ms = state.used_ns // NS_PER_MS - used_before // NS_PER_MS
        if self._handicap is not None and self._handicap.owed(side, state.moves):
            state.begin_turn()  # a given move: the receiver moves again at once
            self._deadline, self._since = now + state.to_flag(), now
            return Moved(side, used_ms, state.moves)
        other = self._sides[side.other]
        other.begin_turn()
        self._on_move = side.other
        self._deadline, self._since = now + other.to_flag(), now
        return Moved(side, used_ms, state.moves)

    def pause(self) -> Events:
        now = self._now()
        events = self._settle(now)
        if self._phase is not Phase.RUNNING:
            return events
        self._phase = Phase.PAUSED
        return (Paused(self._on_move),)

    def resume(self) -> Events:
        """Continue the side that was on move (a carried-over clock also starts this way)."""
        now = self._now()
        if self._phase is not Phase.PAUSED:
            return self._settle(now)
        self._started = True
        self._run(now)
        return (Resumed(self._on_move),)

    def adjust(self, side: Side, delta_ms: int) -> Events:
        """The arbiter adds (positive) or removes (negative) main time.

        Raises ClockError, changing nothing, when the removal would leave ``side`` no time or
        a negative main time. After the flag nothing changes and no event is returned.
        """
        if not isinstance(side, Side):
            raise ClockError(f"side must be a Side, not {side!r}")
        delta = _int("delta_ms", delta_ms) * NS_PER_MS
        now = self._now()
        events = self._settle(now)
        if self._phase is Phase.FINISHED or delta == 0:
            return events
        state = self._sides[side]
        if state.main_ns + delta < 0 or state.to_flag() + delta <= 0:
            raise ClockError(
                f"adjusting {side} by {delta_ms} ms would leave it no time "
                f"(main time {ceil_ms(state.main_ns)} ms)"
            )
        state.main_ns += delta
        if self._phase is Phase.RUNNING and side is self._on_move:
            self._deadline, self._since = now + state.to_flag(), now
        return (*events, Adjusted(side, delta_ms))

    def reopen(self, delta_ms: int) -> Events:
        """The arbiter dismissed the flag and the game goes on: the flagged side gets
        ``delta_ms`` (> 0) of main time and the clock waits, paused, for ``resume()``.

        The event is the ``Adjusted`` of the time given. Raises ClockError, changing nothing,
        when no flag has fallen or ``delta_ms`` is not positive.
        """
        delta = _int("delta_ms", delta_ms, minimum=1) * NS_PER_MS
        events = self._settle(self._now())
        side = self._flag
        if self._phase is not Phase.FINISHED or side is None:
            raise ClockError("no flag has fallen: adjust the time instead")
        self._sides[side].main_ns += delta
        self._flag = self._flagged_ns = None
        self._phase = Phase.PAUSED
        self._started = True
        return (*events, Adjusted(side, delta_ms))

    def take_late_press(self, at_ns: int) -> Events:
        """The flagged side's press made at ``at_ns``, before its flag, reached the clock only
        after the flag stood, and the arbiter dismissed the flag's loss: the press counts at
        its own instant. The side keeps the time it had then, with the move's bonus; the
        other side's time runs from then to the flag's instant, when the face stopped; the
        clock waits, paused, for ``resume()``.

        Returns the flag's ``Flagged`` if not yet settled, then the ``Moved`` (its
        ``used_ms`` as of the press) and ``Paused`` — or the other side's ``Flagged`` when
        its time ran out between the press and the flag. Raises ClockError, changing nothing, when
        no flag has fallen, the press was not before it, or the side's time control has
        byo-yomi (its periods are not kept per turn: adjust the time instead).
        """
        at = _int("at_ns", at_ns)
        events = self._settle(self._now())
        side, flagged_ns = self._flag, self._flagged_ns
        if self._phase is not Phase.FINISHED or side is None or flagged_ns is None:
            raise ClockError("no flag has fallen: the press counted as it came")
        if self._since is None or at < self._since:
            # paused, adjusted or restored since: its budget did not run down from the press to
            # the flag unbroken, so the time between is not the press's to give back
            raise ClockError("the clock stopped or was adjusted after the press: adjust instead")
        state = self._sides[side]
        try:
            given = state.copy()
            given.give_back(flagged_ns - at)
        except ValueError as exc:
            raise ClockError(f"the press cannot be taken at its instant: {exc}") from None
        self._sides[side] = given
        self._flag = self._flagged_ns = None
        self._on_move, self._phase, self._started = side, Phase.RUNNING, True
        self._deadline = flagged_ns  # the side had flagged_ns - at left at ``at``
        moved = self._move(side, at)
        late = self._settle(flagged_ns)  # the other side's time, from the press to the flag
        if late:  # it ran out in between: its own flag, at its own instant
            return (*events, moved, *late)
        self._phase = Phase.PAUSED
        return (*events, moved, Paused(self._on_move))

    def settle(self) -> Events:
        """Materialise a flag that has fallen: ``(Flagged,)`` once, at ``deadline_ns()``."""
        return self._settle(self._now())

    # -- derived, read-only ---------------------------------------------------------------

    def remaining_ms(self, side: Side) -> int:
        """Time until ``side`` flags if it ran on uninterrupted; 0 exactly when flagged."""
        if self._phase is Phase.RUNNING and side is self._on_move:
            return ceil_ms(max(0, self._deadline - self._now()))
        return ceil_ms(self._sides[side].to_flag())

    def used_ms(self, side: Side) -> int:
        """All time ``side`` used on this clock, the current turn included."""
        state = self._sides[side]
        used = state.used_ns
        if self._phase is Phase.RUNNING and side is self._on_move:
            used += self._elapsed(self._now())
        return used // NS_PER_MS

    def reading(self, side: Side) -> Reading:
        """The face's view of ``side`` now: main time, delay left and byo-yomi periods."""
        state = self._view(side, self._now())
        return Reading(
            main_ms=ceil_ms(state.main_ns),
            delay_ms=ceil_ms(state.delay_ns),
            periods=state.periods,
            period_ms=ceil_ms(state.period_ns - state.period_used_ns) if state.periods else 0,
        )

    def moves(self, side: Side) -> int:
        """Moves ``side`` has completed."""
        return self._sides[side].moves

    @property
    def phase(self) -> Phase:
        if self._phase is Phase.RUNNING and self._now() >= self._deadline:
            return Phase.FINISHED
        return self._phase

    @property
    def running(self) -> Side | None:
        """The side whose time is running now, or None."""
        if self._phase is Phase.RUNNING and self._now() < self._deadline:
            return self._on_move
        return None

    @property
    def flag(self) -> Side | None:
        """The first side to reach zero, true from that very instant."""
        if self._phase is Phase.RUNNING and self._now() >= self._deadline:
            return self._on_move
        return self._flag

    @property
    def side_on_move(self) -> Side:
        """The side to move, also while paused or idle (red), or the flagged side."""
        return self._on_move

    @property
    def tc(self) -> TimeControl:
        return self._sides[Side.RED].tc

    @property
    def handicap(self) -> Handicap | None:
        return self._handicap

    @property
    def black_tc(self) -> TimeControl:
        return self._sides[Side.BLACK].tc

    @property
    def flagged_ns(self) -> int | None:
        """The monotonic instant the flag fell (its deadline, not when it was settled); None
        before a flag, and after ``restore`` (monotonic instants are not kept)."""
        return self._flagged_ns

    def deadline_ns(self) -> int | None:
        """The monotonic instant the running side flags; None when nothing runs.

        It may already have passed if no call has settled the flag yet: schedule
        ``settle()`` at this instant and publish what it returns.
        """
        return self._deadline if self._phase is Phase.RUNNING else None

    def snapshot(self) -> dict[str, Any]:
        """A plain JSON-able dict of the state at now(); monotonic instants are not kept."""
        now = self._now()
        flag = self.flag
        phase = Phase.FINISHED if flag is not None else self._phase
        sides = {}
        for side in Side:
            state = self._view(side, now)
            sides[side.value] = {key: getattr(state, key) for key in _SIDE_KEYS}
        black_tc = self.black_tc
        out = {
            "v": _SNAPSHOT_VERSION,
            "tc": str(self.tc),
            "black_tc": None if black_tc == self.tc else str(black_tc),
            "phase": phase.value,
            "side_on_move": self._on_move.value,
            "flag": None if flag is None else flag.value,
            "started": self._started,
            **sides,
        }
        if self._handicap is not None:  # only then: older readers know no such key
            out["handicap"] = self._handicap.as_dict()
        return out

    @classmethod
    def restore(
        cls, snapshot: Mapping[str, Any], *, now: Callable[[], int], resume: bool = False
    ) -> GameClock:
        """Rebuild a clock from ``snapshot()``; a running clock comes back PAUSED unless
        ``resume=True`` (then it runs on from now: the time between is not counted).
        Raises ValueError naming the first bad field.
        """
        fields = _check_snapshot(snapshot)
        tc = TimeControl.parse(fields["tc"])
        black = TimeControl.parse(fields["black_tc"]) if fields["black_tc"] else None
        given = fields.get("handicap")
        handicap = None if given is None else Handicap.parse(given)
        clock = cls(tc, now=now, black=black, handicap=handicap)
        for side in Side:
            state = clock._sides[side]
            for key in _SIDE_KEYS:
                setattr(state, key, fields[side.value][key])
            limit = state.tc.byoyomi.periods if state.tc.byoyomi else 0
            if state.periods > limit or state.period_used_ns >= max(state.period_ns, 1):
                raise ValueError(f"snapshot {side.value}: byo-yomi state does not fit {state.tc}")
        clock._on_move = Side(fields["side_on_move"])
        clock._started = fields["started"]
        phase = Phase(fields["phase"])
        clock._flag = None if fields["flag"] is None else Side(fields["flag"])
        if (phase is Phase.FINISHED) != (clock._flag is not None):
            raise ValueError("snapshot: 'flag' must be set exactly when 'phase' is 'finished'")
        for side in Side:
            if side is not clock._flag and clock._sides[side].to_flag() <= 0:
                raise ValueError(f"snapshot {side.value}: no time left but no flag")
        clock._phase = phase
        if phase is Phase.RUNNING:
            clock._phase = Phase.PAUSED
            if resume:
                clock._run(now())
        return clock

    def __repr__(self) -> str:
        red, black = (self.remaining_ms(s) for s in Side)
        return (
            f"<GameClock {self.phase.value} on_move={self._on_move} flag={self.flag} "
            f"red={red}ms/{self.moves(Side.RED)} black={black}ms/{self.moves(Side.BLACK)} "
            f"tc={self.tc}{'' if self.black_tc == self.tc else f' black_tc={self.black_tc}'}>"
        )

    def _run(self, now: int) -> None:
        self._phase = Phase.RUNNING
        self._deadline = now + self._sides[self._on_move].to_flag()
        self._since = now

    def _elapsed(self, now: int) -> int:
        """Time the running side used since the last settle (never past its flag)."""
        state = self._sides[self._on_move]
        start = self._deadline - state.to_flag()
        return max(0, min(now, self._deadline) - start)

    def _view(self, side: Side, now: int) -> SideBudget:
        state = self._sides[side]
        if self._phase is Phase.RUNNING and side is self._on_move:
            state = state.copy()
            state.consume(self._elapsed(now))
        return state

    def _settle(self, now: int) -> Events:
        """Bring the running side's budget up to ``now``; report a flag that has fallen."""
        if self._phase is not Phase.RUNNING:
            return ()
        state = self._sides[self._on_move]
        state.consume(self._elapsed(now))
        if now < self._deadline:
            return ()
        # Exact zero: the budget is spent to the ns, the flag falls, nothing runs any more.
        self._phase = Phase.FINISHED
        self._flag = self._on_move
        self._flagged_ns = self._deadline
        return (Flagged(self._on_move),)


def _int(
    name: str, value: object, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ClockError(f"{name} must be an int, not {value!r}")
    if minimum is not None and value < minimum:
        raise ClockError(f"{name} must be at least {minimum}, not {value}")
    if maximum is not None and value > maximum:
        raise ClockError(f"{name} must be at most {maximum}, not {value}")
    return value


def _check_snapshot(snapshot: object) -> dict[str, Any]:
    phases = {p.value for p in Phase}
    return check_snapshot(snapshot, version=_SNAPSHOT_VERSION, side_keys=_SIDE_KEYS, phases=phases)
