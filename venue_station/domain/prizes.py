"""The prize list from the standings the pages show (docs/prizes.md).

The drawing is ``clock_service.prizes`` (pure); this module hands it the rankings: the whole
event's list as the standings page shows it (the final list once Meishan's knockout is
finished) and each group's (``?tag=``), the registered count (the whole list's rows), and says
why the list is still provisional.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clock_service.prizes import AwardedList, PrizeList, PrizeTable, award_all, yuan_text
from clock_service.standings import Standing
from venue_station.domain.standings import standings_of
from venue_station.domain.trf_state import TrfState, load_state, tournament_rounds

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["PrizeSheet", "draw_prizes", "provisional_reasons"]


@dataclass(frozen=True)
class PrizeSheet:
    table: PrizeTable
    lists: list[AwardedList]
    registered: int
    provisional: list[str]  # rounds | undecided | knockout
    withdrawn: frozenset[str]
    knockout_places: dict[str, int]
    members: list[int]  # each list's players (a group may have fewer than its prizes)
    tags: dict[str, list[str]]  # player -> tags (a group's row says why he is in it)
    awaiting: tuple[str, ...] = ()  # the knockout's four while it is played: places 1–4 open

    def as_dict(self, regulation: str) -> dict[str, Any]:
        return {
            "regulation": regulation,
            "final": not self.provisional,
            "provisional": self.provisional,
            "registered": self.registered,
            "combinable": self.table.combinable,
            "total": yuan_text(self.table.total_fen),
            "lists": [
                self._list(done, n) for done, n in zip(self.lists, self.members, strict=True)
            ],
        }

    def _open(self, prize_list: PrizeList, player: str) -> bool:
        return not prize_list.tags and player in self.awaiting

    def _list(self, done: AwardedList, members: int) -> dict[str, Any]:
        p = done.prize_list
        shrink = p.shrink
        return {
            "key": p.key,
            "zh": p.zh,
            "en": p.en,
            "tags": list(p.tags),
            "places": p.places,
            "members": members,
            "paid_places": done.paid_places,
            "shrunk": (
                {"below": shrink.below, "percent": shrink.percent}
                if shrink is not None and done.shrunk
                else None
            ),
            "total": yuan_text(p.total_fen),
            "paid": yuan_text(done.paid_fen),
            "rows": [
                {
                    "place": a.place,
                    "to": a.to,
                    "player": a.player,
                    # the four's places (and so their prizes) wait for the knockout
                    "prize": "" if self._open(p, a.player) else yuan_text(a.fen),
                    "knockout_pending": self._open(p, a.player),
                    "shared": a.shared,
                    "withdrawn": a.player in self.withdrawn,
                    "knockout_place": self.knockout_places.get(a.player) if not p.tags else None,
                    "tags": sorted(set(self.tags.get(a.player, ())) & set(p.tags)),
                }
                for a in done.awards
            ],
        }


def _ranked(rows: list[Standing]) -> list[tuple[str, int]]:
    return [(s.player, s.rank) for s in rows]


async def provisional_reasons(
    station: Station, state: TrfState, final: bool, games: list[Any] | None = None
) -> list[str]:
    """Why the whole event's list is not final yet: ``rounds`` to play, games ``undecided``,
    the ``knockout`` to finish (none: the last round is played and decided). ``games``: the
    station's outcomes when the caller has them already."""
    reasons: list[str] = []
    games = await station.outcomes() if games is None else games
    last = max((int(g["round"]) for g, _ in games), default=0)
    # the event's rounds: the players file's (142/XXR) where it says, else the regulation's
    rounds = tournament_rounds(state, station.regulation.tournament.rounds)
    if last < rounds:
        reasons.append("rounds")
    if any(o.status != "confirmed" for _, o in games):
        reasons.append("undecided")
    if station.regulation.knockout is not None and not final:
        reasons.append("knockout")
    return reasons


async def draw_prizes(station: Station) -> PrizeSheet | None:
    """The prize list now, or None when the regulation has no prizes. Raises what the
    standings raise (``StandingsError``, ``KnockoutError``)."""
    table = station.regulation.prizes
    if table is None:
        return None
    whole, final = await station.shown_standings()
    # Meishan before its knockout is finished: places 1–4 are the knockout's four, in an order
    # not known yet; the rest rank among themselves from 5 (as the final list will rank them;
    # a reviewer: the Swiss order put the four anywhere and shifted every prize from 5th on)
    awaiting: tuple[str, ...] = ()
    if station.regulation.knockout is not None and not final:
        async with station.knockout.lock:
            rec = await station.knockout.current()
        awaiting = tuple(rec.ko.top) if rec is not None else ()
    state = await load_state(station.require_store())
    withdrawn = frozenset(state.withdrawn)

    def entered(s: Standing) -> bool:
        # 报名参赛: everyone in the list but a player withdrawn before he ever played (a row
        # imported by mistake, a no-show who withdrew before round 1: docs/prizes.md); he
        # counts for no 30 % and takes no place in any list (a reviewer: a group paid him)
        return not (s.player in withdrawn and s.games == 0 and not s.points)

    ranked_of = []
    for prize_list in table.lists:
        if not prize_list.tags and awaiting:
            rest = await standings_of(station.require_store(), station.regulation, without=awaiting)
            four = [(p, 1) for p in awaiting]  # one shared group: places 1–4
            ranked_of.append(four + [(s.player, s.rank + len(four)) for s in rest if entered(s)])
            continue
        if not prize_list.tags:
            rows = whole
        else:
            tag = prize_list.tags[0] if len(prize_list.tags) == 1 else prize_list.tags
            rows = await station.standings(tag=tag)
        ranked_of.append(_ranked([s for s in rows if entered(s)]))
    registered = sum(1 for s in whole if entered(s))
    places = {s.player: s.knockout_place for s in whole if s.knockout_place is not None}
    tags = {s.player: sorted(s.tags) for s in whole}
    return PrizeSheet(
        table,
        award_all(table, ranked_of, registered=registered),
        registered,
        await provisional_reasons(station, state, final),
        withdrawn,
        places,
        [len(r) for r in ranked_of],
        tags,
        awaiting,
    )
