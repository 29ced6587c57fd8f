"""How the pairing engines read a TRF: which engine would refuse which line, and why.

Pure, and deliberately independent of this package's own reader (``document``): it reads the
text as the engines do, from their published parsing rules (``docs/pairing.md``, "What each
engine reads"), so that a file our writer thinks is fine is judged by other rules.

* **bbpPairings** (its TRF-2026 reader and its TRF(bx) lines): columns count code points; a
  ``001`` line is at least 84 long; points (81-84) are one number with at most one decimal;
  round cells at 92 + 10k with lower-case ``w``/``b``; a paired game needs a result; ``162``
  knows ``W D L P`` (``A`` is read by one release and refused by another, ``X`` by none);
  ``BB?`` lines are 8 characters; ``152`` exactly 5; the points must follow from the results
  under the declared point system (a bye already known for the next round may be counted).
* **JaVaFo** 2.2 (its manual): the number of rounds from ``XXR`` (``142`` is not in its
  manual); the point system from ``XXS``, with a strict check of every player's points
  (including a next-round ``H``/``F``); a non-standard system without ``XXS`` is refused
  (inference is deprecated); ``240`` is not read; characters outside the BMP shift columns.
* **Swiss-Manager**: its TRF import is not documented: judged by the TRF-2026 description.

``refusals(text)`` lists them all; ``read(text)`` gives the tournament as an engine sees it.
"""

from __future__ import annotations

import dataclasses
import re

__all__ = ["ENGINES", "EngineCell", "EnginePlayer", "EngineView", "Refusal", "read", "refusals"]

BBP, JAVAFO, SWISS_MANAGER = "bbpPairings", "JaVaFo", "Swiss-Manager"
ENGINES = (BBP, JAVAFO, SWISS_MANAGER)
WINS, DRAWS, LOSSES = "1W+FU", "=DH", "0L-Z "
UNPLAYED = "+-HFUZ "
_DUTCH = ("FIDE_DUTCH", "FIDE_DUTCH_2025", "FIDE_BURSTEIN")
TYPES_192 = {*_DUTCH, *(t + "_BAKU" for t in _DUTCH)}  # the values bbpPairings accepts
XXS_CODES = ("WW", "BW", "WD", "BD", "WL", "BL", "ZPB", "HPB", "FPB", "PAB", "FW", "FL", "W", "D")
_NO_ROUNDS = "The total number of rounds in the tournament must be specified."
_TOO_MANY = "The number of rounds is larger than the reported number of rounds."
_SCORE = re.compile(r"^(\d*)(?:\.(\d))?$")


@dataclasses.dataclass(frozen=True)
class Refusal:
    """``engine`` would refuse the file at ``line`` (1-based; 0: the file as a whole), column
    ``column`` (1-based, counted in characters; 0: the whole line), with ``reason``."""

    engine: str
    line: int
    column: int
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "the file"
        if self.column:
            where += f", column {self.column}"
        return f"{self.engine}: {where}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class EngineCell:
    opponent: int  # 0: none
    colour: str  # "w", "b" or ""
    result: str  # upper-cased; " " blank


@dataclasses.dataclass
class EnginePlayer:
    id: int
    points: int  # tenths, as written in 81-84
    rating: int
    cells: list[EngineCell]
    line: int


@dataclasses.dataclass
class EngineView:
    """The tournament as bbpPairings reads it (points in tenths)."""

    players: dict[int, EnginePlayer] = dataclasses.field(default_factory=dict)
    rounds: dict[str, int] = dataclasses.field(default_factory=dict)  # "142" / "XXR" -> n
    initial_colour: str = ""
    bbp_points: dict[str, int] = dataclasses.field(default_factory=dict)
    xxs: dict[str, int] = dataclasses.field(default_factory=dict)
    has_xxs: bool = False
    byes_240: list[tuple[int, int, int, str]] = dataclasses.field(default_factory=list)
    forbidden: list[tuple[int, int, tuple[int, ...], int]] = dataclasses.field(
        default_factory=list
    )  # first round, last round, ids, line
    point_lines: list[tuple[str, str, int, int]] = dataclasses.field(default_factory=list)
    refusals: list[Refusal] = dataclasses.field(default_factory=list)

    @property
    def played(self) -> int:
        """bbpPairings' played rounds: the last column where someone was paired."""
        out = 0
        for p in self.players.values():
            for r, c in enumerate(p.cells, 1):
                if c.opponent or c.result in "U" or (c.result == "+" and not c.opponent):
                    out = max(out, r)
        return out

    def total_rounds(self) -> int | None:
        return self.rounds.get("XXR", self.rounds.get("142"))

    def cell_points(self, c: EngineCell) -> int:
        """bbpPairings' points for a cell (tenths)."""
        pts = self.bbp_points
        if c.result in ("U",) or (c.result == "+" and not c.opponent):
            return pts["P"]
        if c.result in "1W+F":
            return pts["W"]
        if c.result in DRAWS:
            return pts["D"]
        if c.result in "0L":
            return pts["L"]
        if c.result == "-" and c.opponent:
            return pts["F"]
        return pts["Z"]

    def javafo_points(self, c: EngineCell) -> int:
        x = self.xxs
        side = "W" if c.colour == "w" else "B"
        if c.result == "U" or (c.result == "+" and not c.opponent):
            return x["PAB"]
        if c.result in "1W":
            return x[side + "W"]
        if c.result in "=D":
            return x[side + "D"]
        if c.result in "0L":
            return x[side + "L"]
        if c.opponent and c.result in "+-":
            return x["FW"] if c.result == "+" else x["FL"]
        return {"F": x["FPB"], "H": x["HPB"]}.get(c.result, x["ZPB"])


def _tenths(text: str) -> int | None:
    """One number with at most one decimal (bbp's score format), in tenths; None if not."""
    tokens = [t for t in text.split(" ") if t]
    if len(tokens) != 1:
        return None
    m = _SCORE.match(tokens[0])
    if not m or not (m.group(1) or m.group(2)) or not tokens[0].isascii():
        return None
    return int(m.group(1) or 0) * 10 + int(m.group(2) or 0)


def _uint(text: str) -> int | None:
    tokens = [t for t in text.split(" ") if t]
    if len(tokens) != 1 or not tokens[0].isdigit() or not tokens[0].isascii():
        return None
    return int(tokens[0])


def _xxs_points(tokens: list[str]) -> dict[str, int] | None:
    out = {"WW": 10, "BW": 10, "WD": 5, "BD": 5, "WL": 0, "BL": 0, "ZPB": 0, "HPB": 5}
    out.update({"FPB": 10, "PAB": 10, "FW": 10, "FL": 0})
    for tok in tokens:
        code, eq, value = tok.partition("=")
        v = _tenths(value)
        if not eq or code not in XXS_CODES or v is None:
            return None
        targets = {"W": ("WW", "BW", "FW", "FPB"), "D": ("WD", "BD", "HPB")}.get(code, (code,))
        out.update(dict.fromkeys(targets, v))
    return out


class _Reader:
    def __init__(self) -> None:
        self.view = EngineView()
        self.pab_set = False
        self.bad_players = 0  # 001 lines refused: the checks across players would only echo

    def refuse(self, engine: str, n: int, col: int, why: str) -> None:
        self.view.refusals.append(Refusal(engine, n, col, why))

    def invalid(self, n: int, col: int, line: str, why: str = "") -> None:
        self.bad_players += line.startswith("001")
        self.refuse(BBP, n, col, f'Invalid line{f" ({why})" if why else ""} "{line}"')

    # -- lines -------------------------------------------------------------------------------
    def line(self, n: int, line: str) -> None:
        code = line[:3]
        if any(ord(ch) > 0xFFFF for ch in line):
            col = next(i for i, ch in enumerate(line, 1) if ord(ch) > 0xFFFF)
            self.refuse(JAVAFO, n, col, "a character outside the BMP: Java counts it as two")
        if code == "001":
            self.player(n, line)
        elif code in ("013", "310"):
            self.refuse(BBP, n, 1, "team tournaments are not supported")
        elif code == "299":
            self.refuse(BBP, n, 1, "abnormal assignment points are not yet supported")
        elif code in ("142", "XXR"):
            value = _uint(line[3:])
            if value is None or value == 0:
                self.invalid(n, 5, line)
                if code == "142":
                    self.refuse(SWISS_MANAGER, n, 5, "142: the number of rounds is not a number")
            else:
                self.view.rounds[code] = value
        elif code == "152":
            if len(line) != 5 or line[4] not in "WB":
                self.invalid(n, 5 if len(line) <= 5 else 6, line)
                self.refuse(SWISS_MANAGER, n, 5, "152: the initial colour is not W or B")
            else:
                self.view.initial_colour = line[4]
        elif code == "162":
            self.scoring_162(n, line)
        elif code in ("BBW", "BBD", "BBL", "BBZ", "BBF", "BBU"):
            value = _tenths(line[4:12]) if len(line) >= 8 else None
            if value is None or (len(line) > 12 and line[12:].strip()):
                self.invalid(n, 5, line)
            else:
                key = {"BBW": "W", "BBD": "D", "BBL": "L", "BBZ": "Z", "BBF": "F", "BBU": "P"}
                self.point_line(key[code], value)
                self.view.point_lines.append((code, key[code], value, n))
        elif code == "XXS":
            points = _xxs_points(line[3:].split())
            if points is None:
                self.refuse(JAVAFO, n, 5, "XXS: not CODE=points with JaVaFo's codes")
            else:
                self.view.xxs, self.view.has_xxs = points, True
        elif code == "192":
            if line[4:] not in TYPES_192:
                self.invalid(n, 5, line, "unsupported tournament type")
        elif code == "240":
            self.byes(n, line)
        elif code == "260":
            self.forbidden(n, line)
        elif code == "XXP":
            ids = [_uint(t) for t in line[3:].split()]
            if any(not i for i in ids):
                self.invalid(n, 5, line)

    def point_line(self, key: str, value: int) -> None:
        pts = self.view.bbp_points
        if key == "W":
            pts["W"] = value
            if not self.pab_set:
                pts["P"] = value
        elif key == "P":
            pts["P"], self.pab_set = value, True
        elif key == "A":
            pts["Z"] = pts["F"] = value
        else:
            pts[key] = value

    def scoring_162(self, n: int, line: str) -> None:
        if len(line) < 10:
            self.invalid(n, len(line) + 1, line)
            return
        i = 5
        while i <= len(line) - 5:
            code, value = line[i], _tenths(line[i + 1 : i + 5])
            if code == "X":
                self.invalid(n, i + 1, line, "symbol X not supported")
                return
            if code not in "WDLAP" or not code.strip() or value is None:
                self.invalid(n, i + 1, line)
                if code not in "WDLAPX" or value is None:
                    self.refuse(SWISS_MANAGER, n, i + 1, f"162: {code!r} is not a TRF-2026 code")
                return
            if code == "A":
                # the stored TRF-2026 reader takes A; the release built for issue 26 refused it
                self.invalid(n, i + 1, line, "code A: not read by every release")
            self.point_line(code, value)
            self.view.point_lines.append(("162", code, value, n))
            i += 9
        if line[i:].strip():
            self.invalid(n, i + 1, line)

    def byes(self, n: int, line: str) -> None:
        rnd = _uint(line[6:9]) if len(line) >= 11 else None
        if not rnd:
            self.invalid(n, 7, line)
            return
        kind = line[4]
        if kind not in "FHZ":
            self.refuse(SWISS_MANAGER, n, 5, f"240: the type of bye {kind!r} is not F, H or Z")
        i = 10
        while i <= len(line) - 4:
            who = _uint(line[i : i + 4])
            if not who:
                self.invalid(n, i + 1, line)
                return
            self.view.byes_240.append((rnd, who, n, kind))
            i += 5
        if line[i:].strip():
            self.invalid(n, i + 1, line)

    def forbidden(self, n: int, line: str) -> None:
        first = _uint(line[4:7]) if len(line) >= 18 else None
        last = _uint(line[8:11]) if len(line) >= 18 else None
        if not first or not last:
            self.invalid(n, 5, line)
            return
        ids, i = [], 12
        while i <= len(line) - 4:
            who = _uint(line[i : i + 4])
            if not who:
                self.invalid(n, i + 1, line)
                return
            ids.append(who)
            i += 5
        if line[i:].strip():
            self.invalid(n, i + 1, line)
        self.view.forbidden.append((first, last, tuple(ids), n))

    def player(self, n: int, line: str) -> None:
        if len(line) < 84:
            self.invalid(n, len(line) + 1, line, "a 001 line is at least 84 characters")
            return
        me = _uint(line[4:8])
        if not me:
            self.invalid(n, 5, line, "player ID of 0" if me == 0 else "")
            return
        rating = 0
        if line[48:52].strip():
            value = _uint(line[48:52])
            if value is None:
                self.invalid(n, 49, line)
                return
            rating = value
        points = _tenths(line[80:84])
        if points is None:
            self.invalid(n, 81, line)
            return
        cells, i = [], 91
        while i <= len(line) - 8:
            cell = self.cell(n, line, i, me)
            if cell is None:
                return
            cells.append(cell)
            i += 10
        if line[i:].strip():
            self.invalid(n, i + 1, line, "a round cell cut short or text after the last")
            return
        if me in self.view.players:
            self.refuse(BBP, n, 5, "A pairing number is repeated.")
            return
        self.view.players[me] = EnginePlayer(me, points, rating, cells, n)

    def cell(self, n: int, line: str, i: int, me: int) -> EngineCell | None:
        r = (i - 91) // 10 + 1
        opp_text, colour, result = line[i : i + 4], line[i + 5], line[i + 7].upper()
        for gap in (i + 4, i + 6, *(c for c in (i + 8, i + 9) if c < len(line))):
            if line[gap] != " ":
                self.refuse(SWISS_MANAGER, n, gap + 1, f"round {r}: column {gap + 1} not blank")
        opponent = 0
        if opp_text not in ("    ", "0000"):
            value = _uint(opp_text)
            if not value or value == me:
                self.invalid(n, i + 1, line, f"round {r}: opponent")
                return None
            opponent = value
        if colour not in "wb- ":
            self.invalid(n, i + 6, line, f"round {r}: colour {colour!r} (w, b, - only)")
            return None
        if colour in "wb" and not opponent:
            self.invalid(n, i + 6, line, f"round {r}: a colour without an opponent")
            return None
        if not result.isascii() or result not in WINS + DRAWS + LOSSES:
            self.invalid(n, i + 8, line, f"round {r}: result {result!r}")
            return None
        if result in "HFUZ " and opponent:
            self.invalid(n, i + 8, line, f"round {r}: paired, no result")
            return None
        if result in "1=0WDL" and colour not in "wb" and not (result == "=" and not opponent):
            self.invalid(n, i + 8, line, f"round {r}: a game played without a colour")
            return None
        return EngineCell(opponent, colour if colour in "wb" else "", result)


def read(data: str | bytes, *, pairing: bool = True) -> EngineView:
    """The file as the engines read it, with every refusal (``view.refusals``). ``pairing``:
    as for pairing the next round (bbpPairings ``-p``, JaVaFo's default)."""
    r = _Reader()
    view = r.view
    view.bbp_points = {"W": 10, "D": 5, "L": 0, "Z": 0, "F": 0, "P": 10}
    view.xxs = _xxs_points([]) or {}
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            r.refuse(BBP, 0, 0, "The file is not legal UTF-8.")
            return view
    for n, line in enumerate(re.split(r"\r\n|\r|\n", data), 1):
        if len(line) >= 3:
            r.line(n, line)
    _after(r, pairing)
    return view


def _after(r: _Reader, pairing: bool) -> None:
    view = r.view
    players = view.players
    if not players or r.bad_players:
        if not players:
            r.refuse(BBP, 0, 0, "no 001 player line")
        return
    if sorted(players) != list(range(1, len(players) + 1)):
        r.refuse(BBP, 0, 0, "A pairing number is missing.")
    played = view.played
    total = view.total_rounds()
    if pairing:
        if total is None:
            r.refuse(BBP, 0, 0, _NO_ROUNDS)
        elif played >= total:
            r.refuse(
                BBP, 0, 0, "The number of rounds is larger than the reported number of rounds."
            )
        if "XXR" not in view.rounds:
            r.refuse(JAVAFO, 0, 0, "no XXR line: JaVaFo reads the number of rounds only from XXR")
        if (
            "142" in view.rounds
            and "XXR" in view.rounds
            and view.rounds["142"] != view.rounds["XXR"]
        ):
            r.refuse(BBP, 0, 0, "142 and XXR disagree: the last one read wins")
        coloured = any(c.colour for p in players.values() for c in p.cells)
        if not view.initial_colour and not coloured:
            r.refuse(BBP, 0, 0, "Please configure the initial piece colors.")
    _games(r, played)
    _scores(r, played)
    for rnd, who, n, _kind in view.byes_240:
        if who not in players:
            r.refuse(BBP, n, 0, f"240: no player {who}")
        elif pairing and rnd == played + 1:
            p = players[who]
            if len(p.cells) <= played or p.cells[played].opponent:
                r.refuse(JAVAFO, n, 0, f"240 is not read: player {who} would be paired")


def _games(r: _Reader, played: int) -> None:
    players = r.view.players
    mirror = {"1": "0", "0": "1", "=": "=", "W": "L", "L": "W", "D": "D", "+": "-", "-": "+-"}
    for p in players.values():
        for rnd, c in enumerate(p.cells, 1):
            if not c.opponent:
                continue
            o = players.get(c.opponent)
            oc = o.cells[rnd - 1] if o and len(o.cells) >= rnd else None
            played_game = c.result in "1=0WDL"
            if played_game and (
                oc is None
                or oc.opponent != p.id
                or oc.result not in "1=0WDL"
                or oc.colour == c.colour
            ):
                r.refuse(
                    BBP,
                    p.line,
                    92 + 10 * (rnd - 1),
                    f"Match {rnd} for player {p.id} contradicts the entry for the opponent.",
                )
            elif oc is None or oc.opponent != p.id or oc.result not in mirror[c.result]:
                r.refuse(
                    JAVAFO,
                    p.line,
                    92 + 10 * (rnd - 1),
                    f"round {rnd}: player {p.id} has {c.result!r}, his opponent does not agree",
                )


def _scores(r: _Reader, played: int) -> None:
    view = r.view
    for p in view.players.values():
        past, nxt = p.cells[:played], p.cells[played : played + 1]
        s = sum(view.cell_points(c) for c in past)
        ahead = sum(view.cell_points(c) for c in nxt)
        if p.points not in (s, s + ahead):
            r.refuse(
                BBP, p.line, 81, f"The score for player {p.id} does not match the game results."
            )
        j = sum(view.javafo_points(c) for c in past + nxt)
        if view.has_xxs and p.points != j:
            r.refuse(JAVAFO, p.line, 81, f"player {p.id}: points differ from the results under XXS")
        if not view.has_xxs and p.points != j:
            r.refuse(
                JAVAFO, p.line, 81, f"player {p.id}: points not 1/½/0 and no XXS line (JaVaFo 2.2)"
            )
    if view.has_xxs and view.point_lines:
        cells = {"W": ("WW", "FW", "FPB"), "D": ("WD", "HPB"), "L": ("WL",), "P": ("PAB",)}
        for key, codes in cells.items():
            for code in codes:
                if view.xxs[code] != view.bbp_points[key]:
                    line = max((n for *_, n in view.point_lines), default=0)
                    r.refuse(
                        JAVAFO,
                        line,
                        0,
                        f"XXS {code}={view.xxs[code] / 10} but bbpPairings reads "
                        f"{view.bbp_points[key] / 10}: the engines would pair on different scores",
                    )
                    return


def refusals(data: str | bytes, *, pairing: bool = True) -> list[Refusal]:
    """Every refusal of every known engine, in file order."""
    return sorted(read(data, pairing=pairing).refusals, key=lambda x: (x.line, x.engine))
