"""Standings after any round, in the regulation's tiebreak order, with the reason for each place.

Pure: the station hands in the Swiss games (:class:`GameRecord`), byes and player tags; the
regulation profile supplies the scoring and ``standings.order``. How ``drop_rounds`` (去除第一轮
得分进行比较) is read, and the defaults for byes and forfeits, are in ``docs/standings.md``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from clock_service.errors import ClockServiceError
from clock_service.regulation import Regulation, Tiebreak

__all__ = [
    "Bye",
    "GameRecord",
    "Policy",
    "Standing",
    "StandingsError",
    "compute_standings",
    "standings_csv",
    "standings_json",
    "tiebreak_words",
]

RESULTS = ("red", "black", "draw", "double_forfeit")  # double_forfeit: both lose (0:0)


class StandingsError(ClockServiceError, ValueError):
    """Input the standings cannot be computed from; the message says what and where."""


@dataclasses.dataclass(frozen=True)
class GameRecord:
    """One Swiss game. ``result`` is the winner's colour, ``"draw"``, ``"double_forfeit"`` (both
    sides lost by 立即判负, e.g. both absent: each scores a loss), or None (not played yet)."""

    round: int
    red: str
    black: str
    result: str | None = None
    forfeit: bool = False  # decided by 立即判负 (absence, fouls, switch-off …), not over the board
    red_fouls: int = 0
    black_fouls: int = 0

    def __post_init__(self) -> None:
        where = f"game round {self.round!r} {self.red!r}-{self.black!r}"
        _check_round(self.round, where)
        for name in (self.red, self.black):
            _check_name(name, where)
        if self.red == self.black:
            raise StandingsError(f"{where}: a player cannot play himself")
        if self.result is not None and self.result not in RESULTS:
            raise StandingsError(
                f"{where}: result {self.result!r} is not red, black, draw, double_forfeit or None"
            )
        if self.forfeit and self.result not in ("red", "black", "double_forfeit"):
            raise StandingsError(
                f"{where}: a forfeit needs a winner (or double_forfeit), not {self.result!r}"
            )
        if self.result == "double_forfeit" and not self.forfeit:
            raise StandingsError(f"{where}: a double_forfeit is a forfeit (forfeit=True)")
        for label, fouls in (("red_fouls", self.red_fouls), ("black_fouls", self.black_fouls)):
            if type(fouls) is not int or fouls < 0:
                raise StandingsError(f"{where}: {label} {fouls!r} is not a count (int >= 0)")

    def __repr__(self) -> str:
        how = " forfeit" if self.forfeit else ""
        return f"<GameRecord r{self.round} {self.red}-{self.black} {self.result}{how}>"


@dataclasses.dataclass(frozen=True)
class Bye:
    """A round without an opponent (轮空); ``points`` None means the profile's win score."""

    round: int
    player: str
    points: int | None = None

    def __post_init__(self) -> None:
        where = f"bye round {self.round!r} {self.player!r}"
        _check_round(self.round, where)
        _check_name(self.player, where)
        if self.points is not None and (type(self.points) is not int or self.points < 0):
            raise StandingsError(f"{where}: points {self.points!r} is not an int >= 0")


@dataclasses.dataclass(frozen=True)
class Policy:
    """What the seed regulations leave open; the defaults are argued in docs/standings.md."""

    bye_counts_as_win: bool = False  # a bye is no game won (胜局)
    forfeit_counts_as_win: bool = True  # a game won by the opponent's 立即判负 is a 胜局
    forfeit_counts_as_black_game: bool = True  # the player was paired as black: 后走局数
    # What is compared again after dropping rounds; None: the profile's order before drop_rounds.
    drop_recompare: tuple[Tiebreak, ...] | None = None


@dataclasses.dataclass(frozen=True)
class Standing:
    """One row. ``rank`` is shared (3, 3, 5) when every criterion is equal; ``reason_*`` says
    why this player is ahead of the next row (empty on the last row; "并列…" when shared with it).
    ``progressive`` is the regulation's 累进分, foul penalty deducted; ``fouls`` over all rounds."""

    rank: int
    player: str
    points: int
    progressive: int
    wins: int
    fouls: int
    black_games: int
    games: int  # games with a result (forfeits included), byes excluded
    shared: bool
    reason_zh: str
    reason_en: str
    decided_by: Tiebreak | None  # the criterion that separated this row from the next
    dropped_rounds: int  # rounds dropped when it was decided (0: over all rounds)
    event_rank: int  # the rank in the whole event (differs from rank when filtered by tag)
    tags: frozenset[str] = frozenset()
    # Set only on the final list's first rows (``knockout.merge_standings``): the place the
    # knockout gave, which is then also ``rank``; None for a place from the Swiss table.
    knockout_place: int | None = None

    @property
    def tiebreak_reason(self) -> str:
        """The zh-CN reason (user-facing default); ``reason_en`` is the English one."""
        return self.reason_zh

    def as_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["decided_by"] = None if self.decided_by is None else self.decided_by.value
        out["tags"] = sorted(self.tags)
        return out

    def __repr__(self) -> str:
        mark = "=" if self.shared else ""
        return f"<Standing {mark}{self.rank} {self.player} {self.points}/{self.progressive}>"


_LABELS = {
    Tiebreak.POINTS: ("积分", "points"),
    Tiebreak.PROGRESSIVE: ("累进分", "progressive"),
    Tiebreak.WINS: ("胜局", "wins"),
    Tiebreak.FOULS: ("犯规", "fouls"),
    Tiebreak.BLACK_GAMES: ("后走局数", "games as black"),
    Tiebreak.DROP_ROUNDS: ("去除前几轮得分", "rounds dropped"),
}


def tiebreak_words(lang: str) -> dict[str, str]:
    """Each criterion's code in words (``zh`` or ``en``), as the reasons name them."""
    return {crit.value: words[1 if lang == "en" else 0] for crit, words in _LABELS.items()}


@dataclasses.dataclass
class _Player:
    name: str
    tags: frozenset[str]
    pts: list[int]  # per round, index 0 is round 1
    won: list[int]
    fouls: list[int]
    black: list[int]
    # False for a round whose game has no result yet: no score after that round, so no 累进分
    # term (a bye, a decided game, or no game at all leave it True).
    played: list[bool]
    games: int = 0
    key: tuple[int, ...] = ()
    totals: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)


def compute_standings(
    regulation: Regulation,
    games: Iterable[GameRecord],
    *,
    players: Mapping[str, Collection[str]] | None = None,
    byes: Iterable[Bye] = (),
    after_round: int | None = None,
    tag: str | Collection[str] | None = None,
    without: Collection[str] = (),
    policy: Policy = Policy(),
) -> list[Standing]:
    """The standings after ``after_round`` (default: the last round with a game or bye).

    ``players`` maps every player to his tags; when given, an unknown name is an error and a
    player without games still gets a row. ``tag`` keeps the players holding it (or any of
    several tags), ranked among themselves in the whole event's order.
    """
    games = list(games)
    byes = list(byes)
    rounds = _rounds(regulation, games, byes, after_round)
    table = _collect(regulation, games, byes, players, rounds, policy)
    labels = _criteria(regulation, policy, rounds)
    penalty = regulation.fouls.progressive_penalty
    for p in table.values():
        p.key = _key(p, labels, rounds, penalty)
        p.totals = _tally(p, 0, rounds, penalty)
    # Names break no tie; they only make a shared place list in a stable order.
    ranked = sorted(table.values(), key=lambda p: (p.key, p.name))
    event_rank = _ranks(ranked)
    if tag is not None:
        wanted = {tag} if isinstance(tag, str) else set(tag)
        if players is None:
            raise StandingsError(f"tag {tag!r}: filtering needs the players' tags (players=)")
        ranked = [p for p in ranked if p.tags & wanted]
    if without:
        left_out = set(without)
        ranked = [p for p in ranked if p.name not in left_out]
    return _rows(ranked, event_rank, labels)


def _check_round(value: object, where: str) -> None:
    if type(value) is not int or value < 1:
        raise StandingsError(f"{where}: round {value!r} is not a round number (int >= 1)")


def _check_name(value: object, where: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise StandingsError(f"{where}: player {value!r} is not a non-empty name")


def _rounds(reg: Regulation, games: list[GameRecord], byes: list[Bye], after: int | None) -> int:
    limit = reg.tournament.rounds
    items: list[GameRecord | Bye] = [*games, *byes]
    for item in items:
        if item.round > limit:
            raise StandingsError(f"{item!r}: round {item.round} > the regulation's {limit} rounds")
    if after is None:
        return max((item.round for item in items), default=0)
    if type(after) is not int or not 0 <= after <= limit:
        raise StandingsError(f"after_round {after!r} is not a round 0..{limit}")
    return after


def _collect(
    reg: Regulation,
    games: list[GameRecord],
    byes: list[Bye],
    players: Mapping[str, Collection[str]] | None,
    rounds: int,
    policy: Policy,
) -> dict[str, _Player]:
    table: dict[str, _Player] = {}

    def entry(name: str, where: str) -> _Player:
        if name not in table:
            if players is not None:
                raise StandingsError(f"{where}: player {name!r} is not in the players list")
            table[name] = _new(name, frozenset(), rounds)
        return table[name]

    for name, tags in (players or {}).items():
        _check_name(name, "players")
        if isinstance(tags, str):
            raise StandingsError(f"players[{name!r}]: tags must be a collection, not a string")
        table[name] = _new(name, frozenset(tags), rounds)
    seen: dict[tuple[int, str], str] = {}  # (round, player) -> where he was

    def once(rnd: int, name: str, where: str) -> None:
        if (rnd, name) in seen:
            raise StandingsError(f"{where}: {name!r} is already in round {rnd}: {seen[rnd, name]}")
        seen[rnd, name] = where

    score = reg.scoring
    for i, g in enumerate(games):
        where = f"games[{i}] {g!r}"
        red, black = entry(g.red, where), entry(g.black, where)
        once(g.round, g.red, where)
        once(g.round, g.black, where)
        if g.round > rounds:
            continue
        r = g.round - 1
        if g.result is None:  # not played yet: it counts for nothing, 累进分 included
            red.played[r] = black.played[r] = False
            continue
        for p, side, fouls in ((red, "red", g.red_fouls), (black, "black", g.black_fouls)):
            p.games += 1
            p.fouls[r] += fouls
            if g.result == "draw":
                p.pts[r] += score.draw
            elif g.result == side:
                p.pts[r] += score.win
                p.won[r] += 1 if (policy.forfeit_counts_as_win or not g.forfeit) else 0
            else:
                p.pts[r] += score.loss
        if policy.forfeit_counts_as_black_game or not g.forfeit:
            black.black[r] += 1
    for i, b in enumerate(byes):
        where = f"byes[{i}] {b!r}"
        p = entry(b.player, where)
        once(b.round, b.player, where)
        if b.round <= rounds:
            p.pts[b.round - 1] += score.win if b.points is None else b.points
            p.won[b.round - 1] += 1 if policy.bye_counts_as_win else 0
    return table


def _new(name: str, tags: frozenset[str], rounds: int) -> _Player:
    zeros = [0] * rounds
    return _Player(name, tags, [*zeros], [*zeros], [*zeros], [*zeros], [True] * rounds)


_Label = tuple[Tiebreak, int]  # the criterion and how many leading rounds were dropped


def _criteria(reg: Regulation, policy: Policy, rounds: int) -> list[_Label]:
    order = reg.standings.order
    base = [c for c in order if c is not Tiebreak.DROP_ROUNDS]
    labels: list[_Label] = [(c, 0) for c in base]
    if Tiebreak.DROP_ROUNDS in order:
        again = base if policy.drop_recompare is None else list(policy.drop_recompare)
        if Tiebreak.DROP_ROUNDS in again:
            raise StandingsError("policy.drop_recompare: cannot contain drop_rounds")
        # Dropping every round leaves nothing to compare, so stop one round short.
        labels += [(c, k) for k in range(1, rounds) for c in again]
    return labels


def _key(p: _Player, order: list[_Label], rounds: int, penalty: int) -> tuple[int, ...]:
    cache: dict[int, tuple[int, int, int, int, int]] = {}
    key: list[int] = []
    for crit, k in order:
        if k not in cache:
            cache[k] = _tally(p, k, rounds, penalty)
        points, progressive, wins, fouls, black = cache[k]
        # Sorted ascending: negate the "more is better" criteria.
        key.append(
            {
                Tiebreak.POINTS: -points,
                Tiebreak.PROGRESSIVE: -progressive,
                Tiebreak.WINS: -wins,
                Tiebreak.FOULS: fouls,
                Tiebreak.BLACK_GAMES: -black,
            }[crit]
        )
    return tuple(key)


def _tally(p: _Player, dropped: int, rounds: int, penalty: int) -> tuple[int, int, int, int, int]:
    """Points, 累进分, wins, fouls, black games over rounds ``dropped+1 .. rounds`` alone.

    累进分 (每一轮积分之和) adds the running total after each round the player has played; a
    round whose game has no result yet has no score after it (its points, wins, fouls and
    black game are all 0 in ``_collect``)."""
    running = progressive = 0
    for r in range(dropped, rounds):
        running += p.pts[r]
        if p.played[r]:
            progressive += running
    fouls = sum(p.fouls[dropped:])
    progressive -= penalty * fouls
    return running, progressive, sum(p.won[dropped:]), fouls, sum(p.black[dropped:])


def _ranks(ranked: Sequence[_Player]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, p in enumerate(ranked):
        same = i > 0 and ranked[i - 1].key == p.key
        out[p.name] = out[ranked[i - 1].name] if same else i + 1
    return out


def _rows(
    ranked: list[_Player], event_rank: dict[str, int], labels: list[_Label]
) -> list[Standing]:
    rows: list[Standing] = []
    for i, p in enumerate(ranked):
        above = ranked[i - 1] if i > 0 else None
        below = ranked[i + 1] if i + 1 < len(ranked) else None
        shared = (above is not None and above.key == p.key) or (
            below is not None and below.key == p.key
        )
        rank = rows[-1].rank if above is not None and above.key == p.key else i + 1
        zh = en = ""
        decided: Tiebreak | None = None
        dropped = 0
        if below is not None:
            zh, en, decided, dropped = _reason(p, below, labels)
        points, progressive, wins, fouls, black = p.totals
        rows.append(
            Standing(
                rank=rank,
                player=p.name,
                points=points,
                progressive=progressive,
                wins=wins,
                fouls=fouls,
                black_games=black,
                games=p.games,
                shared=shared,
                reason_zh=zh,
                reason_en=en,
                decided_by=decided,
                dropped_rounds=dropped,
                event_rank=event_rank[p.name],
                tags=p.tags,
            )
        )
    return rows


def _reason(a: _Player, b: _Player, labels: list[_Label]) -> tuple[str, str, Tiebreak | None, int]:
    for i, (crit, k) in enumerate(labels):
        if a.key[i] == b.key[i]:
            continue
        # Undo the negation of the "more is better" criteria for display.
        va, vb = (a.key[i], b.key[i]) if crit is Tiebreak.FOULS else (-a.key[i], -b.key[i])
        sign = "<" if crit is Tiebreak.FOULS else ">"
        zh_name, en_name = _LABELS[crit]
        zh = f"{zh_name} {va} {sign} {vb}"
        en = f"{en_name} {va} {sign} {vb}"
        if k:
            span = "1" if k == 1 else f"1–{k}"
            zh = f"去除第{span}轮后，{zh}"  # (…轮后后走局数 read as 后后: an outsider)
            en = f"without round{'s' if k > 1 else ''} {span}: {en}"
        return zh, en, crit, k
    return "并列：各项区分办法均相同", "shared: equal on every criterion", None, 0


_CSV_FIELDS = (
    "rank",
    "player",
    "points",
    "progressive",
    "wins",
    "fouls",
    "black_games",
    "games",
    "shared",
    "decided_by",
    "dropped_rounds",
    "reason_zh",
    "reason_en",
    "event_rank",
    "tags",
    "knockout_place",
)


def _csv_safe(value: object) -> object:
    # A text cell a spreadsheet would run as a formula gets a leading ' (CSV injection); numbers
    # (a negative progressive score among them) are written as they are.
    if isinstance(value, str) and value.startswith(("=", "+", "-", "@", "\t", "\r")):
        return "'" + value
    return value


def standings_csv(
    standings: Iterable[Standing],
    *,
    headers: Sequence[str] | None = None,
    decided_words: Mapping[str, str] | None = None,
) -> str:
    """CSV text with a header row — the field codes, or ``headers`` (the organiser's words,
    one per field) — and ``decided_by`` as a code or in ``decided_words``; ``shared`` is 0/1,
    ``tags`` space-separated, ``knockout_place`` empty for a Swiss place; text cells that
    start like a formula (``= + - @``, tab, CR) are prefixed with ``'``."""
    if headers is not None and len(headers) != len(_CSV_FIELDS):
        raise ValueError(f"{len(headers)} headers for {len(_CSV_FIELDS)} fields")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(headers or _CSV_FIELDS)
    for s in standings:
        row = s.as_dict()
        row["shared"] = int(s.shared)
        decided = row["decided_by"] or ""
        row["decided_by"] = (decided_words or {}).get(decided, decided)
        row["tags"] = " ".join(row["tags"])
        row["knockout_place"] = "" if s.knockout_place is None else s.knockout_place
        writer.writerow([_csv_safe(row[f]) for f in _CSV_FIELDS])
    return buf.getvalue()


def standings_json(
    standings: Iterable[Standing],
    *,
    regulation: Regulation | None = None,
    after_round: int | None = None,
    tag: str | None = None,
    final: bool = False,
) -> str:
    """One JSON object: ``{"v": 1, "regulation", "after_round", "tag", "final", "standings":
    [...]}``; ``final`` when places 1–4 are the knockout's."""
    doc = {
        "v": 1,
        "regulation": None if regulation is None else regulation.name,
        "after_round": after_round,
        "tag": tag,
        "final": final,
        "standings": [s.as_dict() for s in standings],
    }
    return json.dumps(doc, ensure_ascii=False, sort_keys=False)
