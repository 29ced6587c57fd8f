"""The records of a FIDE Tournament Report File, one class per kind of line (``001`` players:
``trf_player``).

Each record reads itself from a line (``parse``) and writes itself back (``line()``) in the fixed
columns of the FIDE description (TRF-2016, TRF-2026) and the pairing engines' extensions
(bbpPairings' ``BB?`` lines, JaVaFo's ``XXR``/``XXS``). Columns count characters, not bytes, so a
Chinese name takes one column per character. The file as a whole is ``clock_service.trf.document``.
"""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal, InvalidOperation

from clock_service.errors import ClockServiceError

__all__ = [
    "BYE_KINDS",
    "RESULT_CODES",
    "ByeRecord",
    "PointsRecord",
    "ProhibitedRecord",
    "RawRecord",
    "RoundsRecord",
    "ScoringRecord",
    "TrfError",
    "XxsRecord",
]

MAX_START_RANK = 9999  # four columns
MAX_ROUNDS = 99  # three columns in 240/260 records; far beyond any Swiss
RESULT_CODES = "+-WDL1=0HFUZ"  # the round result column (letters case-insensitive)
BYE_KINDS = "FHZ"  # a 240 record: full-, half-, zero-point bye
SCORING_CODES = "WDLAPX"  # a 162 record (TRF-2026)
BB_CODES = ("BBW", "BBD", "BBL", "BBZ", "BBF", "BBU")  # bbpPairings' point values
XXS_CODES = ("WW", "BW", "WD", "BD", "WL", "BL", "ZPB", "HPB", "FPB", "PAB", "FW", "FL", "W", "D")
_DATE = re.compile(r"^\d{4}/\d{2}/\d{2}$")
_BIRTH = re.compile(r"^\d{4}(/\d{2}/\d{2})?$")
_POINTS = re.compile(r"^\d{1,3}(\.\d)?$")


class TrfError(ClockServiceError, ValueError):
    """A TRF (or pairs list) that cannot be read or written: the line, the columns, the reason."""

    def __init__(
        self, reason: str, *, line: int | None = None, columns: tuple[int, int] | None = None
    ) -> None:
        self.reason = reason
        self.line = line
        self.columns = columns
        where = []
        if line is not None:
            where.append(f"line {line}")
        if columns is not None:
            where.append(f"columns {columns[0]}-{columns[1]}")
        super().__init__(f"{', '.join(where)}: {reason}" if where else reason)


def cols(text: str, a: int, b: int) -> str:
    """Columns ``a..b`` (1-based, inclusive) of a line, blank-padded past its end."""
    return text[a - 1 : b].ljust(b - a + 1)


def _int(text: str, what: str, low: int, high: int, at: tuple[int, int], line: int) -> int:
    s = text.strip()
    if not s.isdigit() or not s.isascii() or not low <= int(s) <= high:
        raise TrfError(
            f"{what} {text.strip()!r} is not a number {low}..{high}", line=line, columns=at
        )
    return int(s)


def _points(text: str, what: str, at: tuple[int, int], line: int) -> Decimal:
    s = text.strip()
    if not _POINTS.match(s):
        raise TrfError(f"{what} {s!r} is not points like 11.5", line=line, columns=at)
    return Decimal(s)


def fmt_points(value: Decimal) -> str:
    return f"{value:.1f}"


def _bare(value: Decimal) -> str:
    return f"{value:.0f}" if value == value.to_integral_value() else fmt_points(value)


def _check_points(value: object, what: str) -> None:
    if (
        not isinstance(value, Decimal)
        or not 0 <= value <= Decimal("999.9")
        or value % Decimal("0.1")
    ):
        raise TrfError(f"{what} {value!r} is not points 0.0..999.9 in tenths")


@dataclasses.dataclass(frozen=True)
class RawRecord:
    """A line kept as written: comments (``###``), blank lines, header data (``012`` name,
    ``022`` city …) and records this reader does not interpret (``250``, ``299``, ``DAT`` …)."""

    text: str

    @property
    def code(self) -> str:
        return self.text[:3]

    @property
    def value(self) -> str:
        return self.text[4:].strip()

    def line(self) -> str:
        return self.text


@dataclasses.dataclass(frozen=True)
class ScoringRecord:
    """``162``: the points of each result code (W win, D draw, L loss, A absence, P pairing-
    allocated bye, X unknown); code at column 6, 15, 24 …, points in the next four columns."""

    points: tuple[tuple[str, Decimal], ...]

    def __post_init__(self) -> None:
        for code, value in self.points:
            if code not in SCORING_CODES:
                raise TrfError(f"162: result code {code!r} is not one of {SCORING_CODES}")
            _check_points(value, f"162 {code}")

    @classmethod
    def parse(cls, text: str, n: int) -> ScoringRecord:
        out = []
        for start in range(6, max(len(text), 6) + 1, 9):
            chunk = cols(text, start, start + 8)
            if not chunk.strip() and start > 6:
                continue
            code = chunk[0]
            if code.upper() not in SCORING_CODES:
                raise TrfError(
                    f"result code {code!r} is not one of {SCORING_CODES}",
                    line=n,
                    columns=(start, start),
                )
            at = (start + 1, start + 4)
            out.append((code.upper(), _points(chunk[1:5], f"points of {code}", at, n)))
            if chunk[5:].strip():
                raise TrfError("must be blank", line=n, columns=(start + 5, start + 8))
        return cls(tuple(out))

    def line(self) -> str:
        text = "162"
        for i, (code, value) in enumerate(self.points):
            text = text.ljust(5 + 9 * i) + f"{code}{fmt_points(value):>4}"
        return text


@dataclasses.dataclass(frozen=True)
class PointsRecord:
    """bbpPairings' ``BBW``/``BBD``/``BBL``/``BBZ``/``BBF``/``BBU``: points for a win, draw,
    loss, zero-point bye, forfeit loss, pairing-allocated bye, in columns 5-8."""

    code: str
    value: Decimal

    def __post_init__(self) -> None:
        if self.code not in BB_CODES:
            raise TrfError(f"{self.code!r} is not one of {', '.join(BB_CODES)}")
        _check_points(self.value, self.code)

    @classmethod
    def parse(cls, text: str, n: int) -> PointsRecord:
        if text[8:].strip():
            raise TrfError("must be blank after the points", line=n, columns=(9, len(text)))
        return cls(text[:3], _points(cols(text, 5, 8), f"{text[:3]} points", (5, 8), n))

    def line(self) -> str:
        return f"{self.code} {fmt_points(self.value):>4}"


@dataclasses.dataclass(frozen=True)
class RoundsRecord:
    """``142`` (TRF-2026) or JaVaFo's ``XXR``: the number of rounds of the tournament."""

    code: str
    rounds: int

    def __post_init__(self) -> None:
        if type(self.rounds) is not int or not 1 <= self.rounds <= MAX_ROUNDS:
            raise TrfError(f"{self.code}: number of rounds {self.rounds!r} is not 1..{MAX_ROUNDS}")

    @classmethod
    def parse(cls, text: str, n: int) -> RoundsRecord:
        value = text[4:].strip()
        at = (5, max(len(text), 5))
        rounds = _int(value, "number of rounds", 1, MAX_ROUNDS, at, n)
        return cls(text[:3], rounds)

    def line(self) -> str:
        return f"{self.code} {self.rounds}"


@dataclasses.dataclass(frozen=True)
class XxsRecord:
    """JaVaFo's ``XXS CODE=points …``: WW/BW win with white/black, WD/BD, WL/BL, ZPB/HPB/FPB
    zero/half/full-point bye, PAB pairing-allocated bye, FW/FL forfeit win/loss, W, D."""

    points: tuple[tuple[str, Decimal], ...]

    def __post_init__(self) -> None:
        for code, value in self.points:
            if code not in XXS_CODES:
                raise TrfError(f"XXS: {code!r} is not one of {', '.join(XXS_CODES)}")
            _check_points(value, f"XXS {code}")

    @classmethod
    def parse(cls, text: str, n: int) -> XxsRecord:
        out = []
        for m in re.finditer(r"\S+", text[4:]):
            a, b = m.start() + 5, m.end() + 4
            code, eq, value = m.group().partition("=")
            if not eq or code.upper() not in XXS_CODES:
                raise TrfError(
                    f"{m.group()!r} is not CODE=points with a code of {', '.join(XXS_CODES)}",
                    line=n,
                    columns=(a, b),
                )
            try:
                points = Decimal(value)
            except InvalidOperation:
                points = Decimal(-1)
            if not points.is_finite() or not 0 <= points <= 999:
                raise TrfError(
                    f"{value!r} is not CODE=points (points 0..999)", line=n, columns=(a, b)
                )
            out.append((code.upper(), points))
        return cls(tuple(out))

    def line(self) -> str:
        # JaVaFo's manual writes whole points bare ("XXS PAB=3 D=1 W=3"); halves as 0.5
        return "XXS " + " ".join(f"{c}={_bare(v)}" for c, v in self.points)


def _ids(text: str, first: int, n: int, what: str) -> tuple[int, ...]:
    """Start ranks in four columns each, one blank between, from column ``first``."""
    out = []
    for start in range(first, len(text) + 1, 5):
        chunk = cols(text, start, start + 3)
        if start > 1 and text[start - 2 : start - 1].strip():
            raise TrfError("must be blank", line=n, columns=(start - 1, start - 1))
        out.append(_int(chunk, what, 1, MAX_START_RANK, (start, start + 3), n))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class ByeRecord:
    """``240``: the players who take a bye of ``kind`` (F full, H half, Z zero point: a known
    absence) in ``round`` — how a round not paired yet says who will not play."""

    kind: str
    round: int
    players: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.kind not in BYE_KINDS:
            raise TrfError(f"240: type of bye {self.kind!r} is not F, H or Z")
        if type(self.round) is not int or not 1 <= self.round <= MAX_ROUNDS:
            raise TrfError(f"240: round {self.round!r} is not 1..{MAX_ROUNDS}")
        if not self.players:
            raise TrfError("240: no player")

    @classmethod
    def parse(cls, text: str, n: int) -> ByeRecord:
        kind = cols(text, 5, 5)
        if kind.upper() not in BYE_KINDS or cols(text, 6, 6) != " ":
            raise TrfError(f"type of bye {kind!r} is not F, H or Z", line=n, columns=(5, 5))
        rnd = _int(cols(text, 7, 9), "round", 1, MAX_ROUNDS, (7, 9), n)
        if len(text) < 11:
            raise TrfError("no player after the round", line=n, columns=(11, 14))
        return cls(kind.upper(), rnd, _ids(text, 11, n, "player"))

    def line(self) -> str:
        return f"240 {self.kind} {self.round:03d}" + "".join(f" {p:04d}" for p in self.players)


@dataclasses.dataclass(frozen=True)
class ProhibitedRecord:
    """``260``: players who must not be paired together in rounds ``first_round..last_round``."""

    first_round: int
    last_round: int
    players: tuple[int, ...]

    def __post_init__(self) -> None:
        if not 1 <= self.first_round <= self.last_round <= MAX_ROUNDS:
            raise TrfError(f"260: rounds {self.first_round}..{self.last_round} are not in order")
        if len(self.players) < 2:
            raise TrfError("260: at least two players")

    @classmethod
    def parse(cls, text: str, n: int) -> ProhibitedRecord:
        first = _int(cols(text, 5, 7), "first round", 1, MAX_ROUNDS, (5, 7), n)
        last = _int(cols(text, 9, 11), "last round", 1, MAX_ROUNDS, (9, 11), n)
        if last < first:
            raise TrfError(f"last round {last} before first round {first}", line=n, columns=(5, 11))
        players = _ids(text, 13, n, "player") if len(text) >= 13 else ()
        if len(players) < 2:
            raise TrfError("at least two players are needed", line=n, columns=(13, 16))
        return cls(first, last, players)

    def line(self) -> str:
        ids = "".join(f" {p:04d}" for p in self.players)
        return f"260 {self.first_round:03d} {self.last_round:03d}{ids}"


def check_date(text: str, n: int) -> None:
    """``042``/``052``: YYYY/MM/DD (blank allowed)."""
    value = text[4:].strip()
    if value and not _DATE.match(value):
        raise TrfError(f"date {value!r} is not YYYY/MM/DD", line=n, columns=(5, max(len(text), 5)))


def check_colour(text: str, n: int) -> None:
    """``152``: the initial colour, W or B."""
    value = text[4:].strip()
    if value.upper() not in ("W", "B"):
        raise TrfError(
            f"initial colour {value!r} is not W or B", line=n, columns=(5, max(len(text), 5))
        )
