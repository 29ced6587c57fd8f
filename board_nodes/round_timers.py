"""A board's two wall-clock timers: the round's start and the late deadline after it.

Both are instants the station names in wall-clock ms (a round start announced ahead, the
regulation's late deadline counted from it), unlike the flag, which is a deadline on the
board's monotonic clock (``flag_guard.py``). Each one holds a single pending call
(``TimerSlot``): arming it again replaces the last one, so a start sent twice starts once. What
happens when one is due (starting the clock, journaling a ``late``) is the board's: these
only keep the time and say when.
"""

from __future__ import annotations

from collections.abc import Callable

from board_nodes.timer_slot import TimerSlot
from clock_service import GameClock, Referee, Side
from wire_contract.wallclock import wall_ms

__all__ = ["LateWatch", "RoundStart"]


def _seconds_until(at_wall_ms: int, wall: Callable[[], int]) -> float:
    """How long until a wall-clock instant; one already passed is due at once."""
    return max(0.0, (at_wall_ms - wall()) / 1000)


class RoundStart:
    """Starts a board's clock at the round's announced instant (now, if it has passed)."""

    def __init__(self, *, start: Callable[[], None], wall: Callable[[], int] = wall_ms) -> None:
        self._start = start
        self._wall = wall
        self._timer = TimerSlot()

    @property
    def pending(self) -> bool:
        """A start is announced and not yet due: black's press does not start the clock."""
        return self._timer.pending

    def schedule(self, at_wall_ms: int) -> None:
        self._timer.call_later(_seconds_until(at_wall_ms, self._wall), self._start)

    def cancel(self) -> None:
        self._timer.cancel()

    def close(self) -> None:
        self.cancel()


class LateWatch:
    """At the regulation's late deadline after the round start, names the sides that have
    not moved yet (both when neither has) for the board to journal as ``late``."""

    def __init__(
        self, *, late: Callable[[tuple[Side, ...]], None], wall: Callable[[], int] = wall_ms
    ) -> None:
        self._late = late
        self._wall = wall
        self._timer = TimerSlot()
        # What the deadline was armed for; a new game or a new start re-arms it.
        self._game: tuple[Referee, GameClock | None, int] | None = None

    def watch(
        self, referee: Referee | None, clock: GameClock | None, round_start_ms: int | None
    ) -> None:
        self.cancel()
        if referee is None or round_start_ms is None:
            return
        self._game = (referee, clock, round_start_ms)
        due_ms = referee.late_deadline_ms(round_start_ms)
        self._timer.call_later(_seconds_until(due_ms, self._wall), self._due)

    def _due(self) -> None:
        game, self._game = self._game, None
        if game is None:
            return
        referee, clock, round_start_ms = game
        if clock is None:
            return
        sides = referee.late_sides(
            now_ms=self._wall(),
            round_start_ms=round_start_ms,
            red_moves=clock.moves(Side.RED),
            black_moves=clock.moves(Side.BLACK),
        )
        self._late(sides)

    def cancel(self) -> None:
        self._timer.cancel()
        self._game = None

    def close(self) -> None:
        self.cancel()
