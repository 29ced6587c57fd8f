"""What happens in the event: the players, each round's pairs and each board's story.

Pure: no browser, no station. The pairs come from the test's own results (a Swiss-like
pairing by score), so the station's standings never steer the event; each board's plan says
what the players and the arbiter do and what the seed makes of it (``expected``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tournament.seed_rules import Game, Seed, rank

__all__ = [
    "GROUPS",
    "SURNAMES",
    "Plan",
    "groups_csv",
    "pair_round",
    "pairs_text",
    "player_names",
    "players_trf",
]

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


# Wulong's groups (综合组: 14岁以下少儿、女子; 本地组: 武隆县内选手), as the organiser gives
# them: a players list (docs/pairing.md, docs/station.md: 姓名,单位,等级分,组别, the groups
# in words), by registration index. At registration the locals and the women: woman masters
# (大师), who neither give nor receive 让二先, so every game stays the ordinary game the
# harness's presses play. After the last round a corrected list adds two juniors (少儿: a
# junior would receive 让二先 against an adult man, which these boards' presses do not play).
# 5 and 10 are in both groups (以上奖项可重复领取); the combined group: 7 players, 6 prizes.
GROUPS: dict[str, tuple[dict[int, str], ...]] = {
    "wulong-2015": (
        {0: "本地", 1: "女子 大师", 4: "女子 大师", 5: "本地", 7: "女子 大师",
         10: "女子 大师 本地", 13: "女子 大师", 15: "本地"},
        {2: "少儿", 5: "少儿 本地"},
    ),
}  # fmt: skip
_CODES = {"本地": "local", "女子": "women", "大师": "master", "少儿": "u14"}


def groups_csv(names: list[str], groups: dict[int, str]) -> tuple[str, dict[str, set[str]]]:
    """The players list's text (the page's own column words) and name → the tag codes."""
    lines = ["姓名,单位,等级分,组别"]
    tags: dict[str, set[str]] = {}
    for i, words in sorted(groups.items()):
        club = "武隆" if "本地" in words else "重庆"
        lines.append(f"{names[i]},{club},,{words}")
        tags[names[i]] = {_CODES[w] for w in words.split()}
    return "\r\n".join(lines) + "\r\n", tags
