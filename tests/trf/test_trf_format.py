"""FIDE TRF (2016 and 2026 with the engines' point-system extensions): the golden files in
``golden/`` were laid out by hand from the FIDE description (column rulers in their comments);
reading them and writing them back must give the same bytes, and every malformed kind of line
must be an error naming the line, the columns and the reason."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from clock_service.trf.document import Trf, TrfError

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str) -> str:
    return (GOLDEN / name).read_bytes().decode("utf-8")


@pytest.mark.parametrize("name", ["xiangqi-r3.trf", "xiangqi-r4-paired.trf", "fide-2016.trf"])
def test_read_then_write_is_byte_identical(name: str) -> None:
    text = golden(name)
    trf = Trf.parse(text)
    assert str(trf) == text
    assert Trf.parse(str(trf)) == trf


def test_the_xiangqi_file_read() -> None:
    trf = Trf.parse(golden("xiangqi-r3.trf"))
    assert trf.newline == "\r\n"
    assert trf.name == "第一届棋钟象棋公开赛 (2/1/0)"
    assert trf.total_rounds == 5
    assert trf.initial_colour == "W"
    assert trf.scoring["W"] == Decimal(2) and trf.scoring["D"] == Decimal(1)
    assert trf.scoring["P"] == Decimal(2) and trf.scoring["A"] == Decimal(0)
    assert [p.start_rank for p in trf.players] == [1, 2, 3, 4, 5, 6, 7]
    # the two 张伟 are two players: the start rank is the id, the name only a label
    zhang = [p for p in trf.players if p.name == "张伟"]
    assert [p.start_rank for p in zhang] == [3, 4]
    p6 = trf.player(6)
    assert (p6.sex, p6.title, p6.rating, p6.federation, p6.birth) == (
        "w",
        "WGM",
        2280,
        "CHN",
        "1983/08/11",
    )
    assert p6.fide_id == "8600041" and trf.player(3).fide_id == ""
    assert [(c.opponent, c.colour, c.result) for c in p6.rounds] == [
        (2, "b", "="),
        (0, "-", "H"),
        (5, "w", "1"),
    ]
    assert trf.rounds_played == 3
    # every player's points follow from his results under 2/1/0 (W, D, L, A, P)
    assert {p.start_rank: trf.computed_points(p) for p in trf.players} == {
        1: 5,
        2: 3,
        3: 3,
        4: 2,
        5: 2,
        6: 4,
        7: 0,
    }
    trf.check()  # points, ranks present, opponents reciprocal
    assert trf.absent(4) == {7: "Z"}
    assert [(b.kind, b.round, b.players) for b in trf.byes] == [("Z", 4, (7,))]
    assert [(x.first_round, x.last_round, x.players) for x in trf.prohibited] == [(4, 5, (3, 4))]
    assert trf.paired_round() is None


def test_the_engine_s_answer_carries_round_4_paired() -> None:
    trf = Trf.parse(golden("xiangqi-r4-paired.trf"))
    assert trf.paired_round() == 4
    assert trf.pairings(4) == [(1, 6), (3, 2), (4, 5)]  # white first; board order
    assert trf.absent(4) == {7: "Z"}
    assert trf.rounds_played == 3
    trf.check()


def test_trf16_defaults_to_chess_points() -> None:
    trf = Trf.parse(golden("fide-2016.trf"))
    assert trf.newline == "\n"
    assert trf.total_rounds == 3  # from JaVaFo's XXR
    assert trf.scoring["W"] == 1 and trf.scoring["D"] == Decimal("0.5")
    assert trf.player(2).points == Decimal("1.5") and trf.player(2).rank == 1
    trf.check()


def test_line_ends_any_style_are_read() -> None:
    text = golden("xiangqi-r3.trf")
    for nl in ("\n", "\r"):
        other = Trf.parse(text.replace("\r\n", nl))
        assert other.newline == nl
        assert other.players == Trf.parse(text).players
        assert str(other) == text.replace("\r\n", nl)


def test_bytes_must_be_utf8() -> None:
    assert Trf.parse(golden("xiangqi-r3.trf").encode()).name.startswith("第一届")
    with pytest.raises(TrfError, match="not UTF-8"):
        Trf.parse(golden("xiangqi-r3.trf").encode("gb18030"))


# -- malformed kinds ------------------------------------------------------------------------
def replace_player_line(start_rank: int, cols: tuple[int, int], new: str) -> str:
    """The r3 golden file with columns ``cols`` (1-based, inclusive) of a 001 line replaced."""
    lines = golden("xiangqi-r3.trf").split("\r\n")
    for i, line in enumerate(lines):
        if line.startswith("001") and int(line[4:8]) == start_rank:
            a, b = cols
            padded = line.ljust(b)
            assert len(new) == b - a + 1
            lines[i] = (padded[: a - 1] + new + padded[b:]).rstrip()
    return "\r\n".join(lines)


def line_of(text: str, start: str) -> int:
    return next(i for i, x in enumerate(text.split("\r\n"), 1) if x.startswith(start))


BAD_PLAYER = [
    ((5, 8), "   x", "start rank"),
    ((5, 8), "   0", "start rank"),
    ((10, 10), "x", "sex"),
    ((49, 52), "24a0", "rating"),
    ((58, 68), "     86x017", "FIDE"),
    ((70, 79), "1989-06-10", "birth date"),
    ((81, 84), " 5,0", "points"),
    ((86, 89), "  -1", "rank"),
    ((92, 95), "   x", "opponent"),
    ((97, 97), "r", "colour"),
    ((99, 99), "?", "result"),
    ((48, 48), "x", "must be blank"),  # a name one column too long
    ((96, 96), "w", "must be blank"),  # a round block shifted one column
]


@pytest.mark.parametrize(("cols", "new", "word"), BAD_PLAYER)
def test_every_malformed_player_field(cols: tuple[int, int], new: str, word: str) -> None:
    text = replace_player_line(2, cols, new)
    with pytest.raises(TrfError) as info:
        Trf.parse(text)
    err = info.value
    assert err.line == line_of(golden("xiangqi-r3.trf"), "001    2")
    assert err.columns == cols
    assert word in err.reason
    assert str(err).startswith(f"line {err.line}, columns {cols[0]}-{cols[1]}: ")


def bad_line(old: str, new: str) -> str:
    text = golden("xiangqi-r3.trf")
    assert old in text
    return text.replace(old, new, 1)


BAD_LINES = [
    ("042 2026/11/28", "042 2026-11-28", "042", (5, 14), "date"),
    ("142 5", "142 five", "142", (5, 8), "number of rounds"),
    ("152 W", "152 R", "152", (5, 5), "W or B"),
    ("162  W 2.0", "162  Q 2.0", "162", (6, 6), "result code"),
    ("162  W 2.0", "162  W 2.x", "162", (7, 10), "points"),
    ("BBW  2.0", "BBW  two", "BBW", (5, 8), "points"),
    ("XXR 5", "XXR x", "XXR", (5, 5), "number of rounds"),
    ("XXS W=2", "XXS W:2", "XXS", (5, 7), "CODE=points"),
    ("240 Z 004 0007", "240 Q 004 0007", "240", (5, 5), "type of bye"),
    ("240 Z 004 0007", "240 Z 0x4 0007", "240", (7, 9), "round"),
    ("240 Z 004 0007", "240 Z 004 0009", "240", (11, 14), "no player 9"),
    ("260 004 005 0003 0004", "260 004 005 0003", "260", (13, 16), "at least two"),
    ("260 004 005 0003 0004", "260 006 005 0003 0004", "260", (5, 11), "last round"),
    ("XXR 5", "X", "X", (1, 3), "record"),
    ("XXR 5", "XXR5", "XXR5", (4, 4), "blank"),
]


@pytest.mark.parametrize(("old", "new", "start", "cols", "word"), BAD_LINES)
def test_every_malformed_record(
    old: str, new: str, start: str, cols: tuple[int, int], word: str
) -> None:
    text = bad_line(old, new)
    with pytest.raises(TrfError) as info:
        Trf.parse(text)
    err = info.value
    assert err.line == line_of(text, new), str(err)
    assert err.columns == cols, str(err)
    assert word in err.reason, str(err)


def test_a_start_rank_twice() -> None:
    text = replace_player_line(3, (5, 8), "   2")
    with pytest.raises(TrfError, match=r"start rank 2 .*line 22") as info:
        Trf.parse(text)
    assert info.value.line == 23 and info.value.columns == (5, 8)


def test_an_opponent_who_is_not_in_the_file() -> None:
    text = replace_player_line(5, (92, 95), "  99")
    with pytest.raises(TrfError, match="no player 99") as info:
        Trf.parse(text)
    assert info.value.columns == (92, 95)


def test_check_names_what_does_not_add_up() -> None:
    wrong_points = Trf.parse(replace_player_line(1, (81, 84), " 6.0"))
    with pytest.raises(TrfError, match=r"points 6.0 but the results give 5.0") as info:
        wrong_points.check()
    assert info.value.columns == (81, 84)
    one_sided = Trf.parse(replace_player_line(5, (99, 99), "1"))  # 5 and 1 both won round 1
    with pytest.raises(TrfError, match=r"round 1.*player 1") as info:
        one_sided.check()
    assert info.value.columns == (92, 99)


def test_empty_and_overlong() -> None:
    with pytest.raises(TrfError, match="empty"):
        Trf.parse("")
    with pytest.raises(TrfError, match="no 001 player"):
        Trf.parse("012 Only a name\r\n")
    long_line = "012 " + "x" * 2000
    with pytest.raises(TrfError, match="longer than") as info:
        Trf.parse(long_line)
    assert info.value.line == 1


def test_bounds_past_their_limit() -> None:
    text = golden("xiangqi-r3.trf")
    with pytest.raises(TrfError, match="more than 20000 lines"):
        Trf.parse(text + "### x\r\n" * 20000)
    with pytest.raises(TrfError, match=r"number of rounds '100' is not a number 1\.\.99"):
        Trf.parse(text.replace("XXR 5", "XXR 100"))
    with pytest.raises(TrfError, match="a tab") as info:
        Trf.parse(text.replace("022 杭州", "022\t杭州"))
    assert info.value.columns == (4, 4)
    assert Trf.parse("\ufeff" + text).players == Trf.parse(text).players  # a BOM is accepted
    with pytest.raises(TrfError, match=r"is not points 0\.0\.\.999\.9"):
        Trf.parse(text).player(1).__class__(start_rank=1, name="x", points=Decimal("1000"))
    with pytest.raises(TrfError, match=r"start rank is not 1\.\.9999"):
        Trf.parse(text).player(1).__class__(start_rank=10000, name="x")
