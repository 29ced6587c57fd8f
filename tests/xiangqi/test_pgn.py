"""The xiangqi PGN reader and writer on their own: many games, black first, bad input."""

from __future__ import annotations

import pytest

from clock_service.xiangqi import PgnError, PlyClock, Record, format_clock, read_pgn, write_pgn

ENDGAME = "3k5/9/9/9/9/4R4/9/4R4/9/5K3 b - - 0 30"


def test_black_first_from_a_fen_and_the_round_in_one_file() -> None:
    record = Record(start_fen=ENDGAME).play_all(["将４进１", "前车进三", "将４退１"])
    one = write_pgn(record, tags={"Round": "3", "Red": "甲"}, result="*")
    assert f'[FEN "{ENDGAME}"]' in one
    assert "30. ... d9d8 {将４进１} 31. e4e7 {前车进三} d8d9 {将４退１}" in one.replace("\n", " ")
    opening = Record().play_all(["炮二平五", "马８进７"])
    two = write_pgn(opening, tags={"Round": "3", "Red": "乙"}, result="1-0")
    games = read_pgn(one + "\n" + two)  # the round's records, one after the other
    assert [g.tags["Red"] for g in games] == ["甲", "乙"]
    assert games[0].record.iccs() == ["d9d8", "e4e7", "d8d9"]
    assert games[0].record.start_fen == ENDGAME
    assert games[1].record.chinese() == ["炮二平五", "马８进７"] and games[1].result == "1-0"


def test_reads_what_chinese_sites_write() -> None:
    text = (
        '[Game "Chinese Chess"]\n[Red "红"]\n\n'
        "1.炮二平五　馬8進7\n2．馬二進三 (2. 兵三进一) $1 車9平8 {一个注释}\n"
        "3. 车一平二 炮８进４ 1-0\n"
    )
    (game,) = read_pgn(text)
    assert game.record.iccs() == ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "h7h3"]
    assert game.result == "1-0"


def test_clock_comments() -> None:
    assert format_clock(5_400_000) == "1:30:00" and format_clock(61_999) == "0:01:01"
    record = Record().play_all(["h2e2", "h9g7"])
    text = write_pgn(record, clocks=[PlyClock(left_ms=1_799_000, used_ms=6_000), None])
    assert "h2e2 {炮二平五 [%clk 0:29:59] [%emt 0:00:06]}\nh9g7 {马８进７}" in text
    assert read_pgn(text)[0].clocks == (PlyClock(left_ms=1_799_000, used_ms=6_000),)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('[Game "Chinese Chess"]\n\n1. 炮二平五 炮二平五\n', "game 1, ply 2"),
        ('[Game "Chinese Chess"]\n\n1. h2e2 h9g7 2. h2h9\n', "game 1, ply 3"),
        ('[Game "Chinese Chess"]\n[FEN "9/9/9 w"]\n\n1. h2e2\n', "game 1: bad FEN"),
        ('[Game "Chinese Chess"]\n\n1. h2e2\n\n[Game "Chinese Chess"]\n\n1. 马８进７\n', "game 2"),
        ("[Game Chinese Chess]\n\n1. h2e2\n", "not a tag line"),
    ],
)
def test_bad_pgn_names_the_game_and_ply(text: str, where: str) -> None:
    with pytest.raises(PgnError, match=where):
        read_pgn(text)


def test_writer_refuses_what_it_cannot_write() -> None:
    record = Record().play_all(["h2e2"])
    with pytest.raises(ValueError, match="result"):
        write_pgn(record, result="2-0")
    with pytest.raises(ValueError, match="clock readings"):
        write_pgn(record, clocks=[PlyClock(left_ms=1), PlyClock(left_ms=1)])
    with pytest.raises(ValueError, match="nothing to undo"):
        Record().undo()
    assert record.undo() == Record()
