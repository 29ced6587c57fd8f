"""A 让二先 game recorded as played (an outsider at a Wulong event: the record page refused the
receiver's second move, "现在轮到黑方走", so every handicap game on a recorded board missed its
record and the responsible player was proposed a foul).

Wulong 2015 (seeds/001): “通让二先” — the receiver makes its first two moves in a row; red
still moves first, so a black receiver answers red's first move with two moves.
"""

from __future__ import annotations

import pytest

from clock_service.handicap import Handicap
from clock_service.side import Side
from clock_service.xiangqi import IllegalMove, NotationError, Record
from clock_service.xiangqi.pgn import read_pgn, write_pgn
from clock_service.xiangqi.presses import Press, pair_with_presses

RED, BLACK = Side.RED, Side.BLACK


def test_a_red_receiver_moves_twice_then_black() -> None:
    record = Record(handicap=Handicap(RED, 2))
    record = record.play("炮二平五")
    assert record.position.to_move is RED  # the given move: red again
    record = record.play("马二进三")
    assert record.position.to_move is BLACK
    record = record.play("马8进7")
    assert record.position.to_move is RED
    assert record.chinese() == ["炮二平五", "马二进三", "马８进７"]
    # the same moves replayed from the store give the same record
    again = Record(moves=record.moves, handicap=record.handicap)
    assert again.positions() == record.positions()
    assert record.undo().position.to_move is BLACK and record.undo().handicap == record.handicap


def test_a_black_receiver_answers_reds_first_move_with_two() -> None:
    record = Record(handicap=Handicap(BLACK, 2)).play_all(["h2e2", "h9g7"])
    assert record.position.to_move is BLACK
    record = record.play("i9h9")
    assert record.position.to_move is RED
    with pytest.raises((IllegalMove, NotationError)):
        record.play("h7e7")  # black's again: not owed any more


def test_without_a_handicap_the_second_move_is_the_other_sides() -> None:
    with pytest.raises((IllegalMove, NotationError), match="black"):
        Record().play("炮二平五").play("马二进三")
    with pytest.raises(IllegalMove, match="ply 2"):
        Record(moves=Record(handicap=Handicap(RED, 2)).play_all(["h2e2", "h0g2"]).moves)


def test_the_clocks_presses_pair_with_a_handicap_record() -> None:
    record = Record(handicap=Handicap(RED, 2)).play_all(["h2e2", "h0g2", "h9g7", "b2b9"])
    presses = [
        Press(RED, 3_000, 2_102_000),
        Press(RED, 4_000, 2_103_000),
        Press(BLACK, 5_000, 2_100_000),
        Press(RED, 2_000, 2_106_000),
    ]
    pairing = pair_with_presses(record, presses)
    assert pairing.matched, pairing
    assert [c.left_ms for c in pairing.clocks if c] == [p.remaining_ms for p in presses]


def test_a_handicap_record_goes_through_pgn_and_back() -> None:
    record = Record(handicap=Handicap(BLACK, 2)).play_all(["h2e2", "h9g7", "i9h9", "b0c2"])
    text = write_pgn(record, tags={"Red": "甲", "Black": "乙"})
    assert '[Handicap "black 2"]' in text
    assert "1. h2e2" in text and "2. ... i9h9" in text and "3. b0c2" in text
    (game,) = read_pgn(text)
    assert game.record.moves == record.moves and game.record.handicap == record.handicap
    with pytest.raises(Exception, match="Handicap"):
        read_pgn(text.replace('"black 2"', '"both two"'))


def test_an_early_draw_counts_full_moves_without_the_given_move() -> None:
    from clock_service.xiangqi.counts import early_draw_count

    record = Record(handicap=Handicap(RED, 2)).play_all(["h2e2", "h0g2", "h9g7", "b2b9"])
    presses = [Press(s, 1_000, 2_000_000) for s in (RED, RED, BLACK, RED)]
    pairing = pair_with_presses(record, presses)
    # 4 plies, one of them the given move: 1 full move (回合) and red's move of the second
    assert early_draw_count(record, pairing, press_full_moves=99) == ("record", 1)
