"""A tournament's regulation (竞赛规程 + 补充规定) as a frozen value object loaded from TOML.

The profile format is documented key by key in ``docs/regulation.md``; the two seed tournaments
are bundled as ``meishan-2016`` and ``wulong-2015``. Loading is strict: an unknown key, a wrong
type, a missing value or a bad time control raises :class:`RegulationError` naming the file, the
dotted key and the reason, because a silently ignored typo in a regulation decides games.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import enum
import importlib.resources
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from clock_service.side import Side
from clock_service.timecontrol import TimeControl

__all__ = [
    "BUNDLED",
    "ClockRules",
    "DrawRules",
    "ForfeitRules",
    "FoulRules",
    "Knockout",
    "LateRules",
    "MoveLimit",
    "Offence",
    "Regulation",
    "RegulationError",
    "Scoring",
    "Session",
    "Standings",
    "Tiebreak",
    "TiebreakGame",
    "Tournament",
]

BUNDLED = ("meishan-2016", "wulong-2015")
_CODE_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_T = TypeVar("_T")
_E = TypeVar("_E", bound=enum.Enum)


class RegulationError(ValueError):
    """A profile that cannot be used; ``source``, ``key`` (dotted) and ``reason`` say why."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source = source
        self.key = key
        self.reason = reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")


class Offence(enum.Enum):
    """What a clock fact counts as before the arbiter rules on it."""

    NONE = "none"
    FOUL = "foul"  # a pending foul against the side
    FORFEIT = "forfeit"  # a pending forfeit (立即判负) against the side

    def __str__(self) -> str:
        return self.value


class Tiebreak(enum.Enum):
    """One criterion of the standings order, applied in the profile's order."""

    POINTS = "points"  # more is better
    PROGRESSIVE = "progressive"  # 累进分: sum of the running totals after each round; more
    WINS = "wins"  # 胜局; more is better
    FOULS = "fouls"  # 犯规; fewer is better
    BLACK_GAMES = "black_games"  # 后走局数; more is better
    DROP_ROUNDS = "drop_rounds"  # drop round 1's score and compare again, then round 2, …

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class Scoring:
    win: int
    draw: int
    loss: int


@dataclasses.dataclass(frozen=True)
class FoulRules:
    forfeit_at: int  # confirmed fouls of one side in one game that lose it
    progressive_penalty: int  # 累进分 deducted per confirmed foul (0: none)
    reasons: tuple[str, ...]  # the foul codes this regulation lists

    def __repr__(self) -> str:
        return f"FoulRules(forfeit_at={self.forfeit_at}, penalty={self.progressive_penalty})"


@dataclasses.dataclass(frozen=True)
class ForfeitRules:
    reasons: tuple[str, ...]  # the 立即判负 codes this regulation lists


@dataclasses.dataclass(frozen=True)
class ClockRules:
    board_pause: Offence  # a pause from the board (擅停棋钟)
    switch_off: Offence  # the clock switched off during a game (擅自关闭计时钟)


@dataclasses.dataclass(frozen=True)
class LateRules:
    minutes: int  # absent this long after the round is started: loss

    @property
    def ms(self) -> int:
        return self.minutes * 60_000


@dataclasses.dataclass(frozen=True)
class MoveLimit:
    moves: int  # 自然限着, in full moves (回合)
    # How many of the claimant's checks count towards the limit; None: all of them. The
    # clock cannot see checks: the arbiter accounts for them (see docs/regulation.md).
    claimant_checks_counted: int | None


@dataclasses.dataclass(frozen=True)
class DrawRules:
    min_moves: int  # no agreed draw before this many full moves (0: no minimum)


@dataclasses.dataclass(frozen=True)
class Standings:
    order: tuple[Tiebreak, ...]


@dataclasses.dataclass(frozen=True)
class Session:
    date: datetime.date
    start: datetime.time
    rounds: int


@dataclasses.dataclass(frozen=True)
class Tournament:
    rounds: int
    dates: tuple[datetime.date, ...]
    sessions: tuple[Session, ...]  # empty when the regulation announces no times


@dataclasses.dataclass(frozen=True)
class TiebreakGame:
    time_control_text: str
    draw_winner: Side | None  # "和棋黑胜": a draw counts as a win for this side
    colour_choice: str  # who chooses colours, e.g. "slow_game_black"

    @property
    def time_control(self) -> TimeControl:
        return _parse_time_control(self.time_control_text)


@dataclasses.dataclass(frozen=True)
class Knockout:
    after_round: int
    players: int
    pairings: tuple[tuple[int, int], ...]  # by standing after ``after_round``
    colours: str  # how colours are decided, e.g. "lot" (抽签)
    tiebreak: TiebreakGame | None


@dataclasses.dataclass(frozen=True)
class Regulation:
    """One tournament's rules; nested attributes mirror the TOML tables of the profile."""

    name: str
    title: str
    source: str
    time_control_text: str
    scoring: Scoring
    fouls: FoulRules
    forfeits: ForfeitRules
    clock: ClockRules
    late: LateRules
    move_limit: MoveLimit
    draw: DrawRules
    standings: Standings
    tournament: Tournament
    knockout: Knockout | None

    def __repr__(self) -> str:
        return f"<Regulation {self.name} {self.time_control_text}>"

    @property
    def time_control(self) -> TimeControl:
        return _parse_time_control(self.time_control_text)

    @classmethod
    def bundled(cls) -> tuple[str, ...]:
        return BUNDLED

    @classmethod
    def load(cls, name_or_path: str | os.PathLike[str]) -> Regulation:
        """Load a bundled profile by name (``"meishan-2016"``) or any profile file by path."""
        if isinstance(name_or_path, str) and name_or_path in BUNDLED:
            resource = importlib.resources.files("clock_service.profiles") / f"{name_or_path}.toml"
            try:
                text = resource.read_text(encoding="utf-8")
            except OSError as exc:  # an incomplete install, not a bad name: say which
                reason = f"bundled profile not installed ({exc}); reinstall qizhong"
                raise RegulationError(name_or_path, "", reason) from None
            return cls.from_toml(text, source=name_or_path)
        path = Path(name_or_path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            hint = f"; bundled profiles: {', '.join(BUNDLED)}"
            raise RegulationError(str(path), "", "no such profile" + hint) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RegulationError(str(path), "", f"cannot read: {exc}") from None
        return cls.from_toml(text, source=str(path))

    @classmethod
    def from_toml(cls, text: str, *, source: str = "<string>") -> Regulation:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RegulationError(source, "", f"not valid TOML: {exc}") from None
        return _build(_Table(data, "", source))


def _parse_time_control(text: str) -> TimeControl:
    return TimeControl.parse(text)


# -- the strict reader -------------------------------------------------------------------------
class _Table:
    """One TOML table being read; remembers which keys were used so leftovers are errors."""

    def __init__(self, data: Mapping[str, Any], path: str, source: str) -> None:
        self.data = data
        self.path = path
        self.source = source
        self.used: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def error(self, name: str, reason: str) -> RegulationError:
        return RegulationError(self.source, self.key(name), reason)

    def has(self, name: str) -> bool:
        return name in self.data

    def _get(self, name: str, expected: type, what: str) -> Any:
        self.used.add(name)
        if name not in self.data:
            raise self.error(name, f"missing value ({what} expected)")
        value = self.data[name]
        # bool is an int in Python; in a profile ``true`` is never a number.
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise self.error(name, f"wrong type: {what} expected, got {_toml_type(value)}")
        return value

    def text(self, name: str) -> str:
        value: str = self._get(name, str, "a string")
        if not value.strip():
            raise self.error(name, "must not be empty")
        return value

    def integer(self, name: str, *, low: int = 0, high: int = 10_000) -> int:
        value: int = self._get(name, int, "an integer")
        if not low <= value <= high:
            raise self.error(name, f"{value} is out of range {low}..{high}")
        return value

    def array(self, name: str, item: Callable[[str, Any], _T], what: str) -> tuple[_T, ...]:
        values: list[Any] = self._get(name, list, f"an array of {what}")
        return tuple(item(f"{name}[{i}]", v) for i, v in enumerate(values))

    def codes(self, name: str) -> tuple[str, ...]:
        def code(key: str, value: Any) -> str:
            if not isinstance(value, str) or not _CODE_RE.match(value):
                raise self.error(key, f"{value!r} is not a code like 'board_pause'")
            return value

        found = self.array(name, code, "codes")
        if len(set(found)) != len(found):
            raise self.error(name, "a code is listed twice")
        return found

    def enum(self, name: str, kind: type[_E]) -> _E:
        return _enum_value(self, name, self.text(name), kind)

    def table(self, name: str) -> _Table:
        return _Table(self._get(name, dict, "a table"), self.key(name), self.source)

    def tables(self, name: str) -> tuple[_Table, ...]:
        items: list[Any] = self._get(name, list, "an array of tables")
        out = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.error(f"{name}[{i}]", f"wrong type: a table expected, got {item!r}")
            out.append(_Table(item, self.key(f"{name}[{i}]"), self.source))
        return tuple(out)

    def done(self) -> None:
        for name in self.data:
            if name not in self.used:
                near = difflib.get_close_matches(name, [str(k) for k in self.used], n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise self.error(name, f"unknown key{hint}")


def _enum_value(table: _Table, key: str, text: str, kind: type[_E]) -> _E:
    for member in kind:
        if member.value == text:
            return member
    allowed = ", ".join(repr(m.value) for m in kind)
    raise table.error(key, f"{text!r} is not one of {allowed}")


def _toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    names |= {list: "an array", dict: "a table", datetime.date: "a date", datetime.time: "a time"}
    for kind, label in names.items():
        if type(value) is kind:
            if kind is bool:
                return f"{label} ({str(value).lower()})"
            return f"{label} ({value!r})" if kind not in (list, dict) else label
    return type(value).__name__


def _time_control(table: _Table, name: str) -> str:
    text = table.text(name)
    try:
        TimeControl.parse(text)
    except ValueError as exc:
        raise table.error(name, f"bad time control: {exc}") from None
    return text


def _plain(table: _Table, name: str, build: Callable[[_Table], _T]) -> _T:
    sub = table.table(name)
    value = build(sub)
    sub.done()
    return value


# -- building the value objects ------------------------------------------------------------------
def _build(root: _Table) -> Regulation:
    name = root.text("name")
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", name):
        raise root.error("name", f"{name!r} must match [A-Za-z0-9_-]{{1,32}}")
    reg = Regulation(
        name=name,
        title=root.text("title"),
        source=root.text("source") if root.has("source") else "",
        time_control_text=_time_control(root, "time_control"),
        scoring=_plain(
            root,
            "scoring",
            lambda t: Scoring(t.integer("win"), t.integer("draw"), t.integer("loss")),
        ),
        fouls=_plain(root, "fouls", _fouls),
        forfeits=_plain(root, "forfeits", lambda t: ForfeitRules(t.codes("reasons"))),
        clock=_plain(
            root,
            "clock",
            lambda t: ClockRules(t.enum("board_pause", Offence), t.enum("switch_off", Offence)),
        ),
        late=_plain(root, "late", lambda t: LateRules(t.integer("minutes", low=1, high=240))),
        move_limit=_plain(root, "move_limit", _move_limit),
        draw=_plain(root, "draw", lambda t: DrawRules(t.integer("min_moves", high=500))),
        standings=_plain(root, "standings", _standings),
        tournament=_plain(root, "tournament", _tournament),
        knockout=_plain(root, "knockout", _knockout) if root.has("knockout") else None,
    )
    root.done()
    if reg.knockout is not None and reg.knockout.after_round >= reg.tournament.rounds:
        raise root.error("knockout.after_round", "must be before the last round")
    return reg


def _fouls(t: _Table) -> FoulRules:
    return FoulRules(
        forfeit_at=t.integer("forfeit_at", low=1, high=100),
        progressive_penalty=t.integer("progressive_penalty", high=100),
        reasons=t.codes("reasons"),
    )


def _move_limit(t: _Table) -> MoveLimit:
    moves = t.integer("moves", low=1, high=500)
    checks: int | None
    if t.has("claimant_checks_counted") and t.data["claimant_checks_counted"] == "all":
        t.used.add("claimant_checks_counted")
        checks = None
    else:
        checks = t.integer("claimant_checks_counted", high=500)
    return MoveLimit(moves, checks)


def _standings(t: _Table) -> Standings:
    def criterion(key: str, value: Any) -> Tiebreak:
        if not isinstance(value, str):
            raise t.error(key, f"wrong type: a string expected, got {_toml_type(value)}")
        return _enum_value(t, key, value, Tiebreak)

    order = t.array("order", criterion, "criteria")
    if not order or order[0] is not Tiebreak.POINTS:
        raise t.error("order", "must start with 'points'")
    if len(set(order)) != len(order):
        raise t.error("order", "a criterion is listed twice")
    if Tiebreak.DROP_ROUNDS in order[:-1]:
        raise t.error("order", "'drop_rounds' can only be the last criterion")
    return Standings(order)


def _date(t: _Table, key: str, value: Any) -> datetime.date:
    if type(value) is not datetime.date:
        raise t.error(key, f"wrong type: a date (2016-12-10) expected, got {_toml_type(value)}")
    return value


def _tournament(t: _Table) -> Tournament:
    rounds = t.integer("rounds", low=1, high=50)
    dates = t.array("dates", lambda k, v: _date(t, k, v), "dates") if t.has("dates") else ()
    sessions: list[Session] = []
    for s in t.tables("sessions") if t.has("sessions") else ():
        date = _date(s, "date", s._get("date", object, "a date (2015-09-19)"))
        start = s._get("start", datetime.time, "a time (09:00:00)")
        sessions.append(Session(date, start, s.integer("rounds", low=1, high=50)))
        s.done()
    if sessions and sum(s.rounds for s in sessions) != rounds:
        held = sum(s.rounds for s in sessions)
        raise t.error("sessions", f"the sessions hold {held} rounds, not {rounds}")
    return Tournament(rounds, dates, tuple(sessions))


def _knockout(t: _Table) -> Knockout:
    players = t.integer("players", low=2, high=64)

    def pair(key: str, value: Any) -> tuple[int, int]:
        ok = isinstance(value, list) and len(value) == 2
        if not ok or not all(type(v) is int and 1 <= v <= players for v in value):
            raise t.error(key, f"{value!r} is not a pair of standings 1..{players}")
        return (value[0], value[1])

    return Knockout(
        after_round=t.integer("after_round", low=1, high=50),
        players=players,
        pairings=t.array("pairings", pair, "pairs"),
        colours=t.text("colours"),
        tiebreak=_plain(t, "tiebreak", _tiebreak_game) if t.has("tiebreak") else None,
    )


def _tiebreak_game(t: _Table) -> TiebreakGame:
    winner = t.text("draw_winner")
    return TiebreakGame(
        time_control_text=_time_control(t, "time_control"),
        draw_winner=None if winner == "none" else _enum_value(t, "draw_winner", winner, Side),
        colour_choice=t.text("colour_choice"),
    )
