"""The rules a score sheet can break: each illegal move refused with the reason."""

from __future__ import annotations

import pytest

from clock_service.side import Side
from clock_service.xiangqi import START_FEN, FenError, IllegalMove, Move, Position


def refused(fen: str, iccs: str) -> str:
    with pytest.raises(IllegalMove) as error:
        Position.from_fen(fen).play(Move.from_iccs(iccs))
    return str(error.value)


def test_fen_round_trip_and_aliases() -> None:
    assert Position.from_fen(START_FEN).fen == START_FEN
    # E/H letters (the chessprogramming wiki's) and r for red read as the same position.
    aliased = "rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR r - - 0 1"
    assert Position.from_fen(aliased).fen == START_FEN


@pytest.mark.parametrize(
    ("fen", "fault"),
    [
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9 w", "10 ranks"),
        ("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABN w", "8 files"),
        ("rnbaxabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "'x'"),
        ("rnbaaabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", "one general"),
        ("4k4/9/9/9/9/9/9/9/9/4K4 w", "not to move is in check"),  # facing generals, red to move
    ],
)
def test_bad_fen_says_what(fen: str, fault: str) -> None:
    with pytest.raises(FenError, match=fault.replace("(", r"\(")):
        Position.from_fen(fen)


def test_generals_may_not_face_each_other() -> None:
    # Moving the only screen off the e-file would leave the generals facing (飞将).
    assert "general" in refused("4k4/9/9/9/9/9/9/9/4A4/4K4 w", "e1d2")
    # ... and the general may not step onto the other's open file.
    assert "general" in refused("3k5/9/9/9/9/9/9/9/9/4K4 w", "e0d0")


def test_piece_movement() -> None:
    start = START_FEN
    assert "cannot move" in refused(start, "b0d1")  # the elephant on c0 blocks the horse's leg
    assert "cannot move" in refused("4k4/9/9/9/9/9/9/9/4A4/3K5 w", "e1e2")  # advisor leaves palace
    assert "cannot move" in refused("3k5/9/9/9/9/9/9/9/9/4K4 w", "e0e3")  # the general steps one
    assert "cannot move" in refused(start, "g3g2")  # a pawn never retreats
    assert "cannot move" in refused(start, "g3h3")  # nor goes sideways before the river
    assert "cannot move" in refused(start, "a0a4")  # a rook does not jump its own pawn


def test_blocked_horse_leg_and_elephant_eye() -> None:
    # 蹩马腿: a piece on h1 blocks the horse on h0 from going to g2 and i2.
    legged = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/7R1/RNBAKABN1 w - - 0 1"
    assert "cannot move" in refused(legged, "h0g2")
    # 塞象眼: a piece on f1 blocks the elephant on g0 from e2.
    eye = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/5A3/RNBAK1BNR w - - 0 1"
    assert "cannot move" in refused(eye, "g0e2")
    # An elephant does not cross the river.
    assert "cannot move" in refused("3k5/9/9/9/9/2B6/9/9/9/4K4 w", "c4a6")


def test_wrong_side_and_check() -> None:
    assert "red's move" in refused(START_FEN, "h7e7")  # black's cannon on red's turn
    assert "black's move" in refused(START_FEN.replace(" w ", " b "), "h2e2")
    # In check from the rook on e9, red must answer it: a pawn move elsewhere is refused.
    checked = "3kr4/9/9/9/9/9/P8/9/9/4K4 w - - 0 1"
    assert Position.from_fen(checked).in_check()
    assert "check" in refused(checked, "a3a4")


def test_checkmate_is_the_end() -> None:
    # The rook on d7 checks; the rook on e8 takes d8 and e9 away: black has no move.
    mated = Position.from_fen("3k5/4R4/3R5/9/9/9/9/9/9/5K3 b - - 0 1")
    assert mated.to_move is Side.BLACK
    assert mated.in_check() and mated.is_over()
