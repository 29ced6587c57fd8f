"""Standings of a simulated 9-round, 80-player event read from the station's store (SQLite),
against the pure computation over the same games already in memory.

The event is ``standings.simulate`` (seeded): its pairings are imported into a station, and each
game's result (and confirmed fouls) stored as board events. Timed: ``station.standings()``,
i.e. reading games + decisive events + players from the database, deriving every result and
ranking. Baseline, same run: ``compute_standings`` over the in-memory ``GameRecord``s, so the
ratio is "what the store adds". The issue's bound is under 1 s; ``stored_ms`` is reported.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import emit, parse_args, percentiles
from standings import simulate

from clock_service.regulation import Regulation
from clock_service.standings import GameRecord, compute_standings
from venue_station.config import StationConfig
from venue_station.domain.station import Station


def events_of(games: list[GameRecord], boards: dict[tuple[int, str], str]) -> list[dict[str, Any]]:
    seq: dict[str, int] = {}
    rows = []

    def row(board: str, game: str, rnd: int, type_: str, data: dict[str, Any]) -> None:
        seq[board] = seq.get(board, 0) + 1
        rows.append(
            {
                "board": board,
                "session": 1,
                "seq": seq[board],
                "node": "node-a",
                "game": game,
                "round": rnd,
                "ts": 1,
                "type": type_,
                "replay": False,
                "red_ms": 0,
                "black_ms": 0,
                "running": None,
                "data": data,
                "received_ms": 1,
            }
        )

    for g in games:
        board = boards[(g.round, g.red)]
        game = f"r{g.round}-b{board}"
        for side, n in (("red", g.red_fouls), ("black", g.black_fouls)):
            for _ in range(n):
                data = {"side": side, "reason": "长将", "status": "confirmed", "count": 1}
                row(board, game, g.round, "foul", data)
        if g.forfeit:
            loser = "black" if g.result == "red" else "red"
            data = {"side": loser, "reason": "absent", "status": "confirmed"}
            row(board, game, g.round, "forfeit", data)
        else:
            winner = None if g.result == "draw" else g.result
            row(board, game, g.round, "result", {"winner": winner, "reason": "x"})
    return rows


async def run(quick: bool) -> dict[str, Any]:
    games, tags = simulate(0)
    reg = Regulation.load("meishan-2016")
    boards: dict[tuple[int, str], str] = {}
    lines = ["round,board,red,black"]
    per_round: dict[int, int] = {}
    for g in games:
        per_round[g.round] = per_round.get(g.round, 0) + 1
        boards[(g.round, g.red)] = str(per_round[g.round])
        lines.append(f"{g.round},{per_round[g.round]},{g.red},{g.black}")
    with tempfile.TemporaryDirectory(prefix="qz-bench-") as tmp:
        config = StationConfig.from_dict(
            {"venue": "bench", "data_dir": str(Path(tmp)), "regulation": "meishan-2016"}
        )
        station = Station(config, connect=False)
        await station.start()
        try:
            await station.import_players(
                "name,tags\n" + "\n".join(f"{n},{' '.join(sorted(t))}" for n, t in tags.items())
            )
            await station.import_pairings("\n".join(lines) + "\n", send=False)
            assert station.store is not None
            await station.store.insert_events(events_of(games, boards))
            runs = 5 if quick else 30
            stored, pure = [], []
            for _ in range(runs):
                start = time.perf_counter_ns()
                rows = await station.standings()
                stored.append(float(time.perf_counter_ns() - start))
                start = time.perf_counter_ns()
                expected = compute_standings(reg, games, players=tags)
                pure.append(float(time.perf_counter_ns() - start))
            assert [r.as_dict() for r in rows] == [r.as_dict() for r in expected]
        finally:
            await station.stop()
    s, p = percentiles(stored), percentiles(pure)
    return {
        "benchmark": "standings_stored",
        "quick": quick,
        "players": len(tags),
        "games": len(games),
        "runs": runs,
        "pure_ms_p50": round(p["p50"] / 1e6, 2),
        "stored_ms_p50": round(s["p50"] / 1e6, 2),
        "stored_ms_max": round(s["max"] / 1e6, 2),
        "under_1s": s["max"] < 1e9,
        "ratio": round(s["p50"] / p["p50"], 1),
    }


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    emit(asyncio.run(run(args.quick)))


if __name__ == "__main__":
    main()
