"""What the station keeps of the TRF side: start ranks <-> player keys, the byes, the header.

JSON in the ``meta`` table (key ``trf.state``), read by the TRF import/export (``trf_io``) and
by the standings (the byes count), so neither imports the other for it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from clock_service.standings import Bye
from clock_service.trf.document import TrfError

if TYPE_CHECKING:
    from venue_station.store.database import Store

__all__ = [
    "STATE_KEY",
    "TrfState",
    "ensure_entrants",
    "load_state",
    "save_state",
    "station_byes",
    "tournament_rounds",
]

STATE_KEY = "trf.state"


@dataclasses.dataclass
class TrfState:
    """What the station keeps of the TRF side (JSON in ``meta``)."""

    entrants: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # Entrant + "key"
    byes: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # round, player, kind
    header: dict[str, Any] = dataclasses.field(default_factory=dict)
    prohibited: list[list[Any]] = dataclasses.field(default_factory=list)
    withdrawn: list[str] = dataclasses.field(default_factory=list)  # player keys (退赛)

    def key_of(self) -> dict[int, str]:
        return {int(e["start_rank"]): str(e["key"]) for e in self.entrants}

    def rank_of(self) -> dict[str, int]:
        return {str(e["key"]): int(e["start_rank"]) for e in self.entrants}


def tournament_rounds(state: TrfState, regulation_rounds: int) -> int:
    """The tournament's number of rounds: the players file's (``142``/``XXR``, kept in the
    header), else the regulation's."""
    rounds = state.header.get("rounds")
    return int(rounds) if rounds else regulation_rounds


async def load_state(store: Store) -> TrfState:
    text = await store.get_meta(STATE_KEY)
    return TrfState(**json.loads(text)) if text else TrfState()


async def save_state(store: Store, state: TrfState) -> None:
    await store.set_meta(STATE_KEY, json.dumps(dataclasses.asdict(state), ensure_ascii=False))


def station_byes(state: TrfState, win: int, draw: int) -> list[Bye]:
    """The byes as the standings count them: U and F the win's points, H the draw's (Z none)."""
    points = {"U": win, "F": win, "H": draw}
    key = state.key_of()
    return [
        Bye(int(b["round"]), key[int(b["player"])], points[b["kind"]])
        for b in state.byes
        if b["kind"] in points and int(b["player"]) in key
    ]


async def ensure_entrants(store: Store, state: TrfState, names: Collection[str]) -> bool:
    """Give every known player a start rank (kept once given): players imported from CSV are
    numbered after the others by rating (highest first), then name. True if any was added."""
    have = state.rank_of()
    missing = sorted(set(names) - set(have))
    if not missing:
        return False
    ratings = await store.reads.player_ratings()
    missing.sort(key=lambda n: (-(ratings.get(n) or 0), n))
    nxt = max((int(e["start_rank"]) for e in state.entrants), default=0)
    for name in missing:
        nxt += 1
        if nxt > 9999:
            raise TrfError("more than 9999 players: a TRF start rank has four digits")
        state.entrants.append(
            {"start_rank": nxt, "key": name, "name": name[:33], "rating": ratings.get(name)}
        )
    return True
