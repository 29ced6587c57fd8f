"""What an import may change: never a round that has results or is being played, unless the
chief chose to replace that round (its results are then voided: kept, marked, no longer
counted); never a start rank; never with the players of another event; and no round while an
earlier round's game waits for a ruling that decides or counts (its outcome still a proposal: a
flag's loss, a forfeit or a 0:0 proposed; or a foul proposed): sent to the boards, the new
games would put that ruling out of reach for good. (A forfeit proposed after a result stood,
or a pending warning, does not hold the import: the result counts as it is.)

The checks run before anything is stored, so a refused import changes nothing; a dry run
(``preview``) runs them and says what the import would change.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from venue_station.errors import ImportRefused

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = [
    "RoundGuard",
    "check_coverage",
    "check_entrants",
    "check_not_withdrawn",
    "guard_rounds",
    "no_ruling_waits",
    "same_event",
]

_IN_PLAY = ("running", "paused")
_NAMED = 10  # players named in a refusal, at most
RULING_IN_FLIGHT_S = 1.5  # a ruling just made: its board's event is milliseconds away


@dataclass(frozen=True)
class RoundGuard:
    """What replacing these rounds does: the games whose results are voided."""

    rounds: tuple[int, ...]
    void: tuple[str, ...] = ()
    replaced: dict[int, int] = field(default_factory=dict)  # round -> games stored before

    def as_dict(self) -> dict[str, Any]:
        return {
            "rounds": list(self.rounds),
            "replaced_games": {str(r): n for r, n in self.replaced.items()},
            "voided_results": list(self.void),
        }


async def guard_rounds(
    station: Station, rounds: Iterable[int], *, replace: int | None = None
) -> RoundGuard:
    """Refuse (``ImportRefused``) to touch a round with results or clocks running unless
    ``replace`` names it; the games whose results replacing would void."""
    store = station.require_store()
    wanted = tuple(sorted(set(rounds)))
    if wanted:
        await no_ruling_waits(station, wanted[0])
    live = {
        str(v.state.get("game")): str(v.state.get("phase"))
        for v in (station.ingest.boards.values() if station.ingest else ())
        if v.state
    }
    void: list[str] = []
    replaced: dict[int, int] = {}
    for round_no in wanted:
        games = await store.games(round_no)
        replaced[round_no] = len(games)
        decided = [g["game"] for g in games if g.get("result")]
        playing = [g["game"] for g in games if live.get(g["game"]) in _IN_PLAY]
        if replace == round_no:
            void += [g for g in (*decided, *playing) if g not in void]
            continue
        if decided:
            raise ImportRefused(
                "round_has_results",
                f"round {round_no} has {len(decided)} result(s); choose to replace round "
                f"{round_no} (its results will be voided) to import it",
                round=round_no,
                results=len(decided),
            )
        if playing:
            raise ImportRefused(
                "round_in_play",
                f"round {round_no} is being played ({len(playing)} clock(s) running); choose "
                f"to replace round {round_no} to import it",
                round=round_no,
                playing=len(playing),
            )
    return RoundGuard(wanted, tuple(void), replaced)


async def no_ruling_waits(station: Station, round_no: int) -> None:
    """Refuse (``rulings_pending``) while a game of a round before ``round_no`` has a proposal
    the arbiter has not ruled: its board's next game would leave it nowhere to be ruled, the
    game pending for good and the pairing program's file refused. A ruling made a moment ago
    may still be on its way from its board (the node answers before its event is published):
    such a game is looked at again for ``RULING_IN_FLIGHT_S`` before the refusal."""
    waiting = await _waiting(station, round_no)
    deadline = asyncio.get_running_loop().time() + RULING_IN_FLIGHT_S
    while waiting and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
        waiting = await _waiting(station, round_no)
    if waiting:
        first = min(waiting)
        boards = waiting[first]
        raise ImportRefused(
            "rulings_pending",
            f"round {first} still has {len(boards)} game(s) waiting for a ruling (board(s) "
            f"{', '.join(boards)}): rule them on the arbiter's page before pairing round "
            f"{round_no}",
            round=first,
            count=len(boards),
            boards=", ".join(boards[:_NAMED]),
        )


async def _waiting(station: Station, round_no: int) -> dict[int, list[str]]:
    """round → the boards of its games that wait for a ruling, rounds before ``round_no``."""
    if station.ingest is not None:
        with contextlib.suppress(TimeoutError):  # a store that fails: judged on what it has
            async with asyncio.timeout(RULING_IN_FLIGHT_S):
                await station.ingest.flush()  # what has arrived is stored first
    waiting: dict[int, list[str]] = {}
    for game, outcome in await station.outcomes():
        if int(game["round"]) >= round_no:
            continue
        fouls = outcome.fouls or {}
        if outcome.status == "pending" or any(f.get("pending") for f in fouls.values()):
            waiting.setdefault(int(game["round"]), []).append(str(game["board"]))
    return waiting


def check_coverage(
    round_no: int,
    paired: Collection[int],
    byes: Collection[int],
    entrants: Mapping[int, str],
    withdrawn: Collection[str] = (),
) -> list[str]:
    """The players a pairs list leaves out (neither paired nor given a bye; the withdrawn
    aside). An engine leaves out the few it was told are absent; a file that leaves out more
    than a quarter of the event (at least 3) is another event's, refused naming them."""
    left = sorted(
        rank
        for rank, key in entrants.items()
        if rank not in paired and rank not in byes and key not in withdrawn
    )
    if len(left) > max(2, len(entrants) // 4):
        names = [entrants[r] for r in left[:_NAMED]]
        raise ImportRefused(
            "players_unpaired",
            f"round {round_no}: {len(left)} player(s) neither paired nor given a bye "
            f"({', '.join(names)}{' …' if len(left) > _NAMED else ''}): a file of another event?",
            round=round_no,
            count=len(left),
            players=names,
        )
    return [entrants[r] for r in left]


def check_entrants(
    kept: Mapping[int, str], incoming: Mapping[int, str], playing: Collection[str]
) -> dict[int, tuple[str, str]]:
    """A players file keeps every start rank the station gave to the same player and every
    player who has a game: a file of another event is refused, naming the mismatch. A name put
    right in the pairing program (王晓明 → 王小明, registration day) is taken for a player
    who has no game yet, to a name no other start rank has, a few at a time (more than a
    quarter of the field, at least 3, is another event's file). Returns the renames: start
    rank -> (name here, name in the file)."""
    renames: dict[int, tuple[str, str]] = {}
    rank_of = {name: rank for rank, name in kept.items()}
    for rank in sorted(set(kept) & set(incoming)):
        if kept[rank] == incoming[rank]:
            continue
        mismatch = {"start_rank": rank, "kept": kept[rank], "file": incoming[rank]}
        if kept[rank] in playing:
            raise ImportRefused(
                "players_mismatch",
                f"start rank {rank} is {kept[rank]} here but {incoming[rank]} in the file, and "
                f"{kept[rank]} has a game here: a player paired or played keeps his name",
                cause="played",
                **mismatch,
            )
        if incoming[rank] in rank_of:
            raise ImportRefused(
                "players_mismatch",
                f"start rank {rank} is {kept[rank]} here but {incoming[rank]} in the file, who "
                f"is start rank {rank_of[incoming[rank]]} here: start ranks are never "
                "reassigned once a round is paired",
                cause="moved",
                other_rank=rank_of[incoming[rank]],
                **mismatch,
            )
        renames[rank] = (kept[rank], incoming[rank])
    limit = max(2, len(kept) // 4)
    if len(renames) > limit:
        rank = min(renames)
        raise ImportRefused(
            "players_mismatch",
            f"{len(renames)} start ranks name other players than here (at most {limit} are "
            "taken as names put right): a file of another event?",
            cause="many",
            count=len(renames),
            limit=limit,
            start_rank=rank,
            kept=kept[rank],
            file=incoming[rank],
        )
    names = set(incoming.values())
    missing = sorted(p for p in playing if p not in names)
    if missing:
        shown = missing[:_NAMED]
        raise ImportRefused(
            "players_mismatch",
            f"{len(missing)} player(s) with games here are not in the file "
            f"({', '.join(shown)}{' …' if len(missing) > _NAMED else ''}): a file of another "
            "event?",
            missing=shown,
            count=len(missing),
        )
    return renames


def same_event(kept: Mapping[int, str], incoming: Mapping[int, str]) -> None:
    """Before round 1 a renumbered players file is taken (its players matched by name) when
    most of its names are the station's: fewer than three in four of the shorter list in
    common is another event's file, refused."""
    common = set(kept.values()) & set(incoming.values())
    shorter = min(len(kept), len(incoming))
    if shorter and len(common) * 4 < shorter * 3:
        raise ImportRefused(
            "players_mismatch",
            f"only {len(common)} of the file's {len(incoming)} players are among the "
            f"station's {len(kept)}: a file of another event?",
            cause="another_event",
            count=len(common),
            file_count=len(incoming),
            kept_count=len(kept),
        )


def check_not_withdrawn(rows: Iterable[Mapping[str, Any]], withdrawn: Collection[str]) -> None:
    """No import pairs a withdrawn player (re-admit first)."""
    for row in rows:
        for side in ("red", "black"):
            if row[side] in withdrawn:
                raise ImportRefused(
                    "player_withdrawn",
                    f"board {row['board']}: {row[side]} has withdrawn (re-admit to pair)",
                    player=row[side],
                    board=str(row["board"]),
                )
