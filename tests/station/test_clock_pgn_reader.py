"""The clock log as PGN, read back by a real PGN reader (python-chess): one null move ``--`` per
ply, each with its ``[%clk]``, so a reader pairs every time with its ply."""

from __future__ import annotations

import io
from typing import Any

import chess
import chess.pgn

from venue_station.domain import exports
from venue_station.live.results import derive_game

GAME = {
    "game": "r3-b7",
    "round": 3,
    "board": "7",
    "red": "王天一",
    "black": "郑惟桐",
    "tc": "30m+5s",
}


def move(seq: int, side: str, number: int, remaining_ms: int) -> dict[str, Any]:
    other = "black" if side == "red" else "red"
    return {
        "seq": seq,
        "type": "move",
        "data": {"side": side, "move": number, "used_ms": 1000},
        f"{side}_ms": remaining_ms,
        f"{other}_ms": 0,
    }


def plies(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        side = "red" if i % 2 == 0 else "black"
        out.append(move(i + 1, side, i // 2 + 1, 1_800_000 - 7_000 * i))
    return out


def read(text: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert not game.errors, game.errors
    return game


def test_every_ply_is_a_null_move_with_its_clock() -> None:
    events = plies(61)  # long enough to wrap the movetext over several lines
    text = exports.clock_log_pgn(GAME, exports.clock_log(events), derive_game([]))
    game = read(text)
    nodes = list(game.mainline())
    assert len(nodes) == 61
    assert all(node.move == chess.Move.null() for node in nodes)
    clocks = [node.clock() for node in nodes]
    assert clocks == [(1_800_000 - 7_000 * i) // 1000 for i in range(61)]
    # red moves first: white's turn in the reader, so the plies alternate red/black
    assert [node.turn() for node in nodes[:2]] == [chess.BLACK, chess.WHITE]
    assert game.headers["Red"] == "王天一" and game.headers["Result"] == "*"
    assert all(len(line) < 80 for line in text.splitlines())


def test_a_game_with_a_result_and_a_black_first_ply() -> None:
    events = [move(1, "black", 1, 1_790_000), move(2, "red", 2, 1_780_000)]
    flag = {"seq": 3, "type": "flag", "data": {"side": "black"}}
    confirmed = {"seq": 4, "type": "result", "data": {"winner": "red", "reason": "flag"}}
    decided = derive_game([*events, flag, confirmed])
    text = exports.clock_log_pgn(GAME, exports.clock_log(events), decided)
    assert "1... -- {[%clk 0:29:50]}" in text
    game = read(text)
    assert [n.clock() for n in game.mainline()] == [1790, 1780]
    assert game.headers["Result"] == "1-0"
    # a reader shows White–Black: red is white (an organiser read "? – 孙勇征")
    assert (game.headers["White"], game.headers["Black"]) == ("王天一", "郑惟桐")


def test_no_moves() -> None:
    game = read(exports.clock_log_pgn(GAME, [], derive_game([])))
    assert list(game.mainline()) == []


def test_a_double_forfeit_is_written_with_pgn_tokens() -> None:
    # 0:0 is no PGN result: a reader takes "0-0" in the movetext for castling (an outsider
    # read the round's PGN and found [Result "0-0"]). The game is "*" with its termination.
    events = [move(1, "red", 1, 1_790_000), move(2, "black", 1, 1_785_000)]
    both = {"seq": 3, "type": "result", "data": {"winner": None, "reason": "double_forfeit"}}
    decided = derive_game([*events, both])
    assert decided.result == "0-0"  # the station's own word for it, in CSV and standings
    text = exports.clock_log_pgn(GAME, exports.clock_log(events), decided)
    assert '"0-0"' not in text and not text.rstrip().endswith("0-0")
    game = read(text)
    assert game.headers["Result"] == "*"
    assert game.headers["Termination"] == "rules infraction"
    assert [n.clock() for n in game.mainline()] == [1790, 1785]
    assert "double forfeit" in game.end().comment
