"""Time controls: a frozen value object with a round-trip text form.

Grammar (documented with examples in docs/timecontrol.md)::

    tc       := period (":" period)* [":" byoyomi]
    period   := [moves "/"] duration [bonus]
    bonus    := "+" duration        Fischer increment, added on every completed move
              | "+d" duration       simple (US) delay: the clock waits before counting down
              | "+b" duration       Bronstein delay: time used is refunded up to the delay
    byoyomi  := count "x" duration  读秒: count periods of duration after the main time
    duration := digits              bare seconds (the PGN TimeControl form, "1800+5")
              | (digits unit)+      units h, m, s, ms, each at most once, largest first

Every period but the last needs a move count; a last period with a move count repeats.
``str(tc)`` is the canonical form and ``TimeControl.parse(str(tc)) == tc``.
"""

from __future__ import annotations

import dataclasses
import enum
import re

__all__ = ["Bonus", "ByoYomi", "Period", "TimeControl"]

_UNIT_MS = {"h": 3_600_000, "m": 60_000, "s": 1_000, "ms": 1}
_TOKEN = re.compile(r"(\d+)(ms|[a-z]*)")


class Bonus(enum.Enum):
    """What a period gives back per move; the value is the notation after the ``+``."""

    FISCHER = ""
    SIMPLE_DELAY = "d"
    BRONSTEIN = "b"


def _check_ms(name: str, value: object, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int of milliseconds, not {value!r}")
    if value < minimum:
        kind = "positive" if minimum > 0 else "zero or more"
        raise ValueError(f"{name} must be {kind}, not {value}")
    return value


@dataclasses.dataclass(frozen=True, slots=True)
class Period:
    """``time_ms`` for ``moves`` moves (None: the rest of the game) with a per-move bonus."""

    time_ms: int
    moves: int | None = None
    bonus_ms: int = 0
    bonus: Bonus = Bonus.FISCHER

    def __post_init__(self) -> None:
        _check_ms("period time", self.time_ms, minimum=1)
        if self.moves is not None:
            _check_ms("period move count", self.moves, minimum=1)
        # A zero Fischer increment is the ordinary "1800+0"; a zero delay means nothing.
        minimum = 0 if self.bonus is Bonus.FISCHER else 1
        _check_ms(f"{self.bonus.name.lower()} bonus", self.bonus_ms, minimum=minimum)
        if not isinstance(self.bonus, Bonus):
            raise ValueError(f"bonus must be a Bonus, not {self.bonus!r}")

    @property
    def increment_ms(self) -> int:
        return self.bonus_ms if self.bonus is Bonus.FISCHER else 0

    @property
    def delay_ms(self) -> int:
        """The delay of either kind (simple or Bronstein), 0 for Fischer."""
        return 0 if self.bonus is Bonus.FISCHER else self.bonus_ms

    def __str__(self) -> str:
        text = f"{self.moves}/" if self.moves is not None else ""
        text += format_duration(self.time_ms)
        if self.bonus_ms:
            text += f"+{self.bonus.value}{format_duration(self.bonus_ms)}"
        return text


@dataclasses.dataclass(frozen=True, slots=True)
class ByoYomi:
    """读秒: ``periods`` periods of ``period_ms`` once the main time is spent.

    A move completed inside a period keeps it; each period that runs out is lost; the side
    flags when the last one runs out.
    """

    periods: int
    period_ms: int

    def __post_init__(self) -> None:
        _check_ms("byo-yomi period count", self.periods, minimum=1)
        _check_ms("byo-yomi period time", self.period_ms, minimum=1)

    def __str__(self) -> str:
        return f"{self.periods}x{format_duration(self.period_ms)}"


@dataclasses.dataclass(frozen=True, slots=True)
class TimeControl:
    """A whole time control: one or more periods, optionally followed by byo-yomi."""

    periods: tuple[Period, ...]
    byoyomi: ByoYomi | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.periods, tuple) or not self.periods:
            raise ValueError("a time control needs at least one period (a non-empty tuple)")
        for index, period in enumerate(self.periods):
            if not isinstance(period, Period):
                raise ValueError(f"period {index + 1} must be a Period, not {period!r}")
            if period.moves is None and index < len(self.periods) - 1:
                raise ValueError(
                    f"period {index + 1} is for the rest of the game, so no period may follow it"
                )
        if self.byoyomi is not None and not isinstance(self.byoyomi, ByoYomi):
            raise ValueError(f"byoyomi must be a ByoYomi or None, not {self.byoyomi!r}")

    # -- constructors ---------------------------------------------------------------------

    @classmethod
    def from_ms(
        cls,
        *,
        base_ms: int,
        increment_ms: int = 0,
        delay_ms: int = 0,
        bronstein_ms: int = 0,
        byoyomi_periods: int = 0,
        byoyomi_ms: int = 0,
    ) -> TimeControl:
        """A single-period control; at most one of increment, delay and Bronstein delay."""
        given = [
            (bonus, ms)
            for bonus, ms in (
                (Bonus.FISCHER, increment_ms),
                (Bonus.SIMPLE_DELAY, delay_ms),
                (Bonus.BRONSTEIN, bronstein_ms),
            )
            if ms != 0
        ]
        if len(given) > 1:
            raise ValueError("give at most one of increment_ms, delay_ms and bronstein_ms")
        bonus, bonus_ms = given[0] if given else (Bonus.FISCHER, 0)
        byoyomi = None
        if byoyomi_periods or byoyomi_ms:
            byoyomi = ByoYomi(periods=byoyomi_periods, period_ms=byoyomi_ms)
        return cls((Period(time_ms=base_ms, bonus_ms=bonus_ms, bonus=bonus),), byoyomi)

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse the PGN or human notation; ``ValueError`` says what is wrong and where."""
        if not isinstance(text, str):
            raise ValueError(f"a time control must be text, not {text!r}")
        return _Parser(text).parse()

    # -- accessors ------------------------------------------------------------------------

    @property
    def base_ms(self) -> int:
        """The time on the clock at the start (the first period's time)."""
        return self.periods[0].time_ms

    @property
    def increment_ms(self) -> int:
        """The first period's Fischer increment (0 for a delay or none)."""
        return self.periods[0].increment_ms

    @property
    def delay_ms(self) -> int:
        """The first period's delay, simple or Bronstein (0 for Fischer)."""
        return self.periods[0].delay_ms

    def period_for(self, completed_moves: int) -> tuple[int, Period]:
        """The (index, period) governing the next move after ``completed_moves`` moves."""
        index, remaining = 0, completed_moves
        while True:
            period = self.periods[index]
            if period.moves is None or remaining < period.moves:
                return index, period
            remaining -= period.moves
            if index < len(self.periods) - 1:
                index += 1
            # else: the last period has a move count and repeats.

    def time_added_after(self, completed_moves: int) -> int:
        """Period time added on completing move number ``completed_moves`` (0 if none)."""
        if completed_moves <= 0:
            return 0
        boundary = 0
        for index, period in enumerate(self.periods[:-1]):
            boundary += period.moves or 0  # only the last period may lack a move count
            if completed_moves == boundary:
                return self.periods[index + 1].time_ms
        last = self.periods[-1]
        past = completed_moves - boundary
        if last.moves is not None and past > 0 and past % last.moves == 0:
            return last.time_ms  # a last period with a move count starts again
        return 0

    def pgn(self) -> str:
        """The PGN TimeControl tag value; ``ValueError`` if not expressible in PGN."""
        parts = []
        for period in self.periods:
            if period.bonus is not Bonus.FISCHER or self.byoyomi is not None:
                raise ValueError(f"{self} has no PGN form (PGN knows only Fischer increments)")
            if period.time_ms % 1000 or period.bonus_ms % 1000:
                raise ValueError(f"{self} has no PGN form (PGN counts whole seconds)")
            text = f"{period.moves}/" if period.moves is not None else ""
            text += str(period.time_ms // 1000)
            if period.bonus_ms:
                text += f"+{period.bonus_ms // 1000}"
            parts.append(text)
        return ":".join(parts)

    def __str__(self) -> str:
        parts = [str(p) for p in self.periods]
        if self.byoyomi is not None:
            parts.append(str(self.byoyomi))
        return ":".join(parts)

    def __repr__(self) -> str:
        return f"TimeControl({str(self)!r})"


def format_duration(ms: int) -> str:
    """Canonical duration text: ``5400000`` -> ``"1h30m"``, ``1500`` -> ``"1s500ms"``."""
    if ms == 0:
        return "0s"
    out = []
    for unit, size in _UNIT_MS.items():
        count, ms = divmod(ms, size)
        if count:
            out.append(f"{count}{unit}")
    return "".join(out)


class _Parser:
    """A hand-written scanner so that every error can name its position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.src = text.strip().lower()
        self.offset = len(text) - len(text.lstrip())  # positions refer to the original text
        self.pos = 0

    def fail(self, what: str, pos: int | None = None) -> ValueError:
        at = self.offset + (self.pos if pos is None else pos)
        return ValueError(f"time control {self.text!r}: {what} at position {at + 1}")

    def parse(self) -> TimeControl:
        if not self.src:
            raise ValueError(f"time control {self.text!r} is empty")
        periods: list[Period] = []
        byoyomi: ByoYomi | None = None
        while True:
            start = self.pos
            if byoyomi is not None:
                raise self.fail("byo-yomi must be the last part", start)
            if self._looks_like_byoyomi(after_period=bool(periods)):
                if not periods:
                    raise self.fail("byo-yomi needs a main time before it", start)
                byoyomi = self._byoyomi()
            else:
                if periods and periods[-1].moves is None:
                    raise self.fail(
                        "a period follows one without a move count (write N/ before it)",
                        start,
                    )
                periods.append(self._period())
            if self.pos == len(self.src):
                break
            if self.src[self.pos] != ":":
                raise self.fail(f"unexpected {self.src[self.pos]!r}")
            self.pos += 1
            if self.pos == len(self.src):
                raise self.fail("nothing after the trailing ':'", self.pos - 1)
        return TimeControl(tuple(periods), byoyomi)

    def _looks_like_byoyomi(self, *, after_period: bool) -> bool:
        # "3x30s"; a leading "30x" is rather a mistyped unit, reported as such.
        pattern = r"\d+x" if after_period else r"\d+x\d"
        return re.match(pattern, self.src[self.pos :]) is not None

    def _number(self, what: str) -> int:
        match = re.match(r"\d+", self.src[self.pos :])
        if match is None:
            found = self.src[self.pos : self.pos + 1] or "the end"
            raise self.fail(f"expected {what}, found {found!r}")
        self.pos += match.end()
        return int(match.group())

    def _period(self) -> Period:
        moves: int | None = None
        match = re.match(r"(\d+)/", self.src[self.pos :])
        if match is not None:
            moves = int(match.group(1))
            if moves == 0:
                raise self.fail("a period's move count must be positive")
            self.pos += match.end()
        time_pos = self.pos
        if self.src.startswith("-", self.pos):
            raise self.fail("negative times are not allowed")
        time_ms = self._duration("the period's time")
        if time_ms == 0:
            raise self.fail("the period's time must be positive", time_pos)
        bonus, bonus_ms = Bonus.FISCHER, 0
        if self.src.startswith("+", self.pos):
            self.pos += 1
            kind = self.src[self.pos : self.pos + 1]
            if kind in ("d", "b"):
                bonus = Bonus(kind)
                self.pos += 1
            bonus_pos = self.pos
            if self.src.startswith("-", self.pos):
                raise self.fail("a negative increment or delay is not allowed")
            bonus_ms = self._duration("an increment or delay after '+'")
            if bonus_ms == 0 and bonus is not Bonus.FISCHER:
                raise self.fail("a delay must be positive", bonus_pos)
        if self.src.startswith("-", self.pos):
            raise self.fail("negative times are not allowed; use '+' for an increment")
        return Period(time_ms=time_ms, moves=moves, bonus_ms=bonus_ms, bonus=bonus)

    def _byoyomi(self) -> ByoYomi:
        count_pos = self.pos
        count = self._number("a byo-yomi period count")
        if count == 0:
            raise self.fail("the byo-yomi period count must be positive", count_pos)
        self.pos += 1  # the "x"
        time_pos = self.pos
        period_ms = self._duration("the byo-yomi period time")
        if period_ms == 0:
            raise self.fail("the byo-yomi period time must be positive", time_pos)
        return ByoYomi(periods=count, period_ms=period_ms)

    def _duration(self, what: str) -> int:
        """Bare digits are PGN seconds; otherwise digit+unit groups, largest unit first."""
        start = self.pos
        total, last_rank, groups = 0, -1, 0
        units = list(_UNIT_MS)
        while True:
            match = _TOKEN.match(self.src, self.pos)
            if match is None:
                break
            digits, unit = match.groups()
            if unit == "":
                if groups:
                    raise self.fail(f"the number {digits} has no unit", match.start())
                self.pos = match.end()
                return int(digits) * 1000
            if unit not in _UNIT_MS:
                raise self.fail(f"unknown unit {unit!r} (use h, m, s or ms)", match.start(2))
            rank = units.index(unit)
            if rank <= last_rank:
                raise self.fail(f"unit {unit!r} repeated or out of order", match.start(2))
            last_rank, groups = rank, groups + 1
            total += int(digits) * _UNIT_MS[unit]
            self.pos = match.end()
        if groups == 0:
            found = self.src[start : start + 1] or "the end"
            raise self.fail(f"expected {what} (a number), found {found!r}", start)
        return total
