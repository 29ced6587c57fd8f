"""累进分 while a round is still being played, written from the seeds' wording.

Meishan 补充 一（四）: "如遇积分相同，按以下顺序区分：累进分（每一轮积分之和）…" and "记犯规1次，
并扣累进分1分"; Wulong names the same 累进分. 累进分 is the sum of the player's score *after
each round*. A player whose game of a round has no result yet has no score after that round
yet: that round is not played for him and adds nothing, neither to 累进分 nor to any other
criterion. A bye, a decided game, or (as before) a round without any game for him do count:
his score after such a round is known.

The event (Meishan: win 2, draw 1, loss 0, a foul costs 1 累进分), five players:

    round 1: A (red) beats B;  C-D draw, D one confirmed foul;  E bye (2)
    round 2: A (black) beats E;  C (red) beats B;  D bye (2)
    round 3: A-C not decided yet;  E (black) beats D;  B bye (2)

    running totals   r1  r2  r3
        A             2   4   -   (r3 undecided)
        B             0   0   2
        C             1   3   -   (r3 undecided)
        D             1   3   3
        E             2   2   4
"""

from __future__ import annotations

import pytest

from clock_service.regulation import Regulation, Tiebreak
from clock_service.standings import Bye, GameRecord, compute_standings, standings_csv

MEISHAN = "meishan-2016"
PLAYERS = {name: frozenset[str]() for name in "ABCDE"}

ROUND_1 = [GameRecord(1, "A", "B", "red"), GameRecord(1, "C", "D", "draw", black_fouls=1)]
ROUND_2 = [GameRecord(2, "E", "A", "black"), GameRecord(2, "C", "B", "red")]
ROUND_3 = [GameRecord(3, "A", "C", None), GameRecord(3, "D", "E", "black")]
BYES = [Bye(1, "E"), Bye(2, "D"), Bye(3, "B")]


def rows_of(
    games: list[GameRecord], byes: list[Bye] = BYES, **kw: object
) -> list[tuple[str, int, int, int, int]]:
    rows = compute_standings(
        Regulation.load(MEISHAN),
        games,
        players=PLAYERS,
        byes=byes,
        **kw,  # type: ignore[arg-type]
    )
    return [(r.player, r.points, r.progressive, r.wins, r.games) for r in rows]


def test_round_3_in_play_counts_only_the_rounds_each_player_has_played() -> None:
    got = rows_of(ROUND_1 + ROUND_2 + ROUND_3)
    # (player, 积分, 累进分, 胜局, games)
    assert got == [
        ("E", 4, 8, 1, 2),  # 2 + 2 + 4 = 8 (round 3 won as black)
        ("A", 4, 6, 2, 2),  # 2 + 4 = 6; round 3 not decided, so not 2 + 4 + 4 = 10
        ("D", 3, 6, 0, 2),  # 1 + 3 + 3 = 7, minus 1 for the foul = 6
        ("C", 3, 4, 1, 2),  # 1 + 3 = 4; round 3 not decided, so not 1 + 3 + 3 = 7
        ("B", 2, 2, 0, 2),  # 0 + 0 + 2 (the bye) = 2
    ]


def test_the_undecided_game_gives_no_tiebreak_edge() -> None:
    rows = compute_standings(
        Regulation.load(MEISHAN), ROUND_1 + ROUND_2 + ROUND_3, players=PLAYERS, byes=BYES
    )
    # E and A both have 4 points: E is ahead on 累进分 8 > 6 (not behind on 8 < 10).
    assert (rows[0].player, rows[0].decided_by, rows[0].reason_zh) == (
        "E",
        Tiebreak.PROGRESSIVE,
        "累进分 8 > 6",
    )
    # D and C both 3 points: 6 > 4 (D's foul already deducted).
    assert (rows[2].player, rows[2].reason_zh) == ("D", "累进分 6 > 4")


def test_after_round_2_is_unchanged_by_the_round_in_play() -> None:
    expected = [
        ("A", 4, 6, 2, 2),  # 2 + 4
        ("C", 3, 4, 1, 2),  # 1 + 3
        ("E", 2, 4, 0, 1),  # 2 + 2 (bye, then a loss)
        ("D", 3, 3, 0, 1),  # 1 + 3 - 1 foul
        ("B", 0, 0, 0, 2),
    ]
    expected.sort(key=lambda r: (-r[1], -r[2]))
    assert rows_of(ROUND_1 + ROUND_2 + ROUND_3, after_round=2) == expected
    assert rows_of(ROUND_1 + ROUND_2, after_round=2) == expected
    # Round 2 complete, round 3 not paired yet (nor its bye): the latest view is the same.
    assert rows_of(ROUND_1 + ROUND_2, byes=BYES[:2]) == expected


def test_just_after_round_2_started() -> None:
    # Round 2 paired, no result yet; D's bye is round 2's only settled score.
    undecided = [GameRecord(2, g.red, g.black, None) for g in ROUND_2]
    got = rows_of(ROUND_1 + undecided, byes=BYES[:2])
    assert sorted(got) == [
        ("A", 2, 2, 1, 1),  # 2 after round 1 only, not 2 + 2 = 4
        ("B", 0, 0, 0, 1),
        ("C", 1, 1, 0, 1),  # 1, not 1 + 1
        ("D", 3, 3, 0, 1),  # 1 + 3 (the bye) - 1 foul = 3
        ("E", 2, 2, 0, 0),  # 2 (the bye), not 2 + 2
    ]
    # The same numbers as after round 1 for everyone whose round 2 is not settled.
    after1 = {r[0]: r for r in rows_of(ROUND_1 + undecided, byes=BYES[:2], after_round=1)}
    assert [after1[p][2] for p in "ABCE"] == [2, 0, 1, 2]


def test_an_undecided_earlier_round_is_skipped_not_the_rest() -> None:
    games = [
        GameRecord(1, "A", "B", "red"),
        GameRecord(2, "A", "C", None),  # e.g. a result the arbiter has not confirmed
        GameRecord(3, "D", "A", "black"),
    ]
    rows = {r.player: r for r in compute_standings(Regulation.load(MEISHAN), games)}
    # A: round 1 → 2, round 2 not played yet, round 3 → 2 + 2 = 4: 2 + 4 = 6 (not 2 + 2 + 4 = 8).
    assert (rows["A"].points, rows["A"].progressive) == (4, 6)


def test_a_round_without_any_game_still_adds_the_running_total() -> None:
    # Unchanged reading (docs/standings.md): no game at all (withdrawn, the knockout's four in
    # rounds 8–9) is a round whose score is known: F has 2 after round 1 and after round 2.
    games = [GameRecord(1, "F", "G", "red"), GameRecord(2, "G", "H", "draw")]
    rows = {r.player: r for r in compute_standings(Regulation.load(MEISHAN), games)}
    assert (rows["F"].points, rows["F"].progressive) == (2, 4)  # 2 + 2
    assert (rows["G"].points, rows["G"].progressive) == (1, 1)  # 0 + 1


@pytest.mark.parametrize("profile", [MEISHAN, "wulong-2015"])
def test_the_csv_of_round_3_in_play(profile: str) -> None:
    # The tester's case: 2 + 4 after two rounds, his round-3 game undecided: "4,6", not "4,10".
    games = [
        GameRecord(1, "P", "Q", "red"),
        GameRecord(1, "R", "S", "red"),
        GameRecord(2, "P", "R", "red"),
        GameRecord(2, "Q", "S", "draw"),
        GameRecord(3, "P", "S", None),
        GameRecord(3, "R", "Q", "red"),
    ]
    text = standings_csv(compute_standings(Regulation.load(profile), games))
    lines = {line.split(",")[1]: line.split(",")[2:4] for line in text.splitlines()[1:]}
    assert lines["P"] == ["4", "6"]  # 2 + 4; round 3 undecided
    assert lines["R"] == ["4", "8"]  # 2 + 2 + 4 (round 3 won)
    assert lines["S"] == ["1", "1"]  # 0 + 1; round 3 undecided
    assert lines["Q"] == ["1", "2"]  # 0 + 1 + 1 (round 3 lost)
