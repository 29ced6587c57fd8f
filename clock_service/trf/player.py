"""The ``001`` line of a TRF: a player, his points and rank, and one 10-column block per round
(opponent, colour, result). Columns count characters: a Chinese name takes one per character."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from clock_service.text_rule import text_problem
from clock_service.trf.records import (
    _BIRTH,
    MAX_ROUNDS,
    MAX_START_RANK,
    RESULT_CODES,
    TrfError,
    _check_points,
    _int,
    _points,
    cols,
    fmt_points,
)

__all__ = ["FIRST_ROUND_COLUMN", "PlayerRecord", "RoundCell"]


@dataclasses.dataclass(frozen=True)
class RoundCell:
    """One round of a ``001`` line: the opponent's start rank (0: none — bye, absent, not
    paired), the colour (``w``/``b``/``-``; ``""`` written blank) and the result (one of
    ``RESULT_CODES``; ``""`` written blank: not played yet, or without an opponent ≡ ``Z``)."""

    opponent: int
    colour: str
    result: str

    def __post_init__(self) -> None:
        if type(self.opponent) is not int or not 0 <= self.opponent <= MAX_START_RANK:
            raise TrfError(f"opponent {self.opponent!r} is not 0..{MAX_START_RANK}")
        if self.colour.lower() not in ("w", "b", "-", ""):
            raise TrfError(f"colour {self.colour!r} is not w, b or -")
        if self.result and (len(self.result) != 1 or self.result.upper() not in RESULT_CODES):
            raise TrfError(f"result {self.result!r} is not one of {RESULT_CODES} or blank")

    @property
    def code(self) -> str:
        """The result code, letters upper-case; ``""`` not played yet (``Z`` with no opponent)."""
        if not self.result and not self.opponent:
            return "Z"
        return self.result.upper()

    def text(self) -> str:
        opp = "0000" if not self.opponent else f"{self.opponent:>4}"
        return f"{opp} {self.colour or ' '} {self.result or ' '}"


# The static columns of a 001 line: (first, last, field)
_PLAYER_FIELDS = (
    (5, 8, "start rank"),
    (10, 10, "sex"),
    (11, 13, "title"),
    (15, 47, "name"),
    (49, 52, "rating"),
    (54, 56, "federation"),
    (58, 68, "FIDE number"),
    (70, 79, "birth date"),
    (81, 84, "points"),
    (86, 89, "rank"),
)
_PLAYER_BLANKS = (4, 9, 14, 48, 53, 57, 69, 80, 85, 90, 91)
FIRST_ROUND_COLUMN = 92


@dataclasses.dataclass(frozen=True)
class PlayerRecord:
    """A ``001`` line: the player (the start rank is his id; the name is only a label, two
    players may share it), his points and rank, and one ``RoundCell`` per round."""

    start_rank: int
    name: str
    points: Decimal = Decimal(0)
    rank: int | None = None
    rounds: tuple[RoundCell, ...] = ()
    sex: str = ""
    title: str = ""
    rating: int | None = None
    federation: str = ""
    fide_id: str = ""
    birth: str = ""
    line_no: int = dataclasses.field(default=0, compare=False)  # where it was read; 0: built

    def __post_init__(self) -> None:
        where = f"player {self.start_rank!r}"
        if type(self.start_rank) is not int or not 1 <= self.start_rank <= MAX_START_RANK:
            raise TrfError(f"{where}: start rank is not 1..{MAX_START_RANK}")
        if (
            not isinstance(self.name, str)
            or len(self.name) > 33
            or "\r" in self.name
            or "\n" in self.name
        ):
            raise TrfError(f"{where}: name {self.name!r} is not a line of at most 33 characters")
        problem = text_problem(self.name)
        if problem is not None:
            raise TrfError(f"{where}: name: {problem}; names are plain text")
        _check_points(self.points, f"{where}: points")
        if self.rank is not None and (
            type(self.rank) is not int or not 1 <= self.rank <= MAX_START_RANK
        ):
            raise TrfError(f"{where}: rank {self.rank!r} is not 1..{MAX_START_RANK}")
        if self.rating is not None and (
            type(self.rating) is not int or not 0 <= self.rating <= 9999
        ):
            raise TrfError(f"{where}: rating {self.rating!r} is not 0..9999")
        if self.sex.lower() not in ("", "m", "w"):
            raise TrfError(f"{where}: sex {self.sex!r} is not m, w or blank")
        for label, value, width in (("title", self.title, 3), ("federation", self.federation, 3)):
            if len(value) > width or " " in value:
                raise TrfError(f"{where}: {label} {value!r} is longer than {width} or has spaces")
        if len(self.fide_id) > 11 or (self.fide_id and not self.fide_id.isdigit()):
            raise TrfError(f"{where}: FIDE number {self.fide_id!r} is not up to 11 digits")
        if self.birth and not _BIRTH.match(self.birth):
            raise TrfError(f"{where}: birth date {self.birth!r} is not YYYY/MM/DD")
        if len(self.rounds) > MAX_ROUNDS:
            raise TrfError(f"{where}: more than {MAX_ROUNDS} rounds")

    @staticmethod
    def cell_columns(round_no: int) -> tuple[int, int]:
        start = FIRST_ROUND_COLUMN + 10 * (round_no - 1)
        return start, start + 7

    @classmethod
    def parse(cls, text: str, n: int) -> PlayerRecord:
        for c in _PLAYER_BLANKS:
            if cols(text, c, c) != " ":
                raise TrfError(
                    f"column {c} must be blank (a field too long or shifted?)",
                    line=n,
                    columns=(c, c),
                )
        f = {name: cols(text, a, b) for a, b, name in _PLAYER_FIELDS}
        at = {name: (a, b) for a, b, name in _PLAYER_FIELDS}
        start = _int(f["start rank"], "start rank", 1, MAX_START_RANK, at["start rank"], n)
        if f["sex"].lower() not in ("m", "w", " "):
            raise TrfError(f"sex {f['sex']!r} is not m, w or blank", line=n, columns=at["sex"])
        rating = None
        if f["rating"].strip():
            rating = _int(f["rating"], "rating", 0, 9999, at["rating"], n)
        fide_id = f["FIDE number"].strip()
        if fide_id and not (fide_id.isdigit() and fide_id.isascii()):
            raise TrfError(
                f"FIDE number {fide_id!r} is not digits", line=n, columns=at["FIDE number"]
            )
        birth = f["birth date"].strip()
        if birth and not _BIRTH.match(birth):
            raise TrfError(
                f"birth date {birth!r} is not YYYY/MM/DD", line=n, columns=at["birth date"]
            )
        points = Decimal(0)
        if f["points"].strip():
            points = _points(f["points"], "points", at["points"], n)
        rank = None
        if f["rank"].strip():
            rank = _int(f["rank"], "rank", 1, MAX_START_RANK, at["rank"], n)
        rounds = []
        for r in range(1, (len(text) - FIRST_ROUND_COLUMN) // 10 + 2):
            rounds.append(_cell(text, r, n))
        return cls(
            start_rank=start,
            name=f["name"].strip(),
            points=points,
            rank=rank,
            rounds=tuple(rounds),
            sex=f["sex"].strip(),
            title=f["title"].strip(),
            rating=rating,
            federation=f["federation"].strip(),
            fide_id=fide_id,
            birth=birth,
            line_no=n,
        )

    def line(self) -> str:
        rating = "" if self.rating is None else str(self.rating)
        rank = "" if self.rank is None else str(self.rank)
        text = (
            f"001 {self.start_rank:>4} {self.sex:1}{self.title:>3} {self.name:<33} {rating:>4} "
            f"{self.federation:<3} {self.fide_id:>11} {self.birth:<10} "
            f"{fmt_points(self.points):>4} {rank:>4}"
        )
        return (text + "".join(f"  {c.text()}" for c in self.rounds)).rstrip()


def _cell(text: str, r: int, n: int) -> RoundCell:
    a, _ = PlayerRecord.cell_columns(r)
    for c in (a + 4, a + 6, a + 8, a + 9):
        if cols(text, c, c) != " ":
            raise TrfError(
                f"round {r}: column {c} must be blank (shifted?)", line=n, columns=(c, c)
            )
    opp_text = cols(text, a, a + 3)
    opponent = 0
    if opp_text.strip():
        opponent = _int(opp_text, f"round {r} opponent", 0, MAX_START_RANK, (a, a + 3), n)
    colour = cols(text, a + 5, a + 5).strip()
    if colour.lower() not in ("w", "b", "-", ""):
        raise TrfError(
            f"round {r}: colour {colour!r} is not w, b or -", line=n, columns=(a + 5, a + 5)
        )
    result = cols(text, a + 7, a + 7).strip()
    if result and result.upper() not in RESULT_CODES:
        raise TrfError(
            f"round {r}: result {result!r} is not one of {RESULT_CODES} or blank",
            line=n,
            columns=(a + 7, a + 7),
        )
    return RoundCell(opponent, colour, result)
