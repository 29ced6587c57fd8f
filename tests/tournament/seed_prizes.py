"""The two seeds' prize tables, written from the regulations (not from the station), and the
prize list they give from the independent standings of seed_rules.py.

Wulong 2015 (001_…) 八、奖励办法：总奖金28700元。
  1、公开组（合计23900元）：全体参赛棋手排名奖励前32名，第一名5000元，第二名3000元，第三名1500元，
     第四名1200元，第五名1000元，第六名800元；7-12名每人600元；13-18名每人500元；19-24名每人400元；
     25-32名每人300元。如报名参赛人数低于80人，则受奖面只发总人数的30%。
  2、综合组（合计2400元）：14岁以下少儿、女子棋手混合排名奖励前6名。第一名600元，第二名500元，
     第三名400元，4-6名每人300元。
  3、本地组（武隆县内选手合计2400元）：第一名600元，第二名500元，第三名400元，4-6名每人300元。
  以上奖项可重复领取。 (补充规定 二、3: 允许武隆本地…及少儿、女子等棋手同时获得多份奖励。)
Meishan 2016 (000_…) 八、录取名次及奖励：录取前30名 第1名3000元；第2名1500名[sic: 元]；第3名1000元；
  第4名800元；第5名600元；第6名500元；第7—8名各400元；第9-12名各300元，第13—20名各200元；
  第21—30名各100元。 七、(二) 第七轮比赛结束后，前4名选手参加淘汰赛，其余选手继续参加9轮积分赛，
  争夺4名以后名次: places 1–4 are the knockout's, 5.. the others' Swiss order after round 9.

Where the seeds leave a choice open, docs/prizes.md's choice is followed (each is marked
"docs/prizes.md" below):
- the 30 % rule rounds down (16 players → 4 paid places);
- 报名参赛人数 = the rows of the whole-event standings (everyone registered or paired), but a
  player withdrawn who never played (none here);
- the 30 % sentence sits in 1、公开组's paragraph: it shrinks the open list only (the seed's own
  placing; docs/prizes.md's example also shrinks only the open list);
- players sharing a place split the prizes of the places they cover equally (an unpaid place
  adds nothing), to the fen (we round half up: the docs only say "to the fen");
- a group ranks its players among themselves in the event's order (the standings page's
  ``?tag=``): a group place is 1 + the group's players placed strictly above in the event.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["PRIZES", "Band", "Prize", "PrizeList", "PrizeTable", "expected_prizes", "fen"]

FEN = Decimal("0.01")


def fen(value: Decimal | int | str) -> Decimal:
    return Decimal(value).quantize(FEN, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Band:
    first: int
    last: int
    yuan: int


@dataclass(frozen=True, kw_only=True)
class PrizeList:
    key: str
    zh: str
    en: str
    tags: frozenset[str]  # empty: everyone; else any of them (综合组: u14 or women)
    bands: tuple[Band, ...]
    shrink: tuple[int, int] | None = None  # (below, percent)
    stated_total: int | None = None  # the 合计 the regulation states, a check on the bands

    @property
    def places(self) -> int:
        return max(b.last for b in self.bands)

    def amount(self, place: int) -> int:
        return next((b.yuan for b in self.bands if b.first <= place <= b.last), 0)

    @property
    def total(self) -> Decimal:
        return fen(sum(self.amount(p) for p in range(1, self.places + 1)))

    def paid_places(self, registered: int) -> int:
        if self.shrink is None or registered >= self.shrink[0]:
            return self.places
        # docs/prizes.md: rounded down (the seed says only 总人数的30%)
        return min(self.places, registered * self.shrink[1] // 100)

    def member(self, tags: Iterable[str]) -> bool:
        return not self.tags or bool(self.tags & set(tags))


@dataclass(frozen=True, kw_only=True)
class PrizeTable:
    regulation: str
    lists: tuple[PrizeList, ...]
    combinable: bool
    stated_total: int | None = None  # 总奖金

    @property
    def total(self) -> Decimal:
        return fen(sum(lst.total for lst in self.lists))

    def list(self, key: str) -> PrizeList:
        return next(lst for lst in self.lists if lst.key == key)


def _bands(*spec: tuple[int, int, int]) -> tuple[Band, ...]:
    return tuple(Band(a, b, y) for a, b, y in spec)


_SIX = _bands((1, 1, 600), (2, 2, 500), (3, 3, 400), (4, 6, 300))
# fmt: off
_WULONG_OPEN = _bands((1, 1, 5000), (2, 2, 3000), (3, 3, 1500), (4, 4, 1200), (5, 5, 1000),
                      (6, 6, 800), (7, 12, 600), (13, 18, 500), (19, 24, 400), (25, 32, 300))
_MEISHAN = _bands((1, 1, 3000), (2, 2, 1500), (3, 3, 1000), (4, 4, 800), (5, 5, 600),
                  (6, 6, 500), (7, 8, 400), (9, 12, 300), (13, 20, 200), (21, 30, 100))
# fmt: on
PRIZES = {
    "wulong-2015": PrizeTable(
        regulation="wulong-2015",
        combinable=True,  # 以上奖项可重复领取
        stated_total=28700,  # 总奖金28700元
        lists=(
            PrizeList(
                key="open",
                zh="公开组",
                en="Open",
                tags=frozenset(),
                bands=_WULONG_OPEN,
                shrink=(80, 30),  # 如报名参赛人数低于80人，则受奖面只发总人数的30%
                stated_total=23900,
            ),
            PrizeList(
                key="combined",
                zh="综合组",
                en="Combined",
                tags=frozenset({"u14", "women"}),
                bands=_SIX,
                stated_total=2400,
            ),
            PrizeList(
                key="local",
                zh="本地组",
                en="Local",
                tags=frozenset({"local"}),
                bands=_SIX,
                stated_total=2400,
            ),
        ),
    ),
    "meishan-2016": PrizeTable(
        regulation="meishan-2016",
        combinable=False,  # one list: nothing to combine
        lists=(
            PrizeList(
                key="open",
                zh="录取名次",
                en="Prizes",
                tags=frozenset(),
                bands=_MEISHAN,
            ),
        ),
    ),
}

# the regulation's own sums agree with its places (a typo in this file would show here)
for _table in PRIZES.values():
    for _lst in _table.lists:
        assert _lst.stated_total is None or _lst.total == _lst.stated_total, _lst.key
    assert _table.stated_total is None or _table.total == _table.stated_total
assert PRIZES["meishan-2016"].lists[0].places == 30  # 录取前30名


@dataclass(frozen=True)
class Prize:
    """One row of a list: places ``place``–``to`` (shared when they differ), who, how much."""

    list: str
    place: int
    to: int
    player: str
    yuan: Decimal

    @property
    def row(self) -> tuple[int, int, str, Decimal]:
        return (self.place, self.to, self.player, self.yuan)


def award(lst: PrizeList, ranked: list[tuple[int, str]], registered: int) -> list[Prize]:
    """``ranked``: (place, player) best first, equal places shared."""
    paid = lst.paid_places(registered)
    out: list[Prize] = []
    i = 0
    while i < len(ranked):
        place = ranked[i][0]
        same = [p for r, p in ranked[i:] if r == place]
        if place > paid:
            break
        to = place + len(same) - 1
        # docs/prizes.md: the sharers split the paid places they cover (unpaid ones add nothing)
        pot = sum(lst.amount(p) for p in range(place, to + 1) if p <= paid)
        yuan = fen(Decimal(pot) / len(same))
        out += [Prize(lst.key, place, to, player, yuan) for player in same]
        i += len(same)
    return out


def group_order(event: list[tuple[int, str]], members: set[str]) -> list[tuple[int, str]]:
    """The group's places among themselves, from the event's (place, player) order."""
    mine = [(place, p) for place, p in event if p in members]
    return [(1 + sum(1 for q, _ in mine if q < place), p) for place, p in mine]


def expected_prizes(
    regulation: str, event: list[tuple[int, str]], tags: dict[str, set[str]]
) -> dict[str, list[Prize]]:
    """Each list's rows from the whole event's final (place, player) order (Meishan: the
    knockout's four first, then the others from 5th) and the players' tags."""
    table = PRIZES[regulation]
    registered = len(event)  # docs/prizes.md: the rows of the whole-event standings
    out = {}
    for lst in table.lists:
        members = {p for _, p in event if lst.member(tags.get(p, set()))}
        out[lst.key] = award(lst, group_order(event, members), registered)
    return out


def final_order(
    regulation: str, rows: list[object], knockout: list[str] | None = None
) -> list[tuple[int, str]]:
    """(place, player) from seed_rules.rank's rows; Meishan: the knockout's four at 1–4 and
    ``rows`` (the others' ranking among themselves) from 5th."""
    ko = knockout or []
    head = [(i, p) for i, p in enumerate(ko, start=1)]
    return head + [(r.rank + len(ko), r.player) for r in rows]  # type: ignore[attr-defined]
