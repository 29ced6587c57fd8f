"""A pairs file into the station (all or nothing) and a round's ``set_game`` to its boards.

Split out of ``station.py`` (which keeps thin methods of the same names): what an import may
change is ``import_guard.py``'s, the audit ``tournament_desk.py``'s, the transaction the
store's (``round_import.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from clock_service.regulation import Regulation, handicap_for
from venue_station.domain import tournament_desk
from venue_station.domain.import_guard import check_not_withdrawn, guard_rounds
from venue_station.domain.knockout_boards import place_beside_knockout
from venue_station.domain.pairings import parse_pairings
from venue_station.domain.rematches import rematches
from venue_station.domain.trf_state import load_state
from venue_station.store.database import game_id

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["import_pairings", "send_round", "set_game_args"]


async def import_pairings(
    station: Station,
    data: str | bytes,
    *,
    source: str = "pairings.csv",
    send: bool = True,
    user: str | None = None,
    replace: int | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Store the file's rounds all or nothing. A round with results or clocks running is
    refused (``ImportRefused``) unless ``replace`` names it (its results are voided);
    ``dry_run``: check and say what it would change, store nothing."""
    store = station.require_store()
    known = await store.player_names()
    pairings = await asyncio.to_thread(parse_pairings, data, source=source, players=known or None)
    by_round: dict[int, list[dict[str, Any]]] = {}
    for p in pairings:
        by_round.setdefault(p.round, []).append({"board": p.board, "red": p.red, "black": p.black})
    moved = await place_beside_knockout(station, by_round)  # Meishan's rounds 8–9
    assert station.ingest is not None
    withdrawn = (await load_state(store)).withdrawn
    for rows in by_round.values():
        check_not_withdrawn(rows, withdrawn)
    guard = await guard_rounds(station, by_round, replace=replace)
    shown: dict[str, Any] = {"moved_boards": {str(r): m for r, m in moved.items()}} if moved else {}
    again = rematches(await store.games(), by_round)
    if again:
        shown["rematches"] = again
    if dry_run:
        return {"dry_run": True, "imported": len(pairings), **guard.as_dict(), **shown}
    before = await tournament_desk.rounds_before(store, by_round)
    # all or nothing (round_import.py), the voided results in the same transaction
    await store.replace_rounds(station.tc, by_round, void=guard.void, by=user)
    entry = await tournament_desk.record(
        store, user=user, what="import_pairings", args={"rounds": sorted(by_round)},
        before=before, after={"rounds": sorted(by_round), "voided": list(guard.void)},
    )  # fmt: skip
    for round_no, rows in by_round.items():
        for row in rows:
            station.ingest.authority.bind(game_id(round_no, row["board"]), row["board"])
    station.ingest.add_paired_boards({r["board"] for rows in by_round.values() for r in rows})
    await station.round_boards.refresh(station)
    out: dict[str, Any] = {
        "imported": len(pairings),
        "rounds": sorted(by_round),
        "audit": entry["id"],
        **shown,
    }
    if guard.void:
        out["voided_results"] = list(guard.void)
    if send:
        out["set_game"] = {}
        for round_no in sorted(by_round):
            out["set_game"].update(await station.send_round(round_no, user=user))
    return out


async def send_round(station: Station, round_no: int, *, user: str | None = None) -> dict[str, Any]:
    """``set_game`` to every board of the round, concurrently; board -> the reply."""
    games = await station.require_store().games(round_no)
    tags = await station.require_store().reads.player_tags()

    async def one(game: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        args = set_game_args(station.regulation, game, tags)
        try:
            return game["board"], (
                await station.send_command(game["board"], "set_game", args, user=user)
            ).as_dict()
        except ConnectionError as exc:
            return game["board"], {"outcome": "not_sent", "ok": False, "error": str(exc)}

    return dict(await asyncio.gather(*(one(g) for g in games)))


def set_game_args(
    regulation: Regulation, game: Mapping[str, Any], tags: Mapping[str, Collection[str]]
) -> dict[str, Any]:
    """The ``set_game`` of a stored game: its id, time control and players, and 让二先 (Wulong)
    as the profile decides it from the players' tags."""
    args: dict[str, Any] = {
        "game": game["game"],
        "tc": game["tc"],
        "red": game["red"],
        "black": game["black"],
    }
    handicap = handicap_for(regulation, tags.get(game["red"], ()), tags.get(game["black"], ()))
    if handicap is not None:
        args["handicap"] = handicap.as_dict()
    return args
