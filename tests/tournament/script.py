"""What happens in the event: the players, each round's pairs and each board's story.

Pure: no browser, no station. The pairs come from the test's own results (a Swiss-like
pairing by score), so the station's standings never steer the event; each board's plan says
what the players and the arbiter do and what the seed makes of it (``expected``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tournament.seed_rules import Game, Seed, rank

__all__ = ["SURNAMES", "Plan", "pair_round", "pairs_text", "player_names", "players_trf"]

SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋"
GIVEN = "天一惟桐志强伟东海波建国春明华立新宏斌俊杰文博宇浩然子轩思远嘉豪振德胜家乐铭泽"

# Each kind of board story, as the arbiter meets it (docs/station.md "The arbiter's day"):
KINDS = (
    "result",  # the players play a few moves, the arbiter enters the result on the page
    "draw",  # the same with a draw entered
    "flag_confirmed",  # the side on move runs out of time; 确认 on the flag alert: it loses
    "flag_dismissed",  # a flag falls, 驳回 (the players had agreed a draw first): draw entered
    "pause_confirmed",  # red pauses the clock without cause: foul confirmed, play on, result
    "pause_dismissed",  # black pauses (justified): dismissed, play on, result
    "switched_off",  # the side on move switches the clock off: 确认 → it loses at once
    "late",  # black never comes (15 minutes after the round's start): 确认 → black loses
    "late_alert",  # the same, ruled by 确认 on the 迟到 alert itself (not its 判负待裁定)
    "switched_off_alert",  # as switched_off, ruled by 确认 on the 擅自关闭棋钟 alert itself
    "no_show",  # neither comes: both late, both confirmed: 0:0
    "three_fouls",  # Wulong: red pauses three times, each foul confirmed → red loses
)


@dataclass(frozen=True, kw_only=True)
class Plan:
    round: int
    board: str
    red: str
    black: str
    kind: str
    winner: str  # red | black | draw: the result entered (or the one the rules give)
    moves: int = 2  # presses by each side before the story's act

    def expected(self) -> Game:
        fouls = {"pause_confirmed": (1, 0), "three_fouls": (3, 0)}.get(self.kind, (0, 0))
        result = {
            "flag_confirmed": "black",  # red (on move) flags
            "flag_dismissed": "draw",
            "switched_off": "red",  # black was on move and switched it off
            "switched_off_alert": "red",
            "late": "red",
            "late_alert": "red",
            "no_show": "double",
            "three_fouls": "black",
            "draw": "draw",
        }.get(self.kind, self.winner)
        return Game(
            round=self.round,
            red=self.red,
            black=self.black,
            result=result,
            red_fouls=fouls[0],
            black_fouls=fouls[1],
        )


def player_names(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    names: set[str] = set()
    while len(names) < count:
        names.add(rng.choice(SURNAMES) + "".join(rng.sample(GIVEN, 2)))
    listed = sorted(names)  # not the set's order: it changes with PYTHONHASHSEED
    rng.shuffle(listed)
    return listed


def players_trf(event: str, names: list[str]) -> str:
    """A TRF of the registered players only (docs/pairing.md "The 001 line"): start rank =
    the registration order."""
    lines = [f"012 {event}"]
    for i, name in enumerate(names, start=1):
        # 1-3 001, 5-8 rank, 10 sex, 11-13 title, 15-47 name, 49-52 rating, 81-84 points
        line = f"001 {i:>4}      {name}"
        line = line + " " * (80 - len(line)) + " 0.0"
        lines.append(line)
    return "\r\n".join(lines) + "\r\n"


def pairs_text(pairs: list[tuple[str, str]], ranks: dict[str, int]) -> str:
    """The engines' pairs list: the count, then ``red black`` start ranks, board 1 first."""
    rows = [str(len(pairs))] + [f"{ranks[r]} {ranks[b]}" for r, b in pairs]
    return "\n".join(rows) + "\n"


def pair_round(
    seed: Seed, players: list[str], games: list[Game], round_no: int
) -> list[tuple[str, str]]:
    """Swiss-like: by the test's own standings, top half against the next unmet player; the
    one who has had black more often gets red."""
    order = players
    if round_no > 1:
        order = [r.player for r in rank(seed, games, players, last=round_no - 1)]
    met = {(g.red, g.black) for g in games} | {(g.black, g.red) for g in games}
    blacks = {p: sum(g.black == p for g in games) for p in players}
    left = list(order)
    pairs: list[tuple[str, str]] = []
    while left:
        a = left.pop(0)
        b = next((p for p in left if (a, p) not in met), left[0])
        left.remove(b)
        pairs.append((a, b) if blacks[a] >= blacks[b] else (b, a))
    return pairs
