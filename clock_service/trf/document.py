"""FIDE's Tournament Report File (TRF-2016, TRF-2026) with the pairing engines' point-system
extensions: read (``Trf.parse``), query, check, write (``str(trf)``).

Pure: text in, text out. A file is the ordered tuple of its records (``trf_records``); lines this
reader does not interpret are kept as written, so a file read and written back is the same text
as long as it was written canonically (trailing blanks trimmed, numbers in their columns). Every
malformed line is a ``TrfError`` naming the line, the columns and the reason. The round-by-round
workflow with a pairing program and the column tables are in ``docs/pairing.md``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping
from decimal import Decimal
from types import MappingProxyType

from clock_service.text_rule import control_at
from clock_service.trf.player import PlayerRecord, RoundCell
from clock_service.trf.records import (
    BB_CODES,
    MAX_START_RANK,
    ByeRecord,
    PointsRecord,
    ProhibitedRecord,
    RawRecord,
    RoundsRecord,
    ScoringRecord,
    TrfError,
    XxsRecord,
    check_colour,
    check_date,
    fmt_points,
)

__all__ = ["Record", "Trf", "TrfError", "default_scoring"]

Record = (
    RawRecord
    | ScoringRecord
    | PointsRecord
    | RoundsRecord
    | XxsRecord
    | PlayerRecord
    | ByeRecord
    | ProhibitedRecord
)

MAX_LINE = 1200  # characters: a 001 line of 99 rounds is 1081
MAX_LINES = 20000  # 9999 players and their records, with room for comments

# The result a code scores, as a 162 scoring code (W win, D draw, L loss, A absence, P PAB).
_SCORES_AS = {
    "1": "W",
    "+": "W",
    "W": "W",
    "F": "W",
    "=": "D",
    "D": "D",
    "H": "D",
    "0": "L",
    "L": "L",
    "-": "A",
    "Z": "A",
    "U": "P",
}
# The engines' point lines as 162 codes (bbpPairings' BB?, JaVaFo's XXS; later ones win).
_BB_AS = (("BBW", "W"), ("BBD", "D"), ("BBL", "L"), ("BBF", "A"), ("BBU", "P"))
_XXS_AS = (("W", "W"), ("WW", "W"), ("D", "D"), ("WD", "D"), ("WL", "L"), ("FL", "A"), ("PAB", "P"))
# Results that belong together on the two lines of one game.
_MIRROR = {"1": "0", "0": "1", "=": "=", "+": "-", "-": "+-", "W": "L", "L": "W", "D": "D", "": ""}


def default_scoring() -> dict[str, Decimal]:
    """FIDE's defaults: win 1, draw ½, loss and absence 0, PAB as a win, unknown as a draw."""
    w, d = Decimal("1.0"), Decimal("0.5")
    return {"W": w, "D": d, "L": Decimal(0), "A": Decimal(0), "P": w, "X": d}


def _record(text: str, n: int) -> Record:
    if not text.strip() or text.startswith("###"):
        return RawRecord(text)
    code = text[:3]
    if len(code) < 3 or not code.isalnum() or not code.isascii():
        raise TrfError(
            f"not a record: a TRF line starts with a 3-character code, not {code!r}",
            line=n,
            columns=(1, 3),
        )
    if len(text) > 3 and text[3] != " ":
        raise TrfError("column 4 must be blank after the record code", line=n, columns=(4, 4))
    if code == "001":
        return PlayerRecord.parse(text, n)
    if code == "162":
        return ScoringRecord.parse(text, n)
    if code in BB_CODES:
        return PointsRecord.parse(text, n)
    if code in ("142", "XXR"):
        return RoundsRecord.parse(text, n)
    if code == "XXS":
        return XxsRecord.parse(text, n)
    if code == "240":
        return ByeRecord.parse(text, n)
    if code == "260":
        return ProhibitedRecord.parse(text, n)
    if code in ("042", "052"):
        check_date(text, n)
    elif code == "152":
        check_colour(text, n)
    return RawRecord(text)


def _lines(text: str) -> tuple[list[str], str]:
    newline = "\r\n" if "\r\n" in text else "\r" if "\r" in text else "\n"
    lines = text.split(newline)
    if lines and lines[-1] == "":
        lines.pop()
    return lines, newline


@dataclasses.dataclass(frozen=True)
class Trf:
    """A tournament report file: its records in file order and its line end.

    The writer ends every line with ``newline``: CR LF by default — the FIDE description asks
    for a CR as the last character of each line, and the pairing engines read lines up to LF.
    """

    records: tuple[Record, ...]
    newline: str = "\r\n"

    def __post_init__(self) -> None:
        if self.newline not in ("\r\n", "\n", "\r"):
            raise TrfError(f"newline {self.newline!r} is not CR LF, LF or CR")
        seen: dict[int, PlayerRecord] = {}
        for p in self.players:
            if p.start_rank in seen:
                first = seen[p.start_rank].line_no
                raise TrfError(
                    f"start rank {p.start_rank} is already used (line {first})",
                    line=p.line_no or None,
                    columns=(5, 8),
                )
            seen[p.start_rank] = p
        for p in self.players:
            for r, cell in enumerate(p.rounds, 1):
                if cell.opponent and cell.opponent not in seen:
                    a, _ = PlayerRecord.cell_columns(r)
                    raise TrfError(
                        f"round {r}: opponent: no player {cell.opponent} in the file",
                        line=p.line_no or None,
                        columns=(a, a + 3),
                    )
        for n, rec in self._numbered():
            if isinstance(rec, ByeRecord | ProhibitedRecord):
                first = 11 if isinstance(rec, ByeRecord) else 13
                for i, who in enumerate(rec.players):
                    if who not in seen:
                        a = first + 5 * i
                        raise TrfError(
                            f"player: no player {who} in the file", line=n, columns=(a, a + 3)
                        )

    def _numbered(self) -> Iterator[tuple[int, Record]]:
        return enumerate(self.records, 1)

    # -- reading and writing -----------------------------------------------------------------
    @classmethod
    def parse(cls, data: str | bytes) -> Trf:
        """Read a TRF (UTF-8; LF, CR LF or CR line ends). Raises ``TrfError``."""
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise TrfError(f"not UTF-8 (byte {exc.start}); save the file as UTF-8") from None
        data = data.removeprefix("\ufeff")
        if not data.strip():
            raise TrfError("empty file", line=1)
        lines, newline = _lines(data)
        if len(lines) > MAX_LINES:
            raise TrfError(f"more than {MAX_LINES} lines", line=MAX_LINES + 1)
        records = []
        for n, text in enumerate(lines, 1):
            if len(text) > MAX_LINE:
                raise TrfError(
                    f"longer than {MAX_LINE} characters", line=n, columns=(MAX_LINE + 1, len(text))
                )
            if "\t" in text:
                c = text.index("\t") + 1
                raise TrfError(
                    "a tab: TRF fields are in fixed columns of blanks", line=n, columns=(c, c)
                )
            problem = _refused_text(text, n)
            if problem is not None:
                raise problem
            records.append(_record(text, n))
        trf = cls(tuple(records), newline)
        if not trf.players:
            raise TrfError("no 001 player line in the file")
        return trf

    def __str__(self) -> str:
        return "".join(rec.line() + self.newline for rec in self.records)

    # -- the tournament ------------------------------------------------------------------------
    def value(self, code: str) -> str:
        """The text (columns 5..) of the first line kept as written with this code, e.g.
        ``022`` the city; ``""`` if there is none."""
        for rec in self.records:
            if isinstance(rec, RawRecord) and rec.code == code:
                return rec.value
        return ""

    @property
    def name(self) -> str:
        return self.value("012")

    @property
    def initial_colour(self) -> str | None:
        value = self.value("152")
        return value.upper() if value else None

    @property
    def total_rounds(self) -> int | None:
        """``142`` (TRF-2026), else JaVaFo's ``XXR``."""
        found = {r.code: r.rounds for r in self.records if isinstance(r, RoundsRecord)}
        return found.get("142", found.get("XXR"))

    @functools.cached_property  # read once: a file is immutable (frozen records)
    def scoring(self) -> Mapping[str, Decimal]:
        """Points per 162 code (W D L A P X): from ``162``, else bbpPairings' ``BB?``, else
        JaVaFo's ``XXS``, else FIDE's defaults."""
        out = default_scoring()
        std: dict[str, Decimal] = {}
        bb: dict[str, Decimal] = {}
        xxs: dict[str, Decimal] = {}
        for r in self.records:
            if isinstance(r, ScoringRecord):
                std.update(r.points)
            elif isinstance(r, PointsRecord):
                bb[r.code] = r.value
            elif isinstance(r, XxsRecord):
                xxs.update(r.points)
        if std:
            declared = std
        elif bb:
            declared = {key: bb[code] for code, key in _BB_AS if code in bb}
        else:
            declared = {key: xxs[code] for code, key in _XXS_AS if code in xxs}
        out.update(declared)
        # TRF-2026: a pairing-allocated bye scores as a win, an unknown result as a draw,
        # unless declared.
        out["P"] = declared.get("P", out["W"])
        out["X"] = declared.get("X", out["D"])
        return MappingProxyType(out)

    @functools.cached_property
    def players(self) -> tuple[PlayerRecord, ...]:
        return tuple(r for r in self.records if isinstance(r, PlayerRecord))

    @functools.cached_property
    def _by_id(self) -> dict[int, PlayerRecord]:
        return {p.start_rank: p for p in self.players}

    def player(self, start_rank: int) -> PlayerRecord:
        """The player with this start rank; KeyError if none."""
        return self._by_id[start_rank]

    @property
    def byes(self) -> tuple[ByeRecord, ...]:
        return tuple(r for r in self.records if isinstance(r, ByeRecord))

    @property
    def prohibited(self) -> tuple[ProhibitedRecord, ...]:
        return tuple(r for r in self.records if isinstance(r, ProhibitedRecord))

    # -- rounds --------------------------------------------------------------------------------
    def _cells(self, round_no: int) -> list[tuple[PlayerRecord, RoundCell]]:
        return [(p, p.rounds[round_no - 1]) for p in self.players if len(p.rounds) >= round_no]

    def paired_round(self) -> int | None:
        """The round paired but not played yet (a pairing program's answer): the first round
        with a game whose result is blank; None when every paired game has a result."""
        width = max((len(p.rounds) for p in self.players), default=0)
        for r in range(1, width + 1):
            if any(c.opponent and not c.result for _, c in self._cells(r)):
                return r
        return None

    @property
    def rounds_played(self) -> int:
        """The rounds with results: before the paired round if there is one; else up to the
        last column where someone was paired (an opponent, ``U`` or ``+``) — as bbpPairings
        counts them, so that a last column of only ``Z``/``H``/``F``/``-`` cells (known
        byes and absences) is the next round's, not a round played."""
        paired = self.paired_round()
        if paired is not None:
            return paired - 1
        width = max((len(p.rounds) for p in self.players), default=0)
        for r in range(width, 0, -1):
            if any(c.opponent or c.code in ("U", "+") for _, c in self._cells(r)):
                return r
        return 0

    def pairings(self, round_no: int) -> list[tuple[int, int]]:
        """(white, black) start ranks of the round's games, in board order: the higher score
        first, then the higher-ranked (smaller start rank) pair."""
        games = []
        for p, c in self._cells(round_no):
            if c.opponent and c.colour.lower() == "w":
                games.append((p.start_rank, c.opponent))
            elif c.opponent and c.colour.lower() not in ("w", "b") and p.start_rank < c.opponent:
                games.append((p.start_rank, c.opponent))  # colour not given: smaller id first
        points = {p.start_rank: self.computed_points(p, upto=round_no - 1) for p in self.players}
        return sorted(
            games,
            key=lambda g: (
                -max(points[g[0]], points[g[1]]),
                -min(points[g[0]], points[g[1]]),
                min(g),
            ),
        )

    def absent(self, round_no: int) -> dict[int, str]:
        """start rank -> bye code (F, H, Z, U) of the players without a game in the round, from
        their ``001`` cells and the ``240`` records."""
        out: dict[int, str] = {}
        for p, c in self._cells(round_no):
            if not c.opponent and c.code:
                out[p.start_rank] = c.code
        for b in self.byes:
            if b.round == round_no:
                out.update(dict.fromkeys(b.players, b.kind))
        return out

    def computed_points(self, player: PlayerRecord, *, upto: int | None = None) -> Decimal:
        """The player's points from his results under this file's scoring (rounds 1..upto)."""
        scoring = self.scoring
        total = Decimal(0)
        for cell in player.rounds[:upto]:
            code = cell.code
            if code:
                total += scoring[_SCORES_AS[code]]
        return total

    def check(self) -> None:
        """Raise ``TrfError`` unless every player's points follow from his results and both
        lines of every game agree (opponent, colours, results)."""
        by_id = {p.start_rank: p for p in self.players}
        played = self.rounds_played
        for p in self.players:
            got = self.computed_points(p, upto=played)
            ahead = self.computed_points(p, upto=played + 1)
            # A bye already known for the next round may be counted or not (bbpPairings
            # accepts both; JaVaFo's manual asks for it to be counted; so does our writer).
            if p.points not in (got, ahead):
                raise TrfError(
                    f"player {p.start_rank}: points {fmt_points(p.points)} but the results give "
                    f"{fmt_points(got)}",
                    line=p.line_no or None,
                    columns=(81, 84),
                )
            for r, cell in enumerate(p.rounds, 1):
                if cell.opponent:
                    _check_game(p, r, cell, by_id[cell.opponent])


def _check_game(p: PlayerRecord, r: int, cell: RoundCell, opp: PlayerRecord) -> None:
    other = opp.rounds[r - 1] if len(opp.rounds) >= r else RoundCell(0, "", "")
    colours = {cell.colour.lower(), other.colour.lower()}
    ok = (
        other.opponent == p.start_rank
        and other.result.upper() in _MIRROR[cell.result.upper()]
        and (colours == {"w", "b"} or colours <= {"-", ""})
    )
    if not ok:
        raise TrfError(
            f"round {r}: player {p.start_rank} has {cell.text()!r} but player {opp.start_rank} "
            f"has {other.text()!r}",
            line=p.line_no or None,
            columns=PlayerRecord.cell_columns(r),
        )


assert MAX_START_RANK == 9999


# Where each field of a player line (001) is, 1-based columns (the FIDE TRF description).
_PLAYER_FIELDS = (
    (5, 8, "start rank"),
    (10, 10, "sex"),
    (11, 13, "title"),
    (15, 47, "name"),
    (49, 52, "rating"),
    (54, 56, "federation"),
    (58, 68, "FIDE id"),
    (70, 79, "birth date"),
    (81, 84, "points"),
    (86, 89, "rank"),
)


def _refused_text(text: str, line: int) -> TrfError | None:
    """A line with a control or format character (clock_service.text_rule), naming the
    field of a player line it is in, else None."""
    at = control_at(text)
    if at is None:
        return None
    field = f"record {text[:3]!r}"
    if text.startswith("001"):
        field = next(
            (f"player {name}" for lo, hi, name in _PLAYER_FIELDS if lo <= at <= hi),
            "player line (rounds)",
        )
    char = f"U+{ord(text[at - 1]):04X}"
    return TrfError(
        f"{field}: control character {char}; names are plain text", line=line, columns=(at, at)
    )
