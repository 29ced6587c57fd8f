"""Acceptance: a real published game entered in each notation ends as the same PGN, and an
independent program (Debian's fairy-stockfish) reads that PGN back move for move.

The game: 柳大华 vs 杨官璘, 1982 全国赛 (1982.12.11), ½–½, 63 moves; source and the Chinese
score sheet in data/liu_dahua_yang_guanlin_1982.pgn (see docs/records.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from clock_service.xiangqi import PlyClock, Record, read_pgn, write_pgn

DATA = (Path(__file__).parent / "data" / "liu_dahua_yang_guanlin_1982.pgn").read_text("utf-8")
CHINESE = re.findall(
    r"[\u4e00-\u9fff][\u4e00-\u9fff\uff10-\uff19][进退平][\u4e00-\u9fff\uff10-\uff19]", DATA
)
ICCS = re.findall(r"\b[a-i][0-9][a-i][0-9]\b", DATA)
FINAL_FEN = "3akc3/9/4ba3/r7p/P1bC5/9/8P/3AB1N2/4K1nR1/2B6 b - - 16 63"
TAGS = {"Event": "1982年全国赛", "Date": "1982.12.11", "Red": "柳大华", "Black": "杨官璘"}

_WXF_OF = str.maketrans(
    {
        "帅": "K", "将": "K", "仕": "A", "士": "A", "相": "E", "象": "E", "马": "H",
        "车": "R", "炮": "C", "兵": "P", "卒": "P", "进": "+", "退": "-", "平": ".",
        "前": "+", "后": "-",
        **{c: str(i + 1) for i, c in enumerate("一二三四五六七八九")},
        **{c: str(i + 1) for i, c in enumerate("１２３４５６７８９")},
    }
)  # fmt: skip
_TRADITIONAL = str.maketrans({"车": "車", "马": "馬", "炮": "砲", "进": "進", "后": "後"})


def as_wxf(zh: str) -> str:
    """The score sheet transliterated to WXF by the test itself (后马进６ → H-+6 → -H+6 order)."""
    text = zh.translate(_WXF_OF)
    if text[0] in "+-":  # 前/后 first: WXF puts the letter first, R+.3
        text = text[1] + text[0] + text[2:]
    return text


def as_traditional_ascii(zh: str) -> str:
    """The same score sheet in traditional glyphs with ASCII digits, as many sites print it."""
    text = zh.translate(_TRADITIONAL)
    return "".join(
        str("１２３４５６７８９".index(c) + 1) if c in "１２３４５６７８９" else c for c in text
    )


def clocks() -> list[PlyClock]:
    """A made-up 90-minute clock: each side spends 40 s per move."""
    left = {0: 5_400_000, 1: 5_400_000}
    out = []
    for ply in range(len(ICCS)):
        left[ply % 2] -= 40_000
        out.append(PlyClock(left_ms=left[ply % 2], used_ms=40_000))
    return out


def pgn_of(moves: list[str]) -> str:
    record = Record().play_all(moves)
    return write_pgn(record, tags=TAGS, clocks=clocks(), result="1/2-1/2")


def test_the_fixture_is_the_whole_game() -> None:
    assert len(CHINESE) == len(ICCS) == 125


def test_each_notation_ends_as_the_same_pgn_and_position() -> None:
    from_iccs = pgn_of(ICCS)
    assert Record().play_all(ICCS).position.fen == FINAL_FEN
    assert pgn_of(CHINESE) == from_iccs
    assert pgn_of([as_wxf(z) for z in CHINESE]) == from_iccs
    assert pgn_of([as_traditional_ascii(z) for z in CHINESE]) == from_iccs
    assert pgn_of([m[:2].upper() + "-" + m[2:].upper() for m in ICCS]) == from_iccs
    # The writer's Chinese is the published score sheet, move for move.
    assert Record().play_all(ICCS).chinese() == CHINESE


def test_the_pgn_reads_as_a_xiangqi_pgn() -> None:
    text = pgn_of(ICCS)
    assert text.startswith('[Game "Chinese Chess"]\n[Event "1982年全国赛"]')
    assert '[Format "ICCS"]' in text
    assert "[FEN" not in text  # the standard start is left out, as vschess does
    assert "1. b2e2 {炮八平五 [%clk 1:29:20] [%emt 0:00:40]}\nb9c7 {马２进３ [%clk 1:29:20]" in text
    assert "39. e0f0 {帅五平四" in text and "g7f5 {后马进６" in text
    assert text.rstrip().endswith("1/2-1/2")


def test_our_reader_reads_both_movetexts_back() -> None:
    record = Record().play_all(ICCS)
    for movetext in ("iccs", "chinese"):
        text = write_pgn(record, tags=TAGS, clocks=clocks(), result="1/2-1/2", movetext=movetext)
        (game,) = read_pgn(text)
        assert game.record.iccs() == ICCS
        assert list(game.clocks) == clocks()
        assert game.result == "1/2-1/2" and game.tags["Red"] == "柳大华"
    (gb,) = read_pgn(write_pgn(record, tags=TAGS, movetext="chinese").encode("gb18030"))
    assert gb.record.iccs() == ICCS


def test_fairy_stockfish_reads_the_pgn_back_move_for_move(fsf) -> None:
    text = pgn_of(CHINESE)
    movetext = text.split("\n\n", 1)[1]
    moves = re.findall(r"\b[a-i][0-9][a-i][0-9]\b", re.sub(r"\{[^}]*\}", "", movetext))
    assert moves == ICCS
    start = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
    for ply, move in enumerate(moves):
        assert move in fsf.legal_moves(start, moves[:ply]), f"ply {ply + 1}: {move}"
    assert fsf.fen(start, moves) == FINAL_FEN
