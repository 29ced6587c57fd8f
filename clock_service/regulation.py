"""A tournament's regulation (竞赛规程 + 补充规定) as a frozen value object loaded from TOML.

The profile format is documented key by key in ``docs/regulation.md``; the two seed tournaments
are bundled as ``meishan-2016`` and ``wulong-2015``. Loading is strict: an unknown key, a wrong
type, a missing value or a bad time control raises :class:`RegulationError` naming the file, the
dotted key and the reason, because a silently ignored typo in a regulation decides games.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import importlib.resources
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from clock_service.handicap import Handicap, HandicapRule, handicap_for, read_handicap
from clock_service.prizes import PrizeTable, read_prizes
from clock_service.profile_table import RegulationError, Table, enum_value, toml_type
from clock_service.reasons import Reason, read_reasons
from clock_service.recording import RecordingRule, read_recording
from clock_service.side import Side
from clock_service.timecontrol import TimeControl

__all__ = [
    "BUNDLED",
    "ClockRules",
    "DrawRules",
    "ForfeitRules",
    "FoulRules",
    "Handicap",
    "HandicapRule",
    "Knockout",
    "LateRules",
    "MoveLimit",
    "Offence",
    "Reason",
    "RecordingRule",
    "Regulation",
    "RegulationError",
    "Scoring",
    "Session",
    "Standings",
    "Tiebreak",
    "TiebreakGame",
    "Tournament",
    "handicap_for",
]

BUNDLED = ("meishan-2016", "wulong-2015")
DOUBLE_FORFEIT_RULES = ("higher_seed", "arbiter")  # knockout.double_forfeit
_T = TypeVar("_T")


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
    details: tuple[Reason, ...] = ()  # the same codes with their wording

    def __repr__(self) -> str:
        return f"FoulRules(forfeit_at={self.forfeit_at}, penalty={self.progressive_penalty})"


@dataclasses.dataclass(frozen=True)
class ForfeitRules:
    reasons: tuple[str, ...]  # the 立即判负 codes this regulation lists
    details: tuple[Reason, ...] = ()  # the same codes with their wording and counts


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
    # A double forfeit (both absent) cannot be 0:0 in a knockout: "higher_seed" (the player
    # placed higher after ``after_round`` goes through) or "arbiter" (recorded by hand).
    double_forfeit: str = "higher_seed"


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
    handicap: HandicapRule | None = None  # 让先 between players by their tags (optional)
    result_reasons: tuple[Reason, ...] = ()  # the arbiter's result reasons (optional)
    recording: RecordingRule | None = None  # 录谱: which boards, who, the foul (optional)
    prizes: PrizeTable | None = None  # 奖励办法: the prize lists (optional, docs/prizes.md)

    def __repr__(self) -> str:
        return f"<Regulation {self.name} {self.time_control_text}>"

    # -- the loss by fouls: one rule for the node's referee and the station's decision binding --
    def loss_reached(self, foul_reason: str, *, total: int, of_reason: int) -> str | None:
        """The forfeit a confirmed foul of ``foul_reason`` completes when the side's confirmed
        fouls come to ``total``, ``of_reason`` of them of that reason: the reason's own count
        first (“违反行棋规定2次的”), then the total (“一盘棋犯规达到N次的”); None if neither."""
        for reason in self.forfeits.details:
            if reason.of == foul_reason and of_reason == reason.count:
                return reason.code
        return "fouls" if total == self.fouls.forfeit_at else None

    def loss_still_reached(
        self, forfeit_reason: str, *, total: int, per_reason: Mapping[str, int]
    ) -> bool | None:
        """For a forfeit the fouls make (``fouls``, or a reason's own count), whether the side's
        confirmed fouls — ``total``, and ``per_reason`` by reason — still reach it; None for a
        forfeit of another cause."""
        if forfeit_reason == "fouls":
            return total >= self.fouls.forfeit_at
        for reason in self.forfeits.details:
            if reason.code == forfeit_reason and reason.of and reason.count is not None:
                return per_reason.get(reason.of, 0) >= reason.count
        return None

    def reasons(self, kind: str) -> tuple[Reason, ...]:
        """Every ``foul``, ``forfeit`` or ``result`` reason of the profile, in its order."""
        table = {
            "foul": self.fouls.details,
            "forfeit": self.forfeits.details,
            "result": self.result_reasons,
        }
        if kind not in table:
            raise ValueError(f"reason kind must be 'foul', 'forfeit' or 'result', not {kind!r}")
        return table[kind]

    def reason(self, code: str, *, kind: str) -> Reason:
        """The ``kind`` reason ``code``; ValueError lists the profile's codes when unknown."""
        for reason in self.reasons(kind):
            if reason.code == code:
                return reason
        listed = ", ".join(r.code for r in self.reasons(kind))
        raise ValueError(f"{code!r} is not a {kind} under {self.name} ({listed})")

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
        return _build(Table(data, "", source))


def _parse_time_control(text: str) -> TimeControl:
    return TimeControl.parse(text)


def _time_control(table: Table, name: str) -> str:
    text = table.text(name)
    try:
        TimeControl.parse(text)
    except ValueError as exc:
        raise table.error(name, f"bad time control: {exc}") from None
    return text


def _plain(table: Table, name: str, build: Callable[[Table], _T]) -> _T:
    sub = table.table(name)
    value = build(sub)
    sub.done()
    return value


# -- building the value objects ------------------------------------------------------------------
def _build(root: Table) -> Regulation:
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
        forfeits=_plain(root, "forfeits", _forfeits),
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
        handicap=_plain(root, "handicap", read_handicap) if root.has("handicap") else None,
        result_reasons=_plain(root, "results", _results) if root.has("results") else (),
        recording=_plain(root, "recording", read_recording) if root.has("recording") else None,
        prizes=_plain(root, "prizes", read_prizes) if root.has("prizes") else None,
    )
    root.done()
    if reg.recording is not None and reg.recording.foul not in reg.fouls.reasons:
        raise root.error("recording.foul", f"{reg.recording.foul!r} is not one of fouls.reasons")
    if reg.knockout is not None and reg.knockout.after_round >= reg.tournament.rounds:
        raise root.error("knockout.after_round", "must be before the last round")
    return _counted(root, reg)


def _counted(root: Table, reg: Regulation) -> Regulation:
    """The ``fouls`` forfeit counts ``fouls.forfeit_at``; an ``of`` names a foul code."""
    details = []
    for reason in reg.forfeits.details:
        where = f"forfeits.reasons.{reason.code}"
        if reason.of is not None and reason.of not in reg.fouls.reasons:
            raise root.error(f"{where}.of", f"{reason.of!r} is not one of fouls.reasons")
        if reason.code == "fouls" and reason.of is None:
            if reason.count not in (None, reg.fouls.forfeit_at):
                raise root.error(f"{where}.count", "must equal fouls.forfeit_at")
            reason = dataclasses.replace(reason, count=reg.fouls.forfeit_at)
        details.append(reason)
    forfeits = dataclasses.replace(reg.forfeits, details=tuple(details))
    return dataclasses.replace(reg, forfeits=forfeits)


def _fouls(t: Table) -> FoulRules:
    details = read_reasons(t, "reasons", "foul")
    return FoulRules(
        forfeit_at=t.integer("forfeit_at", low=1, high=100),
        progressive_penalty=t.integer("progressive_penalty", high=100),
        reasons=tuple(r.code for r in details),
        details=details,
    )


def _forfeits(t: Table) -> ForfeitRules:
    details = read_reasons(t, "reasons", "forfeit")
    return ForfeitRules(tuple(r.code for r in details), details)


def _results(t: Table) -> tuple[Reason, ...]:
    return read_reasons(t, "reasons", "result")


def _move_limit(t: Table) -> MoveLimit:
    moves = t.integer("moves", low=1, high=500)
    checks: int | None
    if t.has("claimant_checks_counted") and t.data["claimant_checks_counted"] == "all":
        t.used.add("claimant_checks_counted")
        checks = None
    else:
        checks = t.integer("claimant_checks_counted", high=500)
    return MoveLimit(moves, checks)


def _standings(t: Table) -> Standings:
    def criterion(key: str, value: Any) -> Tiebreak:
        if not isinstance(value, str):
            raise t.error(key, f"wrong type: a string expected, got {toml_type(value)}")
        return enum_value(t, key, value, Tiebreak)

    order = t.array("order", criterion, "criteria")
    if not order or order[0] is not Tiebreak.POINTS:
        raise t.error("order", "must start with 'points'")
    if len(set(order)) != len(order):
        raise t.error("order", "a criterion is listed twice")
    if Tiebreak.DROP_ROUNDS in order[:-1]:
        raise t.error("order", "'drop_rounds' can only be the last criterion")
    return Standings(order)


def _date(t: Table, key: str, value: Any) -> datetime.date:
    if type(value) is not datetime.date:
        raise t.error(key, f"wrong type: a date (2016-12-10) expected, got {toml_type(value)}")
    return value


def _tournament(t: Table) -> Tournament:
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


def _knockout(t: Table) -> Knockout:
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
        double_forfeit=_double_forfeit(t) if t.has("double_forfeit") else "higher_seed",
    )


def _double_forfeit(t: Table) -> str:
    value = t.text("double_forfeit")
    if value not in DOUBLE_FORFEIT_RULES:
        allowed = ", ".join(repr(v) for v in DOUBLE_FORFEIT_RULES)
        raise t.error("double_forfeit", f"{value!r} is not one of {allowed}")
    return value


def _tiebreak_game(t: Table) -> TiebreakGame:
    winner = t.text("draw_winner")
    return TiebreakGame(
        time_control_text=_time_control(t, "time_control"),
        draw_winner=None if winner == "none" else enum_value(t, "draw_winner", winner, Side),
        colour_choice=t.text("colour_choice"),
    )
