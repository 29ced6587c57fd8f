"""Chinese, WXF and ICCS, written and read: the worked examples of docs/records.md."""

from __future__ import annotations

import pytest

from clock_service.xiangqi import START_FEN, Move, NotationError, Position, chinese, parse_move, wxf

AFTER_E3E4 = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/4P4/P1P3P1P/1C5C1/9/RNBAKABNR b - - 0 1"

EXAMPLES = [
    (START_FEN, "炮二平五", "C2.5", "h2e2"),
    (START_FEN, "炮八平五", "C8.5", "b2e2"),
    (START_FEN, "马二进三", "H2+3", "h0g2"),
    (START_FEN, "马八进七", "H8+7", "b0c2"),
    (START_FEN, "马二进一", "H2+1", "h0i2"),
    (START_FEN, "车一进一", "R1+1", "i0i1"),
    (START_FEN, "车九进一", "R9+1", "a0a1"),
    (START_FEN, "兵三进一", "P3+1", "g3g4"),
    (START_FEN, "兵七进一", "P7+1", "c3c4"),
    (START_FEN, "相三进五", "E3+5", "g0e2"),
    (START_FEN, "相七进五", "E7+5", "c0e2"),
    (START_FEN, "仕四进五", "A4+5", "f0e1"),
    (START_FEN, "仕六进五", "A6+5", "d0e1"),
    (START_FEN, "帅五进一", "K5+1", "e0e1"),
    (START_FEN, "炮二进七", "C2+7", "h2h9"),
    (START_FEN, "炮二进四", "C2+4", "h2h6"),
    (START_FEN, "炮二退一", "C2-1", "h2h1"),
    (START_FEN, "兵五进一", "P5+1", "e3e4"),
    (AFTER_E3E4, "炮８平５", "C8.5", "h7e7"),
    (AFTER_E3E4, "马８进７", "H8+7", "h9g7"),
    (AFTER_E3E4, "马２进３", "H2+3", "b9c7"),
    (AFTER_E3E4, "象３进５", "E3+5", "c9e7"),
    (AFTER_E3E4, "象７进５", "E7+5", "g9e7"),
    (AFTER_E3E4, "士６进５", "A6+5", "f9e8"),
    (AFTER_E3E4, "车９进１", "R9+1", "i9i8"),
    (AFTER_E3E4, "卒３进１", "P3+1", "c6c5"),
    (AFTER_E3E4, "炮２进７", "C2+7", "b7b0"),
    (AFTER_E3E4, "将５进１", "K5+1", "e9e8"),
    # Two or three of a kind on one file.
    ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "前车进三", "R++3", "e4e7"),
    ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "后车退一", "R--1", "e2e1"),
    ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "前车平九", "R+.9", "e4a4"),
    ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "后车平七", "R-.7", "e2c2"),
    ("3k5/9/9/9/9/4N4/9/4N4/9/5K3 w", "前马进四", "H++4", "e4f6"),
    ("3k5/9/9/9/9/4N4/9/4N4/9/5K3 w", "后马退六", "H--6", "e2d0"),
    ("3k5/9/2P6/2P6/2P6/9/9/9/9/4K4 w", "前兵进一", "P++1", "c7c8"),
    ("3k5/9/2P6/2P6/2P6/9/9/9/9/4K4 w", "中兵平六", "P7.6", "c6d6"),
    ("3k5/9/2P6/2P6/2P6/9/9/9/9/4K4 w", "后兵平八", "P-.8", "c5b5"),
    ("3k5/9/9/P1P6/P1P6/9/9/9/9/4K4 w", "前九平八", "9+.8", "a6b6"),
    ("3k5/9/9/P1P6/P1P6/9/9/9/9/4K4 w", "后九平八", "9-.8", "a5b5"),
    ("3k5/9/9/P1P6/P1P6/9/9/9/9/4K4 w", "前七平六", "7+.6", "c6d6"),
    ("3k5/9/9/P1P6/P1P6/9/9/9/9/4K4 w", "后七平八", "7-.8", "c5b5"),
]


@pytest.mark.parametrize(("fen", "zh", "wxf_text", "iccs"), EXAMPLES)
def test_each_notation_written_and_read(fen: str, zh: str, wxf_text: str, iccs: str) -> None:
    position = Position.from_fen(fen)
    move = Move.from_iccs(iccs)
    assert chinese(position, move) == zh
    assert wxf(position, move) == wxf_text
    assert move.iccs == iccs
    for text in (zh, wxf_text, iccs, iccs.upper()[:2] + "-" + iccs.upper()[2:]):
        assert parse_move(position, text) == move, text


@pytest.mark.parametrize(
    ("fen", "text", "iccs"),
    [
        (START_FEN, "砲二平五", "h2e2"),
        (START_FEN, "包二平五", "h2e2"),
        (START_FEN, "傌二進三", "h0g2"),
        (START_FEN, "俥一進一", "i0i1"),
        (START_FEN, "帥五上一", "e0e1"),  # 上 = 进
        (START_FEN, "炮二下一", "h2h1"),  # 下 = 退
        (START_FEN, "象三进五", "g0e2"),  # the other side's name for the piece
        (START_FEN, " 炮二平五　", "h2e2"),  # spaces and an ideographic space
        (START_FEN, "炮二平五!", "h2e2"),
        (START_FEN, "C2=5", "h2e2"),
        (START_FEN, "C25", "h2e2"),
        (START_FEN, "c2.5", "h2e2"),
        (START_FEN, "N2+3", "h0g2"),  # UCCI letters N and B
        (START_FEN, "B3+5", "g0e2"),
        (START_FEN, "H2+3+", "h0g2"),  # a check mark after the move
        (AFTER_E3E4, "马8进7", "h9g7"),
        (AFTER_E3E4, "馬８進７", "h9g7"),
        (AFTER_E3E4, "h8+7", "h9g7"),
        ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "车前平九", "e4a4"),  # piece-first order
        ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "fR.9", "e4a4"),  # cchess compact
        ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "+R-1", "e4e3"),
        ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "後車退一", "e2e1"),
        ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "车五进三", "e4e7"),  # only the front rook can
    ],
)
def test_variants_read(fen: str, text: str, iccs: str) -> None:
    assert parse_move(Position.from_fen(fen), text) == Move.from_iccs(iccs)


def test_four_and_five_pawns_on_a_file() -> None:
    four = Position.from_fen("3k5/2P6/2P6/2P6/2P6/9/9/9/9/4K4 w")
    sideways = [parse_move(four, t).iccs for t in ("一兵平六", "二兵平六", "三兵平六", "四兵平六")]
    assert sideways == ["c8d8", "c7d7", "c6d6", "c5d5"]
    assert chinese(four, Move.from_iccs("c6d6")) == "三兵平六"
    assert parse_move(four, "后兵平六").iccs == "c5d5"  # Wikipedia's 后 for the last
    assert wxf(four, Move.from_iccs("c8d8")) == "++.6"
    assert wxf(four, Move.from_iccs("c5d5")) == "--.6"


@pytest.mark.parametrize(
    ("fen", "text", "reason"),
    [
        (START_FEN, "炮二平十", "not a legal move for red"),
        (START_FEN, "马二进四", "not a legal move for red"),  # a horse cannot reach file 4
        (START_FEN, "兵三平四", "not a legal move for red"),  # not over the river yet
        (START_FEN, "马８进７", "a move for the other side"),
        (START_FEN, "h9g7", "red's move"),
        (START_FEN, "炮２平５", "black's numerals"),
        (AFTER_E3E4, "马八进七", "red's numerals"),
        (START_FEN, "h2h3h4", "not a legal move"),
        (START_FEN, "", "empty"),
        ("3k5/9/9/9/9/4R4/9/4R4/9/5K3 w", "车五进一", "ambiguous"),
    ],
)
def test_refused_with_a_reason(fen: str, text: str, reason: str) -> None:
    with pytest.raises(NotationError, match=reason):
        parse_move(Position.from_fen(fen), text)


DIGITS_ON_REDS_MOVE = [
    ("炮2平5", "炮二平五"), ("马8进7", "马八进七"), ("马８进７", "马八进七"), ("兵7进1", "兵七进一")
]  # fmt: skip


@pytest.mark.parametrize(("text", "own"), DIGITS_ON_REDS_MOVE)
def test_digits_in_chinese_are_blacks_and_refused_on_reds_move(text: str, own: str) -> None:
    """马8进7 typed on red's turn (black's reply typed twice, a recorder a move behind) was read
    as red's 马八进七 (an outsider recorder): Chinese with digits is black's; the refusal names
    red's own spelling. WXF's digits stay either side's."""
    position = Position.from_fen(START_FEN)
    with pytest.raises(NotationError, match=f"a move for the other side; it is red's move: "
                                            f"red's own is {own}"):  # fmt: skip
        parse_move(position, text)
    assert parse_move(position, "C2.5").iccs == "h2e2"
    black = Position.from_fen(AFTER_E3E4)
    assert parse_move(black, "马8进7").iccs == "h9g7"

