"""The two seeds' scoring and ranking, written from the regulations (not from the station).

Meishan 2016 (000_…): 胜者2分，和棋1分，负者0分; "积分高者名次列前，如遇积分相同，按以下顺序
区分：累进分（每一轮积分之和）、胜局、犯规、后走局数、如无法区分，则去除第一轮得分进行比较，依此类推，
直至区分";
"记犯规1次，并扣累进分1分"; 七轮后前4名进入淘汰赛 (1v4, 2v3, winners for 1–2, losers for 3–4),
a drawn knockout game → one 10+3 game, 和棋黑胜; the others play on to round 9 for 5th place on.
Wulong 2015 (001_…): the same points and the same order; a foul costs no 累进分.

Readings where the seeds are terse (each is the plain one):
- 累进分 is the sum over rounds 1..n of the running total after each round (a round without a
  game still adds the running total), minus 1 per confirmed foul in Meishan.
- A game lost by 立即判负 (absence, fouls, a clock switched off) is a win for the opponent; a
  double no-show is a loss for both (0:0), no win, a game as black for black.
- 去除第一轮得分进行比较: drop round 1 as if unplayed and compare again in the same order (points,
  累进分 counted from round 2, wins, fouls, games as black); then rounds 1–2, and so on. Players
  equal on everything share the place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["SEEDS", "Game", "Row", "Seed", "knockout_places", "rank"]


@dataclass(frozen=True, kw_only=True)
class Seed:
    name: str
    win: int = 2
    draw: int = 1
    loss: int = 0
    foul_costs_progressive: int  # Meishan 1, Wulong 0
    fouls_lose: int  # Meishan 2, Wulong 3 (一盘棋犯规达到N次的 立即判负)
    rounds: int = 9
    knockout_after: int | None = None  # Meishan 7


SEEDS = {
    "meishan-2016": Seed(
        name="meishan-2016", foul_costs_progressive=1, fouls_lose=2, knockout_after=7
    ),
    "wulong-2015": Seed(name="wulong-2015", foul_costs_progressive=0, fouls_lose=3),
}


@dataclass(frozen=True, kw_only=True)
class Game:
    """One Swiss game as it happened: ``result`` red | black | draw | double (0:0 no-show)."""

    round: int
    red: str
    black: str
    result: str
    red_fouls: int = 0
    black_fouls: int = 0

    def __post_init__(self) -> None:
        if self.result not in ("red", "black", "draw", "double"):
            raise ValueError(f"game result {self.result!r}")

    def points(self, seed: Seed, player: str) -> int:
        if self.result == "double":
            return seed.loss
        if self.result == "draw":
            return seed.draw
        return seed.win if (self.result == "red") == (player == self.red) else seed.loss

    def won(self, player: str) -> bool:
        return self.result in ("red", "black") and (self.result == "red") == (player == self.red)

    def fouls(self, player: str) -> int:
        return self.red_fouls if player == self.red else self.black_fouls


@dataclass(frozen=True)
class Row:
    player: str
    points: int
    progressive: int
    wins: int
    fouls: int
    black_games: int
    rank: int = 0
    key: tuple[object, ...] = field(default=(), compare=False, repr=False)


def _criteria(seed: Seed, player: str, games: list[Game], first: int, last: int) -> tuple[int, ...]:
    total = progressive = wins = fouls = black = 0
    by_round = {g.round: g for g in games if player in (g.red, g.black)}
    for rnd in range(first, last + 1):
        g = by_round.get(rnd)
        if g is not None:
            total += g.points(seed, player)
            wins += g.won(player)
            fouls += g.fouls(player)
            black += g.black == player
        progressive += total
    progressive -= seed.foul_costs_progressive * fouls
    # bigger is better for each: fouls are negated
    return (total, progressive, wins, -fouls, black)


def rank(seed: Seed, games: Iterable[Game], players: Iterable[str], *, last: int) -> list[Row]:
    """The standings after round ``last``, best first; equal players share the rank."""
    games = [g for g in games if g.round <= last]
    players = list(players)
    keys = {
        p: tuple(
            x for drop in range(max(last, 1)) for x in _criteria(seed, p, games, drop + 1, last)
        )
        for p in players
    }
    order = sorted(players, key=lambda p: (tuple(-x for x in keys[p]), p))
    rows: list[Row] = []
    for i, p in enumerate(order):
        total, progressive, wins, neg_fouls, black = keys[p][:5]
        shared = i > 0 and keys[order[i - 1]] == keys[p]
        place = rows[-1].rank if shared else i + 1
        rows.append(Row(p, total, progressive, wins, -neg_fouls, black, place, keys[p]))
    return rows


def knockout_places(games: list[tuple[str, str, str, str]]) -> list[str]:
    """Places 1–4 from the knockout's decided matches: (stage, red, black, winner side), where
    stage is sf1, sf2, final or third and the winner already counts a tie-break game."""
    won = {stage: (red if side == "red" else black) for stage, red, black, side in games}
    lost = {stage: (black if side == "red" else red) for stage, red, black, side in games}
    return [won["final"], lost["final"], won["third"], lost["third"]]
