"""The prize list (奖励名单): the regulation's prizes, and who takes them from a ranked list.

Pure: ``PrizeTable`` is the profile's ``[prizes]`` (``read_prizes``), ``award`` draws one list
from ranked rows (player, rank; equal ranks are shared places, as the standings give them).
Amounts are integer fen (the profile writes whole yuan; a shared prize split among players may
need fen). The rules, from the two seeds, and the choices where they are silent:
docs/prizes.md.

>>> table = PrizeTable(True, (PrizeList("open", "公开组", "Open", (), (PrizeBand(1, 1, 500_000),
...     PrizeBand(2, 3, 100_000)), Shrink(80, 30)),))
>>> award(table.lists[0], [("甲", 1), ("乙", 2), ("丙", 2), ("丁", 4)], registered=10)
<AwardedList open paid_places=3 甲 1:5000.00 乙 2-3:1000.00 丙 2-3:1000.00>
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from clock_service.profile_table import CODE_RE, Table

__all__ = [
    "Award",
    "AwardedList",
    "PrizeBand",
    "PrizeList",
    "PrizeTable",
    "Shrink",
    "award",
    "award_all",
    "read_prizes",
    "yuan_text",
]

MAX_PLACE = 1000
MAX_YUAN = 10_000_000


def yuan_text(fen: int) -> str:
    """Fen as yuan with two decimals: 123450 → ``"1234.50"``."""
    return f"{fen // 100}.{fen % 100:02d}"


@dataclasses.dataclass(frozen=True)
class PrizeBand:
    """Places ``first``–``last`` (inclusive) take ``fen`` each."""

    first: int
    last: int
    fen: int

    def __repr__(self) -> str:
        span = f"{self.first}" if self.first == self.last else f"{self.first}-{self.last}"
        return f"<PrizeBand {span}:{yuan_text(self.fen)}>"


@dataclasses.dataclass(frozen=True)
class Shrink:
    """With fewer than ``below`` registered players only ``percent`` % of them take a prize
    (rounded down): Wulong's 如报名参赛人数低于80人，则受奖面只发总人数的30%."""

    below: int
    percent: int

    def paid(self, places: int, registered: int) -> int:
        if registered >= self.below:
            return places
        return min(places, registered * self.percent // 100)


@dataclasses.dataclass(frozen=True)
class PrizeList:
    """One list of prizes: everyone (``tags`` empty) or the players holding any of ``tags``."""

    key: str
    zh: str
    en: str
    tags: tuple[str, ...]
    bands: tuple[PrizeBand, ...]
    shrink: Shrink | None = None

    @property
    def places(self) -> int:
        return max((b.last for b in self.bands), default=0)

    @property
    def total_fen(self) -> int:
        return sum((b.last - b.first + 1) * b.fen for b in self.bands)

    def fen_of(self, place: int) -> int:
        return next((b.fen for b in self.bands if b.first <= place <= b.last), 0)

    def paid_places(self, registered: int) -> int:
        return self.shrink.paid(self.places, registered) if self.shrink else self.places

    def __repr__(self) -> str:
        return f"<PrizeList {self.key} places={self.places} total={yuan_text(self.total_fen)}>"


@dataclasses.dataclass(frozen=True)
class PrizeTable:
    """The profile's ``[prizes]``: its lists, and whether one player may take a prize in each
    (以上奖项可重复领取); when not, a player already awarded is passed over by the later lists."""

    combinable: bool
    lists: tuple[PrizeList, ...]

    @property
    def total_fen(self) -> int:
        return sum(p.total_fen for p in self.lists)


@dataclasses.dataclass(frozen=True)
class Award:
    """One player's prize: places ``place``–``to`` (a shared place covers more than one)."""

    place: int
    to: int
    player: str
    fen: int

    @property
    def shared(self) -> bool:
        return self.to > self.place

    def __repr__(self) -> str:
        span = f"{self.place}" if not self.shared else f"{self.place}-{self.to}"
        return f"{self.player} {span}:{yuan_text(self.fen)}"


@dataclasses.dataclass(frozen=True)
class AwardedList:
    prize_list: PrizeList
    paid_places: int
    awards: tuple[Award, ...]

    @property
    def shrunk(self) -> bool:
        return self.paid_places < self.prize_list.places

    @property
    def paid_fen(self) -> int:
        return sum(a.fen for a in self.awards)

    def __repr__(self) -> str:
        rows = " ".join(repr(a) for a in self.awards)
        return f"<AwardedList {self.prize_list.key} paid_places={self.paid_places} {rows}>"


def _tie_groups(ranked: Iterable[tuple[str, int]]) -> list[list[str]]:
    groups: list[list[str]] = []
    last: int | None = None
    for player, rank in ranked:
        if groups and rank == last:
            groups[-1].append(player)
        else:
            groups.append([player])
        last = rank
    return groups


def award(
    prize_list: PrizeList,
    ranked: Sequence[tuple[str, int]],
    *,
    registered: int,
    passed_over: Collection[str] = (),
) -> AwardedList:
    """Draw ``prize_list`` from ``ranked`` (best first; equal ranks in a row share the places
    they cover, and split those places' prizes equally, rounded down to the fen).
    ``passed_over`` players (awarded by an earlier list that does not combine) take no place."""
    paid_places = prize_list.paid_places(registered)
    rows = [(p, r) for p, r in ranked if p not in passed_over]
    awards: list[Award] = []
    first = 1
    for group in _tie_groups(rows):
        if first > paid_places:
            break
        last = first + len(group) - 1
        pot = sum(prize_list.fen_of(q) for q in range(first, min(last, paid_places) + 1))
        share = pot // len(group)
        if share > 0:
            awards.extend(Award(first, last, player, share) for player in group)
        first = last + 1
    return AwardedList(prize_list, paid_places, tuple(awards))


def award_all(
    table: PrizeTable, ranked_of: Sequence[Sequence[tuple[str, int]]], *, registered: int
) -> list[AwardedList]:
    """Every list of ``table`` in order; ``ranked_of[i]`` is list i's ranking."""
    out: list[AwardedList] = []
    taken: set[str] = set()
    for prize_list, ranked in zip(table.lists, ranked_of, strict=True):
        done = award(
            prize_list,
            ranked,
            registered=registered,
            passed_over=() if table.combinable else taken,
        )
        taken.update(a.player for a in done.awards)
        out.append(done)
    return out


# -- the profile's [prizes] ----------------------------------------------------------------------
def _band(t: Table, key: str, value: Any) -> PrizeBand:
    if not isinstance(value, dict) or set(value) != {"from", "to", "yuan"}:
        raise t.error(key, f"{value!r} is not {{ from = 1, to = 1, yuan = 5000 }}")
    first, last, yuan = value["from"], value["to"], value["yuan"]
    if not all(type(v) is int for v in (first, last, yuan)):
        raise t.error(key, "from, to and yuan are integers")
    if not 1 <= first <= last <= MAX_PLACE:
        raise t.error(key, f"places {first}..{last} are not 1 <= from <= to <= {MAX_PLACE}")
    if not 0 < yuan <= MAX_YUAN:
        raise t.error(key, f"yuan {yuan} is out of range 1..{MAX_YUAN}")
    return PrizeBand(first, last, yuan * 100)


def _shrink(t: Table) -> Shrink:
    return Shrink(t.integer("below", low=1, high=100_000), t.integer("percent", low=1, high=99))


def _list(t: Table) -> PrizeList:
    key = t.text("key")
    if not CODE_RE.match(key):
        raise t.error("key", f"{key!r} is not a code like 'open'")
    bands = t.array("places", lambda k, v: _band(t, k, v), "prize places")
    if not bands:
        raise t.error("places", "a list pays at least one place")
    for before, after in itertools.pairwise(bands):
        if after.first != before.last + 1:
            raise t.error("places", f"{after!r} does not follow {before!r} (no gap, no overlap)")
    if bands[0].first != 1:
        raise t.error("places", "the first place paid is 1")
    shrink = None
    if t.has("shrink"):
        sub = t.table("shrink")
        shrink = _shrink(sub)
        sub.done()
    tags = t.codes("tags") if t.has("tags") else ()
    return PrizeList(key, t.text("zh"), t.text("en"), tags, bands, shrink)


def read_prizes(t: Table) -> PrizeTable:
    """The ``[prizes]`` table of a profile; raises ``RegulationError`` naming the key."""
    combinable = t.boolean("combinable")
    lists = []
    for sub in t.tables("lists"):
        lists.append(_list(sub))
        sub.done()
    keys = [p.key for p in lists]
    if len(set(keys)) != len(keys):
        raise t.error("lists", "a list key is used twice")
    if not lists:
        raise t.error("lists", "at least one list")
    return PrizeTable(combinable, tuple(lists))
