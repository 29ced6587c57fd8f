"""``qizhong station rebuild``: the rounds the boards played, back from their journals (issue 28).

A station rebuilt on an empty store (its disk lost, no backup) gets every board's events back
from the nodes (paced rebirths, ``docs/operations.md`` "Rebuild") and trusts its predecessor's
decisions by their signed txns (``venue_station/intake/signed_txn.py``). What it still lacks is
the tournament around them: players, rounds, pairings. The boards know them for every game they
were given: each ``set_game`` the station sent is journaled as the board's ``ready`` event with
the game's id (``r{round}-b{board}``) and both players' names. So, once every board has caught
up, each round the store does not hold is made again from those events: its players (names
only: ratings, clubs and tags are in a backup), its pairings and games, and each game's result
derived from its events as the writer derives it — a confirmed result counts, a proposal does
not. A round the store already holds (restored from a backup) is left as it is: the backup
speaks for what it has, the boards for what came after.

Only what the station itself set is taken: a ``ready`` event whose txn is the station's signed
``set_game`` txn for that board, game and both names (``venue_station/intake/signed_txn.py``;
the station's ``decision_key_file``). A node can journal any ``ready`` it likes, but without
the key it cannot make up a pairing, move a player to another board or game, or rename one;
a station without the key (or with another) makes no round. Only a board's events for its own
game id count (``r3-b2`` from board 2), and only with both names: a test game, a carry-over
id or a game set without players makes no round. The
round's time control is the station's (the regulation's); a board's own is in its events.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import TYPE_CHECKING, Any

from venue_station.intake.signed_txn import STATION_SET
from venue_station.store.round_import import game_id

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["caught_up", "rebuild_rounds", "recover_rounds"]

log = logging.getLogger(__name__)

_GAME = re.compile(r"^r([1-9][0-9]{0,3})-b(.+)$")
READY_LIMIT = 1_000_000


async def recover_rounds(station: Station) -> dict[str, Any]:
    """Make the rounds the store lacks from the boards' ``ready`` events; say what was made."""
    store = station.require_store()
    assert station.ingest is not None
    held = {int(r["round"]) for r in await store.rounds()}
    signer = station.ingest.authority.signer
    if signer is None:
        log.warning("rebuild: no decision key: no round made from the boards' journals")
        return {"rounds": [], "players": 0, "games": 0, "unsigned": 0}
    unsigned = 0
    latest: dict[str, dict[str, Any]] = {}  # game -> its board's last ready (a re-set wins)
    for ev in await store.events(types=("ready",), limit=READY_LIMIT):
        data, game = ev.get("data") or {}, ev.get("game")
        found = _GAME.match(game or "")
        if found is None or found.group(2) != ev["board"] or int(found.group(1)) in held:
            continue
        assert isinstance(game, str)
        if not (isinstance(data.get("red"), str) and isinstance(data.get("black"), str)):
            continue
        if data.get(STATION_SET) is not True:  # checked against the key as it came (guard.py)
            unsigned += 1  # not the station's pairing (or before a key): not trusted
            continue
        latest[game] = {"round": int(found.group(1)), "board": ev["board"], **data}
    by_round: dict[int, list[dict[str, Any]]] = {}
    for row in latest.values():
        by_round.setdefault(row["round"], []).append(
            {"board": row["board"], "red": row["red"], "black": row["black"]}
        )
    if not by_round:
        return {"rounds": [], "players": 0, "games": 0, "unsigned": unsigned}
    known = await store.player_names()
    names = sorted({n for rows in by_round.values() for r in rows for n in (r["red"], r["black"])})
    new = [{"name": n} for n in names if n not in known]
    if new:
        await store.add_players(new)
    await store.replace_rounds(station.tc, by_round, by="rebuild")
    games = []
    for round_no, rows in sorted(by_round.items()):
        for row in rows:
            game = game_id(round_no, row["board"])
            station.ingest.authority.bind(game, row["board"])
            games.append(game)
    station.ingest.add_paired_boards({r["board"] for rows in by_round.values() for r in rows})
    await station.round_boards.refresh(station)
    for game in games:
        await station.ingest.writer.update_game(
            game
        )  # its result from its events, as the writer does
    out = {"rounds": sorted(by_round), "players": len(new), "games": len(games)}
    out["unsigned"] = unsigned
    log.info("rebuild: rounds %s from the boards' journals (%d players, %d games)",
             out["rounds"], out["players"], out["games"])  # fmt: skip
    return out


def caught_up(station: Station) -> bool:
    """Every board the station sees has told its last seq and nothing is missing below it."""
    ingest = station.ingest
    if ingest is None or not ingest.boards:
        return False
    for board in ingest.boards:
        seqs = ingest.seqs.get(board)
        if seqs.has_gap or seqs.expected == 0 or seqs.watermark < seqs.expected:
            return False
    return True


async def rebuild_rounds(
    station: Station, *, settle_s: float = 2.0, timeout_s: float = 600.0
) -> dict[str, Any]:
    """Wait until the boards have caught up (and stayed so ``settle_s``, so a board that
    comes online a moment later is waited for too), flush the writer, then ``recover_rounds``.
    After ``timeout_s`` it recovers what it has (a board that never came back is missing)."""
    assert station.ingest is not None
    deadline = time.monotonic() + timeout_s
    steady_since: float | None = None
    while time.monotonic() < deadline:
        now = time.monotonic()
        if caught_up(station):
            steady_since = steady_since or now
            if now - steady_since >= settle_s:
                break
        else:
            steady_since = None
        await asyncio.sleep(0.1)
    else:
        log.warning(
            "rebuild: boards not all caught up after %.0f s: rounds from what came", timeout_s
        )
    await station.ingest.flush()
    return await recover_rounds(station)
