"""The FIDE TRF of a simulated 9-round, 80-player event: write (with its check), read, check,
against computing the same event's standings.

The event is generated with a seeded RNG (Swiss-like pairings by score, some forfeits and a
double forfeit per round). The baseline, timed in the same run, is ``compute_standings`` of the
same event (the station computes it for the ranks of every export), so the ratio reads "a TRF
round trip costs N standings". ``--players`` scales the field (e.g. 1000 for a large open).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from _common import best_of, emit, parse_args, percentiles

from clock_service.regulation import Regulation
from clock_service.standings import GameRecord, compute_standings
from clock_service.trf.build import Entrant, GameResult, TrfHeader, build_trf
from clock_service.trf.document import Trf

ROUNDS = 9


def simulate(seed: int, players: int) -> tuple[list[GameRecord], list[GameResult]]:
    rng = random.Random(seed)
    score = dict.fromkeys(range(1, players + 1), 0)
    met: set[frozenset[int]] = set()
    records: list[GameRecord] = []
    results: list[GameResult] = []
    for rnd in range(1, ROUNDS + 1):
        pool = sorted(score, key=lambda n: (-score[n], n))
        double = True
        while pool:
            a = pool.pop(0)
            b = next((p for p in pool if frozenset((a, p)) not in met), pool[0])
            pool.remove(b)
            met.add(frozenset((a, b)))
            red, black = (a, b) if rng.random() < 0.5 else (b, a)
            result = rng.choice(("red", "red", "draw", "black", "black"))
            forfeit = result != "draw" and rng.random() < 0.02
            if double and rng.random() < 0.05:
                result, forfeit, double = "double_forfeit", True, False
            records.append(GameRecord(rnd, str(red), str(black), result, forfeit))
            trf_result = {"red": "white"}.get(result, result)
            plain_forfeit = forfeit and result != "double_forfeit"
            results.append(GameResult(rnd, red, black, trf_result, plain_forfeit))
            points = {"red": (2, 0), "black": (0, 2), "draw": (1, 1), "double_forfeit": (0, 0)}
            score[red] += points[result][0]
            score[black] += points[result][1]
    return records, results


def main() -> None:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--players", type=int, default=80, help="players (even)")

    args = parse_args(__doc__.splitlines()[0], extra)
    runs = 10 if args.quick else 100
    reg = Regulation.load("wulong-2015")
    records, results = simulate(1, args.players)
    people = [Entrant(i, f"棋手{i}") for i in range(1, args.players + 1)]
    header = TrfHeader(name="benchmark", rounds=ROUNDS)
    ranks = {int(s.player): s.rank for s in compute_standings(reg, records)}

    def time_once(fn: Callable[..., Any], *a: Any, **kw: Any) -> tuple[float, Any]:
        start = time.perf_counter_ns()
        out = fn(*a, **kw)
        return float(time.perf_counter_ns() - start), out

    def write() -> str:
        return str(build_trf(header, people, results, after_round=ROUNDS, ranks=ranks))

    def read(text: str) -> Trf:
        trf = Trf.parse(text)
        trf.check()
        return trf

    base = best_of(runs, lambda: time_once(compute_standings, reg, records)[0])
    writes, reads = [], []
    text = ""
    for _ in range(runs):
        ns, text = time_once(write)
        writes.append(ns)
        ns, trf = time_once(read, text)
        reads.append(ns)
    assert str(trf) == text
    w, r = percentiles(writes), percentiles(reads)
    emit(
        {
            "benchmark": "trf",
            "quick": args.quick,
            "players": args.players,
            "rounds": ROUNDS,
            "bytes": len(text.encode()),
            "runs": runs,
            "baseline_standings_ms": round(base / 1e6, 3),
            "write_ms_p50": round(w["p50"] / 1e6, 3),
            "read_check_ms_p50": round(r["p50"] / 1e6, 3),
            "ratio": round((min(writes) + min(reads)) / base, 2),
        }
    )


if __name__ == "__main__":
    main()
