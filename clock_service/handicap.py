"""Handicap games (让先): who receives how many moves, decided by the players' tags.

Wulong 2015: “成年男子棋手对阵少儿棋手和非大师女子棋手通让二先（不论先后手）”. We read 让二先
as: the receiver makes its first ``moves`` (2) moves in a row, whichever colour it plays; red
still moves first, so a black receiver answers red's first move with two moves. Only the
receiver's extra moves (``moves - 1``) break the alternation, and they are not counted as
full moves (回合) by the move-limit and early-draw rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from clock_service.profile_table import Table
from clock_service.side import Side

if TYPE_CHECKING:
    from clock_service.regulation import Regulation

__all__ = [
    "Handicap",
    "HandicapRule",
    "TagRule",
    "full_moves",
    "handicap_for",
    "handicap_of",
    "read_handicap",
]

MAX_MOVES = 10  # consecutive moves a receiver can be given


@dataclasses.dataclass(frozen=True)
class Handicap:
    """``receiver`` makes its first ``moves`` moves in a row."""

    receiver: Side
    moves: int

    def __post_init__(self) -> None:
        if not isinstance(self.receiver, Side):
            raise ValueError(f"handicap receiver must be a Side, not {self.receiver!r}")
        if isinstance(self.moves, bool) or not isinstance(self.moves, int):
            raise ValueError(f"handicap moves must be an int, not {self.moves!r}")
        if not 2 <= self.moves <= MAX_MOVES:
            raise ValueError(f"handicap moves must be 2..{MAX_MOVES}, not {self.moves}")

    def owed(self, side: Side, moves_made: int) -> bool:
        """After ``side`` has made ``moves_made`` moves, does it move again at once?"""
        return side is self.receiver and 1 <= moves_made < self.moves

    def extra_plies(self, red_moves: int, black_moves: int) -> int:
        """The given moves made so far (beyond the ordinary alternation)."""
        made = red_moves if self.receiver is Side.RED else black_moves
        return max(0, min(made, self.moves) - 1)

    def as_dict(self) -> dict[str, object]:
        return {"receiver": self.receiver.value, "moves": self.moves}

    @classmethod
    def parse(cls, data: object) -> Handicap:
        """From ``{"receiver": "red"|"black", "moves": n}``; ValueError says what is wrong."""
        if not isinstance(data, dict) or set(data) != {"receiver", "moves"}:
            raise ValueError(f"handicap must be {{receiver, moves}}, not {data!r}")
        return cls(Side.parse(str(data["receiver"])), data["moves"])


def full_moves(red_moves: int, black_moves: int, handicap: Handicap | None = None) -> int:
    """Full moves (回合) played: the plies, less the given ones, halved."""
    extra = handicap.extra_plies(red_moves, black_moves) if handicap is not None else 0
    return (red_moves + black_moves - extra) // 2


@dataclasses.dataclass(frozen=True)
class TagRule:
    """A player holding every tag of ``tags`` and none of ``not_tags``."""

    tags: tuple[str, ...] = ()
    not_tags: tuple[str, ...] = ()

    def matches(self, tags: Iterable[str]) -> bool:
        held = set(tags)
        return held.issuperset(self.tags) and held.isdisjoint(self.not_tags)


@dataclasses.dataclass(frozen=True)
class HandicapRule:
    """The profile's ``[handicap]``: a giver against a receiver gives ``moves``."""

    moves: int
    givers: TagRule
    receivers: tuple[TagRule, ...]

    def for_players(self, red_tags: Iterable[str], black_tags: Iterable[str]) -> Handicap | None:
        red, black = tuple(red_tags), tuple(black_tags)
        for receiver, mine, theirs in ((Side.RED, red, black), (Side.BLACK, black, red)):
            if self._receives(mine) and self.givers.matches(theirs) and not self._receives(theirs):
                return Handicap(receiver, self.moves)
        return None

    def _receives(self, tags: tuple[str, ...]) -> bool:
        return any(rule.matches(tags) for rule in self.receivers)


def handicap_for(
    regulation: Regulation, red_tags: Iterable[str], black_tags: Iterable[str]
) -> Handicap | None:
    """The handicap of a game between players with these tags (None: none, or no rule)."""
    rule = regulation.handicap
    return None if rule is None else rule.for_players(red_tags, black_tags)


def read_handicap(t: Table) -> HandicapRule:
    moves = t.integer("moves", low=2, high=MAX_MOVES)
    givers = _tag_rule(t.table("givers"))
    receivers = tuple(_tag_rule(r) for r in t.tables("receivers"))
    if not receivers:
        raise t.error("receivers", "at least one receiver rule expected")
    return HandicapRule(moves, givers, receivers)


def _tag_rule(t: Table) -> TagRule:
    tags = t.codes("tags") if t.has("tags") else ()
    not_tags = t.codes("not_tags") if t.has("not_tags") else ()
    t.done()
    return TagRule(tags, not_tags)


def handicap_of(events: Iterable[Mapping[str, Any]]) -> Handicap | None:
    """The handicap a game is played with: its latest ``ready`` event's (the board's echo of the
    station's ``set_game``); None without one. Event-like mappings, as the outcome function's."""
    given = None
    for event in events:
        if event.get("type") == "ready":
            given = (event.get("data") or {}).get("handicap")
    return Handicap.parse(given) if given else None
