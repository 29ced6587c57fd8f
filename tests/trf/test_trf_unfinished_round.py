"""A TRF marks only its last round's games as not played yet (a blank result): a game without a
result in an earlier round would make the file read as that round's, its later results
counted in Points beyond the rounds it says were played. The builder says so at the game, and
a round still being played carries no next-round H/F (they would be counted too)."""

from __future__ import annotations

import pytest

from clock_service.trf.build import Entrant, GameResult, TrfHeader, build_trf
from clock_service.trf.document import Trf, TrfError

HEADER = TrfHeader(name="未完的轮次", rounds=5)
ENTRANTS = [Entrant(n, f"棋手{n}") for n in range(1, 5)]
ROUND_1_OPEN = [GameResult(1, 1, 2, None), GameResult(1, 3, 4, "white")]
ROUND_2_WON = [GameResult(2, 1, 3, "white"), GameResult(2, 2, 4, None)]


def test_a_game_without_a_result_before_the_last_round_is_refused_naming_it() -> None:
    with pytest.raises(TrfError, match=r"round 1: game 1-2 has no result.*after round 1 at most"):
        build_trf(HEADER, ENTRANTS, ROUND_1_OPEN + ROUND_2_WON, after_round=2)


def test_the_same_games_written_after_the_open_round_read_back_as_its_file() -> None:
    trf = Trf.parse(str(build_trf(HEADER, ENTRANTS, ROUND_1_OPEN + ROUND_2_WON, after_round=1)))
    assert trf.paired_round() == 1
    assert {p.start_rank: p.points for p in trf.players} == {1: 0, 2: 0, 3: 2, 4: 0}
    assert all(len(p.rounds) == 1 for p in trf.players)  # round 2's win waits for round 1


def test_a_round_being_played_carries_no_next_round_half_or_full_point_bye() -> None:
    with pytest.raises(TrfError, match=r"round 1 is still being played.*players \[4\]"):
        build_trf(HEADER, ENTRANTS, ROUND_1_OPEN, after_round=1, next_round_byes={4: "H"})
    # a known absence (Z) scores nothing: still written; a finished round takes the H
    absent = build_trf(HEADER, ENTRANTS, ROUND_1_OPEN, after_round=1, next_round_byes={4: "Z"})
    assert Trf.parse(str(absent)).absent(2) == {4: "Z"}
    done = [GameResult(1, 1, 2, "draw"), GameResult(1, 3, 4, "white")]
    half = build_trf(HEADER, ENTRANTS, done, after_round=1, next_round_byes={4: "H"})
    assert {p.start_rank: p.points for p in Trf.parse(str(half)).players}[4] == 1
