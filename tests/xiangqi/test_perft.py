"""Legal moves against the published perft counts (docs/records.md §Perft).

Sources: Fairy-Stockfish tests/perft.sh (start position d4, positions A and B d4) and
maksimKorzh/wukong-xiangqi res/xiangqi_perft.txt (the start position table, position C).
The start position's depth 4 (about a minute here) runs with QIZHONG_DEEP_PERFT=1.
"""

from __future__ import annotations

import os

import pytest

from clock_service.xiangqi import START_FEN, Position, perft

A = "1rbaka2R/5r3/6n2/2p1p1p2/4P1bP1/PpC3Bc1/1nPR2P2/2N2AN2/1c2K1p2/2BAC4 w - - 0 1"
B = "4kcP1N/8n/3rb4/9/9/9/9/3p1A3/4K4/5CB2 w - - 0 1"
C = "r1ba1a3/4kn3/2n1b4/pNp1p1p1p/4c4/6P2/P1P2R2P/1CcC5/9/2BAKAB2 w - - 0 1"
DEEP = pytest.mark.skipif(
    os.environ.get("QIZHONG_DEEP_PERFT") != "1", reason="set QIZHONG_DEEP_PERFT=1 (slow)"
)

CASES = [
    (START_FEN, 1, 44),
    (START_FEN, 2, 1_920),
    (START_FEN, 3, 79_666),
    (A, 1, 49),
    (A, 2, 2_265),
    (A, 3, 100_326),
    (B, 1, 13),
    (B, 2, 272),
    (B, 3, 3_707),
    (B, 4, 92_741),
    (C, 1, 38),
    (C, 2, 1_128),
    (C, 3, 43_929),
    pytest.param(START_FEN, 4, 3_290_240, marks=DEEP),
    pytest.param(A, 4, 4_485_547, marks=DEEP),
    pytest.param(C, 4, 1_339_047, marks=DEEP),
]


@pytest.mark.parametrize(("fen", "depth", "nodes"), CASES)
def test_perft_matches_the_published_count(fen: str, depth: int, nodes: int) -> None:
    assert perft(Position.from_fen(fen), depth) == nodes


@pytest.mark.parametrize("fen", [START_FEN, A, B, C])
def test_legal_moves_agree_with_fairy_stockfish_two_plies_deep(fen: str, fsf) -> None:
    """Not only the count: the very moves, after each first move too."""
    position = Position.from_fen(fen)
    assert {m.iccs for m in position.legal_moves()} == fsf.legal_moves(fen, [])
    for move in position.legal_moves():
        after = position.play(move)
        assert {m.iccs for m in after.legal_moves()} == fsf.legal_moves(fen, [move.iccs])
        assert after.fen == fsf.fen(fen, [move.iccs])
