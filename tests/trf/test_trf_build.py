"""The TRF written from plain results: the golden after-round-3 file comes out byte for byte,
points follow 2/1/0 exactly (forfeits, a double forfeit, byes U/H/Z), and bad input is refused."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from clock_service.trf.build import (
    Entrant,
    GameResult,
    RoundBye,
    TrfHeader,
    build_trf,
    point_lines,
)
from clock_service.trf.document import Trf, TrfError
from clock_service.trf.player import RoundCell

GOLDEN = Path(__file__).parent / "golden"

HEADER = TrfHeader(
    name="第一届棋钟象棋公开赛 (2/1/0)",
    city="杭州",
    federation="CHN",
    start="2026/11/28",
    end="2026/11/30",
    chief_arbiter="李明 (chief arbiter)",
    rounds=5,
)
ENTRANTS = [
    Entrant(1, "王天一", "m", "", 2480, "CHN", "8600017", "1989/06/10"),
    Entrant(2, "郑惟桐", "m", "GM", 2470, "CHN", "8600025", "1993/11/09"),
    Entrant(3, "张伟", "m", "", 2100, "CHN", "", "1990/01/01"),
    Entrant(4, "张伟", "m", "", 2050, "CHN", "", "2001/02/03"),
    Entrant(5, "唐丹", "w", "", 2300, "CHN", "8600033", "1990/12/23"),
    Entrant(6, "王琳娜", "w", "WGM", 2280, "CHN", "8600041", "1983/08/11"),
    Entrant(7, "赵鑫鑫", "m", "", 2460, "CHN", "8600050", "1988/04/05"),
]
GAMES = [
    GameResult(1, 1, 5, "white"),
    GameResult(1, 2, 6, "draw"),
    GameResult(1, 3, 7, "white", forfeit=True),
    GameResult(2, 4, 1, "black"),
    GameResult(2, 7, 2, "double_forfeit"),
    GameResult(2, 5, 3, "white"),
    GameResult(3, 1, 3, "draw"),
    GameResult(3, 2, 4, "white"),
    GameResult(3, 6, 5, "white"),
]
BYES = [RoundBye(1, 4, "U"), RoundBye(2, 6, "H"), RoundBye(3, 7, "Z")]
RANKS = {1: 1, 6: 2, 3: 3, 2: 4, 4: 5, 5: 6, 7: 7}


def build(**kw: object) -> Trf:
    args: dict = {
        "after_round": 3,
        "byes": BYES,
        "ranks": RANKS,
        "next_round_byes": {7: "Z"},
        "prohibited": [(4, 5, (3, 4))],
    }
    args.update(kw)
    return build_trf(HEADER, ENTRANTS, GAMES, **args)


def test_the_golden_file_comes_out_byte_for_byte() -> None:
    assert str(build()) == (GOLDEN / "xiangqi-r3.trf").read_bytes().decode()


def test_every_line_ends_with_cr() -> None:
    text = str(build())
    assert all(line.endswith("\r") for line in text.split("\n")[:-1])
    assert str(build(newline="\r")).count("\n") == 0


def test_points_under_2_1_0() -> None:
    trf = Trf.parse(str(build()))
    assert {p.start_rank: p.points for p in trf.players} == {
        1: 5, 2: 3, 3: 3, 4: 2, 5: 2, 6: 4, 7: 0,
    }  # fmt: skip
    assert trf.scoring == {
        "W": 2, "D": 1, "L": 0, "A": 0, "P": 2, "X": 1,
    }  # fmt: skip
    # the same points whichever declaration an engine reads
    lines = str(build()).split("\r\n")
    only_bb = "\r\n".join(x for x in lines if not x.startswith(("162", "XXS")))
    only_xxs = "\r\n".join(x for x in lines if not x.startswith(("162", "BB")))
    for text in (only_bb, only_xxs):
        other = Trf.parse(text)
        assert other.scoring["W"] == 2 and other.scoring["D"] == 1 and other.scoring["P"] == 2
        other.check()


def test_after_round_0_and_a_round_paired_not_played() -> None:
    empty = build(after_round=0, ranks=None)
    assert all(p.points == Decimal(0) for p in empty.players)
    # the known absence of round 1 is in player 7's own column too (what JaVaFo reads)
    assert {p.start_rank: p.rounds for p in empty.players if p.rounds} == {
        7: (RoundCell(0, "-", "Z"),)
    }
    assert empty.rounds_played == 0 and empty.absent(1) == {7: "Z"}
    paired = build_trf(HEADER, ENTRANTS, [*GAMES, GameResult(4, 1, 6)], after_round=4, byes=BYES)
    assert paired.paired_round() == 4 and paired.pairings(4) == [(1, 6)]


@pytest.mark.parametrize(
    ("games", "byes", "word"),
    [
        ([GameResult(1, 1, 99, "draw")], [], "no player 99"),
        ([GameResult(1, 1, 2, "draw"), GameResult(1, 1, 3, "draw")], [], "two games"),
        ([GameResult(1, 1, 2, "draw")], [RoundBye(1, 1, "U")], "a bye and another"),
    ],
)
def test_bad_results(games: list[GameResult], byes: list[RoundBye], word: str) -> None:
    with pytest.raises(TrfError, match=word):
        build_trf(HEADER, ENTRANTS, games, after_round=1, byes=byes)


def test_bad_values() -> None:
    with pytest.raises(TrfError, match="forfeit needs a winner"):
        GameResult(1, 1, 2, "draw", forfeit=True)
    with pytest.raises(TrfError, match="result 'red'"):
        GameResult(1, 1, 2, "red")
    with pytest.raises(TrfError, match="kind 'X'"):
        RoundBye(1, 1, "X")
    with pytest.raises(TrfError, match="name"):
        build_trf(HEADER, [Entrant(1, "长" * 34)], [], after_round=0)
    with pytest.raises(TrfError, match="after_round 6"):
        build(after_round=6)


def test_the_initial_colour_is_read_from_round_1() -> None:
    # player 1 (the highest ranked paired in round 1) had black: 152 says B
    games = [GameResult(1, 5, 1, "black"), *GAMES[1:]]
    trf = build_trf(HEADER, ENTRANTS, games, after_round=1, byes=BYES)
    assert trf.initial_colour == "B"
    assert build_trf(HEADER, ENTRANTS, [], after_round=0).initial_colour == "W"
    told = TrfHeader(name="x", rounds=5, initial_colour="B")
    assert build_trf(told, ENTRANTS, [], after_round=0).initial_colour == "B"


def test_only_what_the_engines_read_and_what_differs_from_their_defaults() -> None:
    lines = str(build()).split("\r\n")
    points = [x for x in lines if x.startswith(("162", "BB", "XXS", "142", "XXR"))]
    assert points == [
        "142 5",
        "XXR 5",
        "162  W 2.0    D 1.0",
        "BBW  2.0",
        "BBD  1.0",
        "XXS W=2 D=1 PAB=2",
    ]
    fide = build_trf(HEADER, ENTRANTS, GAMES, after_round=1, win=Decimal(1), draw=Decimal("0.5"))
    fide_lines = str(fide).split("\r\n")
    assert not [x for x in fide_lines if x.startswith(("162", "BB"))]  # all defaults
    assert "XXS W=1 D=0.5 PAB=1" in fide_lines
    # a loss that scores (no profile has one): L on 162, BBL/BBF, WL/BL/FL on XXS
    lossy = [r.line() for r in point_lines(Decimal(3), Decimal(2), Decimal(1))]
    assert lossy[1:] == [
        "162  W 3.0    D 2.0    L 1.0", "BBW  3.0", "BBD  2.0", "BBL  1.0", "BBF  1.0",
        "XXS W=3 D=2 PAB=3 WL=1 BL=1 FL=1",
    ]  # fmt: skip


def test_a_bye_known_for_the_next_round_is_in_the_players_column_with_its_points() -> None:
    trf = Trf.parse(str(build(next_round_byes={7: "H", 5: "F", 4: "Z"})))
    assert trf.rounds_played == 3 and trf.absent(4) == {7: "H", 5: "F", 4: "Z"}
    assert [trf.player(p).rounds[3] for p in (7, 5, 4)] == [
        RoundCell(0, "-", "H"), RoundCell(0, "-", "F"), RoundCell(0, "-", "Z"),
    ]  # fmt: skip
    # counted in Points (JaVaFo asks for it; bbpPairings takes both), the check agrees
    assert (trf.player(7).points, trf.player(5).points, trf.player(4).points) == (1, 4, 2)
    trf.check()
    text = str(trf).replace("  1.0    7", "  0.0    7")
    Trf.parse(text).check()  # uncounted is what bbpPairings also reads
    with pytest.raises(TrfError, match=r"player 7: points 2\.0"):
        Trf.parse(str(trf).replace("  1.0    7", "  2.0    7")).check()
