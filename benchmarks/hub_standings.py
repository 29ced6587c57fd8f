"""A venue's standings at the federation hub: the simulated 9-round, 80-player event stored as
the hub stores a venue's reports, read back and ranked, against the ranking alone.

The event is ``standings.simulate`` (seeded), as in ``standings_stored.py``. Each game is a
``ready`` (its players), ``MOVES`` moves (the archive's bulk, which the standings must skip) and
its decision (a result, or a confirmed forfeit, with confirmed fouls), all with the ``txn`` a
station command gives them and the station's ``Decision`` on each (issue 27: the hub counts a
decision only beside it). Timed: ``venue_standings`` (federation_hub/standings.py): reading
the venue's ready/deciding events from the hub's store, deriving every game by the outcome
function and ranking. Baseline, same run: ``compute_standings`` over the in-memory
``GameRecord``s, so the ratio is "what the hub's store and derivation add".
``--postgres``: the store on a throwaway database on the tests' PostgreSQL (``_common.PG_ADMIN``,
the federation's); else SQLite in a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from _common import PG_ADMIN, emit, parse_args, percentiles, pg_url
from standings import simulate

from clock_service.regulation import Regulation
from clock_service.standings import GameRecord, compute_standings
from federation_hub.records import DecisionRecord, EventRecord
from federation_hub.standings import VenueProfiles, venue_standings
from federation_hub.store import HubStore

MOVES = 60  # moves per game stored beside the facts (a real game has ~80)


def records_of(games: list[GameRecord]) -> tuple[list[EventRecord], list[DecisionRecord]]:
    seq: dict[str, int] = {}
    per_round: dict[int, int] = {}
    out: list[EventRecord] = []
    decided: list[DecisionRecord] = []
    ts = 1_700_000_000_000

    def ev(board: str, game: str, type_: str, data: dict[str, Any]) -> None:
        nonlocal ts
        seq[board] = seq.get(board, 0) + 1
        ts += 1
        body = {"v": 1, "board": board, "node": "pi-1", "game": game, "session": 1,
                "seq": seq[board], "ts": ts, "type": type_, "replay": False,
                "clock": {"red_ms": 1, "black_ms": 1, "running": None}, "data": data,
                "txn": f"t{ts}"}  # fmt: skip
        out.append(EventRecord("bench", board, 1, seq[board], type_, game, ts, body))
        if data.get("status") == "confirmed":  # the station decided it: its Decision beside
            who = "winner" if type_ == "result" else "side"
            decision = {"v": 1, "board": board, "session": 1, "seq": seq[board], "game": game,
                        "type": type_, "status": "confirmed", who: data.get(who),
                        "reason": data["reason"], "txn": f"t{ts}", "by": "arb",
                        "ts": ts}  # fmt: skip
            decided.append(DecisionRecord("bench", board, 1, seq[board], decision))

    for g in games:
        per_round[g.round] = per_round.get(g.round, 0) + 1
        board = str(per_round[g.round])
        game = f"r{g.round}-b{board}"
        ev(board, game, "ready", {"game": game, "tc": "30m+5s", "red": g.red, "black": g.black})
        for m in range(MOVES):
            ev(board, game, "move", {"side": "red" if m % 2 else "black", "used_ms": 1, "move": m})
        for side, n in (("red", g.red_fouls), ("black", g.black_fouls)):
            for _ in range(n):
                ev(board, game, "foul", {"side": side, "reason": "x", "status": "confirmed"})
        if g.forfeit:
            loser = "black" if g.result == "red" else "red"
            ev(board, game, "forfeit", {"side": loser, "reason": "absent", "status": "confirmed"})
        else:
            winner = None if g.result == "draw" else g.result
            ev(board, game, "result", {"winner": winner, "reason": "x", "status": "confirmed"})
    return out, decided


@contextlib.asynccontextmanager
async def store_url(postgres: bool) -> AsyncIterator[str]:
    if not postgres:
        with tempfile.TemporaryDirectory(prefix="qz-bench-") as tmp:
            yield f"sqlite:///{Path(tmp) / 'hub.db'}"
        return
    import asyncpg

    name = f"qz_bench_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(**PG_ADMIN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    try:
        yield pg_url(name)
    finally:
        admin = await asyncpg.connect(**PG_ADMIN)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def run(quick: bool, postgres: bool) -> dict[str, Any]:
    games, _ = simulate(0)
    reg = Regulation.load("meishan-2016")
    profiles = VenueProfiles.load("meishan-2016", {})
    records, decided = records_of(games)
    runs = 5 if quick else 30
    stored, pure = [], []
    async with store_url(postgres) as url:
        store = await HubStore.open(url)
        try:
            for i in range(0, len(records), 1000):
                await store.add_events(records[i : i + 1000])
            for i in range(0, len(decided), 1000):
                await store.add_decisions(decided[i : i + 1000])
            for _ in range(runs):
                start = time.perf_counter_ns()
                out = await venue_standings(store, "bench", profiles)
                stored.append(float(time.perf_counter_ns() - start))
                start = time.perf_counter_ns()
                expected = compute_standings(reg, games)
                pure.append(float(time.perf_counter_ns() - start))
        finally:
            await store.close()
    assert out["standings"] == [r.as_dict() for r in expected] and out["skipped"] == []
    s, p = percentiles(stored), percentiles(pure)
    return {
        "benchmark": "hub_standings",
        "quick": quick,
        "store": "postgresql" if postgres else "sqlite",
        "games": len(games),
        "events_stored": len(records),
        "runs": runs,
        "pure_ms_p50": round(p["p50"] / 1e6, 2),
        "hub_ms_p50": round(s["p50"] / 1e6, 2),
        "hub_ms_max": round(s["max"] / 1e6, 2),
        "ratio": round(s["p50"] / p["p50"], 1),
    }


def _extra(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--postgres", action="store_true", help="store on the tests' PostgreSQL")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], _extra)
    emit(asyncio.run(run(args.quick, args.postgres)))


if __name__ == "__main__":
    main()
