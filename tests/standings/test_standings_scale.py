"""A simulated 9-round, 80-player Swiss event (seeded), checked against a separate pairwise
reading of the regulation's order. The speed of this is measured in benchmarks/standings.py."""

from __future__ import annotations

import functools
import itertools
import random

import pytest

from clock_service.regulation import Regulation
from clock_service.standings import GameRecord, compute_standings

ROUNDS, PLAYERS = 9, 80


def simulate(seed: int, players: int = PLAYERS, rounds: int = ROUNDS) -> list[GameRecord]:
    """Swiss-like: pair neighbours by score who have not met, alternate colours; the stronger
    (lower number) usually wins; some fouls, an occasional forfeit."""
    rng = random.Random(seed)
    names = [f"p{i:02d}" for i in range(players)]
    score = dict.fromkeys(names, 0)
    met: set[frozenset[str]] = set()
    blacks = dict.fromkeys(names, 0)
    games: list[GameRecord] = []
    for rnd in range(1, rounds + 1):
        pool = sorted(names, key=lambda n: (-score[n], rng.random()))
        while pool:
            a = pool.pop(0)
            b = next((p for p in pool if frozenset((a, p)) not in met), pool[0])
            pool.remove(b)
            met.add(frozenset((a, b)))
            red, black = (a, b) if blacks[a] >= blacks[b] else (b, a)
            blacks[black] += 1
            edge = (int(black[1:]) - int(red[1:])) / players  # > 0: red is stronger
            roll = rng.random() + edge * 0.5
            result = "red" if roll > 0.6 else "draw" if roll > 0.35 else "black"
            forfeit = result != "draw" and rng.random() < 0.02
            fouls = [rng.choice((0, 0, 0, 0, 0, 1)) for _ in range(2)]
            games.append(GameRecord(rnd, red, black, result, forfeit, fouls[0], fouls[1]))
            score[red] += {"red": 2, "draw": 1, "black": 0}[result]
            score[black] += {"red": 0, "draw": 1, "black": 2}[result]
    return games


def reference_cmp(reg: Regulation, games: list[GameRecord], rounds: int):  # type: ignore[no-untyped-def]
    """Compare two players by reading the seed's text literally, one pair at a time."""
    per: dict[str, list[tuple[int, int, int, int]]] = {}  # per round: points, win, fouls, black
    for g in games:
        for name in (g.red, g.black):
            per.setdefault(name, [(0, 0, 0, 0)] * rounds)
        red_pts = {"red": 2, "draw": 1, "black": 0}[g.result or "draw"]
        per[g.red][g.round - 1] = (red_pts, int(red_pts == 2), g.red_fouls, 0)
        per[g.black][g.round - 1] = (2 - red_pts, int(red_pts == 0), g.black_fouls, 1)
    penalty = reg.fouls.progressive_penalty

    def stats(name: str, first: int) -> list[int]:
        rows = per[name][first:]
        totals = [sum(r[0] for r in rows[: i + 1]) for i in range(len(rows))]
        fouls = sum(r[2] for r in rows)
        # points, 累进分, wins: more is better; fouls fewer; black games more
        return [totals[-1], sum(totals) - penalty * fouls, sum(r[1] for r in rows), -fouls,
                sum(r[3] for r in rows)]  # fmt: skip

    def cmp(a: str, b: str) -> int:
        for first in range(rounds):  # 0: all rounds; then without rounds 1..first
            sa, sb = stats(a, first), stats(b, first)
            if sa != sb:
                return -1 if sa > sb else 1
        return 0

    return cmp


@pytest.mark.parametrize("profile", ["meishan-2016", "wulong-2015"])
@pytest.mark.parametrize("seed", [1, 2])
def test_simulated_event_agrees_with_a_pairwise_reading(profile: str, seed: int) -> None:
    reg = Regulation.load(profile)
    games = simulate(seed)
    rows = compute_standings(reg, games)
    assert len(rows) == PLAYERS
    assert sum(r.points for r in rows) == 2 * len(games)  # every game hands out 2 points
    assert sum(r.black_games for r in rows) == len(games)
    assert sum(r.fouls for r in rows) == sum(g.red_fouls + g.black_fouls for g in games)
    cmp = reference_cmp(reg, games, ROUNDS)
    expected = sorted((r.player for r in rows), key=functools.cmp_to_key(cmp))
    for above, below in itertools.pairwise(rows):
        verdict = cmp(above.player, below.player)
        assert verdict <= 0, (above, below)
        assert (verdict == 0) == (above.rank == below.rank) == (above.decided_by is None)
    # Same order as the reference, up to the order inside a shared place.
    assert [cmp(a, b) for a, b in zip([r.player for r in rows], expected, strict=True)] == [
        0
    ] * PLAYERS
    # The simulation really exercises the later criteria.
    used = {(r.decided_by, r.dropped_rounds > 0) for r in rows}
    assert len(used) >= 3, used


def test_meishan_deducts_fouls_from_progressive_in_the_simulation() -> None:
    games = simulate(5)
    meishan = {r.player: r for r in compute_standings(Regulation.load("meishan-2016"), games)}
    wulong = {r.player: r for r in compute_standings(Regulation.load("wulong-2015"), games)}
    for name, row in meishan.items():
        assert wulong[name].progressive - row.progressive == row.fouls
        assert (row.points, row.wins, row.black_games) == (
            wulong[name].points,
            wulong[name].wins,
            wulong[name].black_games,
        )
