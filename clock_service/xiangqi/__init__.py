"""The rules of xiangqi for game records (录谱): positions, legal moves, notation, PGN.

Pure like the rest of clock_service. ``board`` holds the position, FEN and the legal moves
(checked against published perft counts); ``notation`` writes and reads Chinese, WXF and ICCS;
``record`` is a start FEN plus legal moves; ``pgn`` the xiangqi PGN file; ``presses`` pairs
move N with the clock's press N. See docs/records.md.
"""

from clock_service.xiangqi.board import START_FEN, FenError, IllegalMove, Move, Position, perft
from clock_service.xiangqi.notation import NotationError, chinese, parse_move, wxf
from clock_service.xiangqi.pgn import PgnError, PgnGame, format_clock, read_pgn, write_pgn
from clock_service.xiangqi.presses import Pairing, Press, pair_with_presses
from clock_service.xiangqi.record import PlyClock, Record

__all__ = [
    "START_FEN",
    "FenError",
    "IllegalMove",
    "Move",
    "NotationError",
    "Pairing",
    "PgnError",
    "PgnGame",
    "PlyClock",
    "Position",
    "Press",
    "Record",
    "chinese",
    "format_clock",
    "pair_with_presses",
    "parse_move",
    "perft",
    "read_pgn",
    "write_pgn",
    "wxf",
]
