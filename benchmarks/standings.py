"""Standings of a simulated 9-round, 80-player event, against sorting as many tuples.

The event is generated with a seeded RNG (Swiss-like pairings, some fouls and forfeits) for
both seed regulations. The baseline, timed in the same run, is ``sorted()`` of one 5-int tuple
per player-round (720 for 80 x 9), so the ratio reads "the standings cost N such sorts". The
issue's acceptance bound is under 1 s for the whole computation; ``standings_ms`` is reported.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from _common import best_of, emit, parse_args, percentiles

from clock_service.regulation import Regulation
from clock_service.standings import GameRecord, compute_standings

ROUNDS, PLAYERS = 9, 80


def simulate(seed: int) -> tuple[list[GameRecord], dict[str, set[str]]]:
    rng = random.Random(seed)
    names = [f"p{i:02d}" for i in range(PLAYERS)]
    tags = {n: {t for t in ("u14", "women", "local") if rng.random() < 0.2} for n in names}
    score = dict.fromkeys(names, 0)
    met: set[frozenset[str]] = set()
    games: list[GameRecord] = []
    for rnd in range(1, ROUNDS + 1):
        pool = sorted(names, key=lambda n: (-score[n], rng.random()))
        while pool:
            a = pool.pop(0)
            b = next((p for p in pool if frozenset((a, p)) not in met), pool[0])
            pool.remove(b)
            met.add(frozenset((a, b)))
            red, black = (a, b) if rng.random() < 0.5 else (b, a)
            result = rng.choice(("red", "red", "draw", "black", "black"))
            forfeit = result != "draw" and rng.random() < 0.02
            fouls = (rng.choice((0, 0, 0, 0, 1)), rng.choice((0, 0, 0, 0, 1)))
            games.append(GameRecord(rnd, red, black, result, forfeit, *fouls))
            score[red] += {"red": 2, "draw": 1, "black": 0}[result]
            score[black] += {"red": 0, "draw": 1, "black": 2}[result]
    return games, tags


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    runs = 20 if args.quick else 200
    events = [simulate(seed) for seed in range(3)]
    regs = [Regulation.load("meishan-2016"), Regulation.load("wulong-2015")]
    rng = random.Random(0)
    rows = [tuple(rng.randrange(100) for _ in range(5)) for _ in range(PLAYERS * ROUNDS)]

    def time_once(fn: Callable[..., object], *args: Any, **kw: Any) -> float:
        start = time.perf_counter_ns()
        fn(*args, **kw)
        return float(time.perf_counter_ns() - start)

    def baseline() -> float:
        return time_once(sorted, rows)

    samples: list[float] = []
    for i in range(runs):
        games, tags = events[i % len(events)]
        reg = regs[i % len(regs)]
        samples.append(time_once(compute_standings, reg, games, players=tags))
    games, tags = events[0]
    tagged = [
        time_once(compute_standings, regs[1], games, players=tags, tag=t)
        for t in ("u14", "local") * (runs // 2)
    ]
    base = best_of(runs, baseline)
    stats = percentiles(samples)
    emit(
        {
            "benchmark": "standings",
            "quick": args.quick,
            "players": PLAYERS,
            "rounds": ROUNDS,
            "games": len(events[0][0]),
            "runs": runs,
            "baseline_sort_us": round(base / 1e3, 1),
            "standings_ms_p50": round(stats["p50"] / 1e6, 3),
            "standings_ms_max": round(stats["max"] / 1e6, 3),
            "tagged_ms_p50": round(percentiles(tagged)["p50"] / 1e6, 3),
            "under_1s": stats["max"] < 1e9,
            "ratio": round(min(samples) / base, 1),
        }
    )


if __name__ == "__main__":
    main()
