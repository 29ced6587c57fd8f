"""Write the TRF-2026 file of a tournament after any round, from plain results.

Pure: the caller hands in the players (``Entrant``, the start rank is the id), the games by start
rank (``GameResult``; red = white, the side that moves first), the byes and the ranks it computed
(the regulation's tiebreaks). The points are declared three ways so that every engine in use
reads the point system as is: TRF-2026's ``162``, bbpPairings' ``BBW``…``BBU`` and JaVaFo's
``XXS``. The result is checked (``Trf.check``) before it is returned: points that do not follow
from the results never leave this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping
from decimal import Decimal

from clock_service.trf.document import Record, Trf
from clock_service.trf.player import PlayerRecord, RoundCell
from clock_service.trf.records import (
    BYE_KINDS,
    ByeRecord,
    PointsRecord,
    ProhibitedRecord,
    RawRecord,
    RoundsRecord,
    ScoringRecord,
    TrfError,
    XxsRecord,
)

__all__ = ["Entrant", "GameResult", "RoundBye", "TrfHeader", "build_trf", "point_lines"]

GAME_RESULTS = ("white", "black", "draw", "double_forfeit")
KEPT_CODES = ("092", "112", "122", "132")
ROUND_BYES = "FHUZ"  # full-point, half-point, pairing-allocated, zero-point (absent)
RULERS = (
    "###      1         2         3         4         5         6         7         8         9"
    "        10        11        12        13",
    "###4567890123456789012345678901234567890123456789012345678901234567890123456789012345678901"
    "234567890123456789012345678901234567890",
    "### SSSS sTTT NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN RRRR FFF IIIIIIIIIII BBBB/BB/BB PPPP RRRR"
    "  OOOO C R  OOOO C R  OOOO C R  OOOO C R",
)


@dataclasses.dataclass(frozen=True)
class Entrant:
    """A player of the file: ``start_rank`` is his stable id; the name is only a label."""

    start_rank: int
    name: str
    sex: str = ""
    title: str = ""
    rating: int | None = None
    federation: str = ""
    fide_id: str = ""
    birth: str = ""


@dataclasses.dataclass(frozen=True)
class GameResult:
    """One game by start rank. ``result``: ``white`` | ``black`` (the winner), ``draw``,
    ``double_forfeit`` (both lose), None (paired, not decided). ``forfeit``: decided without
    play (written ``+``/``-``)."""

    round: int
    white: int
    black: int
    result: str | None = None
    forfeit: bool = False

    def __post_init__(self) -> None:
        where = f"game round {self.round} {self.white}-{self.black}"
        if self.result is not None and self.result not in GAME_RESULTS:
            raise TrfError(f"{where}: result {self.result!r} is not one of {GAME_RESULTS} or None")
        if self.white == self.black:
            raise TrfError(f"{where}: a player cannot play himself")
        if self.forfeit and self.result not in ("white", "black"):
            raise TrfError(
                f"{where}: a forfeit needs a winner (a double forfeit is its own result)"
            )


@dataclasses.dataclass(frozen=True)
class RoundBye:
    """A round without a game: ``F`` full-point, ``H`` half-point, ``U`` pairing-allocated,
    ``Z`` zero-point bye (a known absence)."""

    round: int
    player: int
    kind: str = "U"

    def __post_init__(self) -> None:
        if self.kind not in ROUND_BYES:
            where = f"bye round {self.round} player {self.player}"
            raise TrfError(f"{where}: kind {self.kind!r} is not F, H, U or Z")


@dataclasses.dataclass(frozen=True)
class TrfHeader:
    """The tournament lines; empty fields are left out."""

    name: str
    city: str = ""
    federation: str = ""
    start: str = ""  # YYYY/MM/DD
    end: str = ""
    type: str = "Individual: Swiss-System"
    chief_arbiter: str = ""
    rounds: int = 9
    # The colour of the highest-ranked player paired in round 1 (152); None: read it from
    # round 1 when it is there, else W.
    initial_colour: str | None = None
    # Tournament lines kept as a players file wrote them: 092 type, 112 deputy arbiters,
    # 122 time control, 132 round dates (in the round columns); each replaces the default.
    kept: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for text in self.kept:
            if text[:3] not in KEPT_CODES or "\r" in text or "\n" in text:
                raise TrfError(f"kept header line {text[:20]!r} is not one line of {KEPT_CODES}")


def _d(value: int | Decimal) -> Decimal:
    return Decimal(value).quantize(Decimal("0.1"))


def point_lines(win: Decimal, draw: Decimal, loss: Decimal) -> list[Record]:
    """The point system once per reader, each with only what differs from its defaults and
    only the codes every version reads (docs/pairing.md, "What each engine reads"):

    * ``162`` (TRF-2026): W and D, L when not 0 — never ``A`` (refused by an older bbpPairings)
      nor ``X`` (refused by every bbpPairings: "symbol X not supported"); ``P`` is W by default.
    * ``BBW``/``BBD`` (bbpPairings' TRF(bx), the only ones its first reader knows), ``BBL`` and
      ``BBF`` when a loss scores; ``BBU`` is BBW by default.
    * ``XXS`` (JaVaFo 2.2): ``W`` (OTB and forfeit win, full-point bye), ``D`` (draw, half-point
      bye) and ``PAB``, whose default stays 1 whatever W is.
    """
    std = [("W", win, Decimal("1.0")), ("D", draw, Decimal("0.5")), ("L", loss, Decimal(0))]
    records: list[Record] = []
    scoring = tuple((code, value) for code, value, default in std if value != default)
    if scoring:
        records.append(RawRecord("### P CCCC    P CCCC    P CCCC"))
        records.append(ScoringRecord(scoring))
    bb = [("BBW", win, Decimal("1.0")), ("BBD", draw, Decimal("0.5"))]
    bb += [("BBL", loss, Decimal(0)), ("BBF", loss, Decimal(0))]
    records.extend(PointsRecord(code, value) for code, value, default in bb if value != default)
    xxs = [("W", win), ("D", draw), ("PAB", win)]
    if loss:
        xxs += [("WL", loss), ("BL", loss), ("FL", loss)]
    records.append(XxsRecord(tuple(xxs)))
    return records


def _cell(
    rnd: int,
    me: int,
    games: Mapping[tuple[int, int], GameResult],
    byes: Mapping[tuple[int, int], str],
) -> RoundCell:
    g = games.get((rnd, me))
    if g is None:
        return RoundCell(0, "-", byes.get((rnd, me), "Z"))
    white = g.white == me
    opponent, colour = (g.black, "w") if white else (g.white, "b")
    if g.result is None:
        return RoundCell(opponent, colour, "")
    if g.result == "double_forfeit":
        return RoundCell(opponent, colour, "-")
    if g.result == "draw":
        return RoundCell(opponent, colour, "=")
    won = (g.result == "white") == white
    if g.forfeit:
        return RoundCell(opponent, colour, "+" if won else "-")
    return RoundCell(opponent, colour, "1" if won else "0")


def _index(
    games: Iterable[GameResult], byes: Iterable[RoundBye], ids: Collection[int], after: int
) -> tuple[dict[tuple[int, int], GameResult], dict[tuple[int, int], str]]:
    by_player: dict[tuple[int, int], GameResult] = {}
    by_bye: dict[tuple[int, int], str] = {}
    for g in games:
        if g.round > after:
            continue
        if g.result is None and g.round < after:
            # A blank result marks the round being paired/played: one before the last round
            # written would make the file read as that round's (its later rounds not played).
            raise TrfError(
                f"round {g.round}: game {g.white}-{g.black} has no result, so the TRF can be "
                f"written after round {g.round} at most, not {after}"
            )
        for who in (g.white, g.black):
            if who not in ids:
                raise TrfError(f"game round {g.round} {g.white}-{g.black}: no player {who}")
            if (g.round, who) in by_player:
                raise TrfError(f"player {who} has two games in round {g.round}")
            by_player[g.round, who] = g
    for b in byes:
        if b.round > after:
            continue
        if b.player not in ids:
            raise TrfError(f"bye round {b.round}: no player {b.player}")
        if (b.round, b.player) in by_player or (b.round, b.player) in by_bye:
            raise TrfError(f"player {b.player} has a bye and another entry in round {b.round}")
        by_bye[b.round, b.player] = b.kind
    return by_player, by_bye


def _initial_colour(games: Mapping[tuple[int, int], GameResult]) -> str:
    first = sorted(who for rnd, who in games if rnd == 1)
    if not first:
        return "W"
    return "W" if games[1, first[0]].white == first[0] else "B"


def build_trf(
    header: TrfHeader,
    entrants: Iterable[Entrant],
    games: Iterable[GameResult],
    *,
    after_round: int,
    byes: Iterable[RoundBye] = (),
    ranks: Mapping[int, int] | None = None,
    win: int | Decimal = 2,
    draw: int | Decimal = 1,
    loss: int | Decimal = 0,
    next_round_byes: Mapping[int, str] | None = None,
    prohibited: Iterable[tuple[int, int, tuple[int, ...]]] = (),
    newline: str = "\r\n",
) -> Trf:
    """The TRF of rounds 1..``after_round``. ``next_round_byes``: start rank -> ``Z`` (known
    absent), ``H`` or ``F`` in round ``after_round + 1`` (written as ``240`` records, as
    TRF-2026 asks for a round not paired yet). ``prohibited``: (first round, last round,
    players) who must not meet. Raises ``TrfError``."""
    people = sorted(entrants, key=lambda e: e.start_rank)
    ids = {e.start_rank for e in people}
    if len(ids) != len(people):
        raise TrfError("two entrants share a start rank")
    if not 0 <= after_round <= header.rounds:
        raise TrfError(f"after_round {after_round} is not 0..{header.rounds}")
    by_game, by_bye = _index(games, byes, ids, after_round)
    w, d, lo = _d(win), _d(draw), _d(loss)
    score = {"1": w, "+": w, "F": w, "U": w, "=": d, "H": d, "0": lo, "-": lo, "Z": Decimal(0)}
    records: list[Record] = []

    def raw(code: str, value: str) -> None:
        if value:
            records.append(RawRecord(f"{code} {value}"))

    raw("012", header.name)
    raw("022", header.city)
    raw("032", header.federation)
    raw("042", header.start)
    raw("052", header.end)
    raw("062", str(len(people)))
    kept = {text[:3]: text for text in header.kept}
    if "092" in kept:
        records.append(RawRecord(kept["092"]))
    else:
        raw("092", header.type)
    raw("102", header.chief_arbiter)
    records.extend(RawRecord(kept[code]) for code in KEPT_CODES[1:] if code in kept)
    records.append(RoundsRecord("142", header.rounds))
    records.append(RoundsRecord("XXR", header.rounds))  # JaVaFo's; bbpPairings reads both
    raw("152", header.initial_colour or _initial_colour(by_game))
    records.extend(point_lines(w, d, lo))
    records.append(
        RawRecord(
            f"### {w:.0f}/{d:.0f}/{lo:.0f}: W win (OTB, forfeit, full-point bye), D draw or "
            "half-point bye, L loss, A absence, P pairing-allocated bye"
        )
    )
    records.extend(RawRecord(r) for r in RULERS)
    nxt = after_round + 1
    ahead = dict(next_round_byes or {}) if nxt <= header.rounds else {}
    playing = sorted({(g.white, g.black) for g in by_game.values() if g.result is None})
    scoring = sorted(who for who, kind in ahead.items() if kind in "FH")
    if scoring and playing:
        # The file is then round after_round's, being played: a next round's H/F would be
        # counted in Points beyond the rounds it says were played (a Z scores nothing).
        raise TrfError(
            f"round {after_round} is still being played ({len(playing)} game(s) without a "
            f"result): the next round's H/F byes (players {scoring}) wait until it is done"
        )
    for who, kind in ahead.items():
        if who not in ids or kind not in BYE_KINDS:
            raise TrfError(f"next round's bye: {who} {kind!r} is not a player and F, H or Z")
    for e in people:
        cells = tuple(_cell(r, e.start_rank, by_game, by_bye) for r in range(1, after_round + 1))
        if e.start_rank in ahead:
            # The next round's bye or absence also in the player's own column: JaVaFo reads
            # only that (not 240), and both engines want its points counted (bbp accepts
            # either; JaVaFo's manual: "the field Points ... must be updated").
            cells += (RoundCell(0, "-", ahead[e.start_rank]),)
        points = sum((score[c.result] for c in cells if c.result), Decimal(0))
        records.append(
            PlayerRecord(
                start_rank=e.start_rank,
                name=e.name,
                points=_d(points),
                rank=(ranks or {}).get(e.start_rank),
                rounds=cells,
                sex=e.sex,
                title=e.title,
                rating=e.rating,
                federation=e.federation,
                fide_id=e.fide_id,
                birth=e.birth,
            )
        )
    if ahead:
        records.append(RawRecord("### T RRR PPPP"))
        for kind in "FHZ":
            absent = tuple(sorted(p for p, k in ahead.items() if k == kind))
            if absent:
                records.append(ByeRecord(kind, nxt, absent))
    rules = [ProhibitedRecord(a, b, tuple(ps)) for a, b, ps in prohibited]
    if rules:
        records.append(RawRecord("### RR1 RRL PPP1 PPP2"))
        records.extend(rules)
    trf = Trf(tuple(records), newline)
    trf.check()
    return trf
