"""Exports: exact output for a known game and round."""

from __future__ import annotations

import json

from clock_service.regulation import Scoring
from venue_station.domain import exports
from venue_station.live.results import derive_game

SCORING = Scoring(win=2, draw=1, loss=0)  # the usual 2/1/0

GAME = {
    "game": "r7-b12",
    "round": 7,
    "board": "12",
    "red": "王天一",
    "black": "郑惟桐",
    "tc": "30m+5s",
}


def move(seq: int, side: str, n: int, used: int, red_ms: int, black_ms: int) -> dict:
    return {
        "seq": seq,
        "type": "move",
        "data": {"side": side, "used_ms": used, "move": n},
        "red_ms": red_ms,
        "black_ms": black_ms,
    }


EVENTS = [
    {"seq": 1, "type": "started", "data": {}, "red_ms": 1_800_000, "black_ms": 1_800_000},
    move(2, "red", 1, 8_123, 1_796_877, 1_800_000),
    move(3, "black", 1, 65_400, 1_796_877, 1_739_600),
    move(4, "red", 2, 1_200_000, 601_677, 1_739_600),
    {"seq": 5, "type": "flag", "data": {"side": "black"}, "red_ms": 601_677, "black_ms": 0},
    # the flag's loss proposed, then confirmed by the arbiter: only then is it the result
    {"seq": 6, "type": "result", "data": {"winner": "red", "reason": "flag", "status": "pending"}},
    {
        "seq": 7,
        "type": "result",
        "data": {"winner": "red", "reason": "flag", "status": "confirmed", "ref": 6},
    },
]
PENDING = EVENTS[:6]


def test_clock_log_csv() -> None:
    assert exports.clock_log_csv(exports.clock_log(reversed(EVENTS))) == (
        "move,side,used_ms,remaining_ms,used,remaining\n"
        "1,red,8123,1796877,8.1,0:29:56\n"
        "1,black,65400,1739600,65.4,0:28:59\n"
        "2,red,1200000,601677,1200.0,0:10:01\n"
    )


def test_clock_log_pgn() -> None:
    rows = exports.clock_log(EVENTS)
    assert exports.clock_log_pgn(GAME, rows, derive_game(EVENTS), event="test") == (
        '[Event "test"]\n[Site "?"]\n[Date "????.??.??"]\n[Round "7"]\n[White "王天一"]\n'
        '[Black "郑惟桐"]\n[Result "1-0"]\n[Board "12"]\n[GameId "r7-b12"]\n[Red "王天一"]\n'
        '[TimeControl "1800+5"]\n[Termination "time forfeit"]\n\n'
        "1. -- {[%clk 0:29:56]} -- {[%clk 0:28:59]} 2. -- {[%clk 0:10:01]} 1-0\n"
    )


def test_a_black_move_without_red_before_it_is_numbered() -> None:
    rows = exports.clock_log([move(3, "black", 1, 100, 1, 3_600_000)])
    text = exports.clock_log_pgn(GAME, rows, derive_game([]))
    assert text.endswith("\n1... -- {[%clk 1:00:00]} *\n")


def test_round_results_csv_and_json() -> None:
    other = {**GAME, "game": "r7-b2", "board": "2", "red": "许银川", "black": "吕钦"}
    rows = exports.round_results([(other, derive_game([])), (GAME, derive_game(EVENTS))], SCORING)
    assert exports.round_results_csv(rows) == (
        "round,board,game,red,black,result,red_points,black_points,reason\n"
        "7,2,r7-b2,许银川,吕钦,,,,\n"
        "7,12,r7-b12,王天一,郑惟桐,1-0,2,0,flag\n"
    )
    body = json.loads(exports.round_results_json(7, "meishan-2016", rows))
    assert body["round"] == 7 and body["regulation"] == "meishan-2016"
    assert body["games"][1] == {
        "round": 7,
        "board": "12",
        "game": "r7-b12",
        "red": "王天一",
        "black": "郑惟桐",
        "result": "1-0",
        "red_points": 2,
        "black_points": 0,
        "reason": "flag",
    }


def test_hms_truncates() -> None:
    assert [exports.hms(x) for x in (0, 999, 59_999, 3_600_000, -5)] == [
        "0:00:00",
        "0:00:00",
        "0:00:59",
        "1:00:00",
        "0:00:00",
    ]


def test_a_pending_result_is_not_exported_as_the_result() -> None:
    rows = exports.round_results([(GAME, derive_game(PENDING))], SCORING)
    assert exports.round_results_csv(rows).splitlines()[1] == "7,12,r7-b12,王天一,郑惟桐,,,,"


def test_a_double_forfeit_is_exported_0_0() -> None:
    events = [
        {"seq": 1, "type": "result", "data": {"winner": None, "reason": "double_forfeit"}},
    ]
    rows = exports.round_results([(GAME, derive_game(events))], SCORING)
    assert exports.round_results_csv(rows).splitlines()[1] == (
        "7,12,r7-b12,王天一,郑惟桐,0-0,0,0,double_forfeit"
    )


def test_pgn_date_is_the_local_day_of_the_first_event() -> None:
    import datetime

    first, later = 1_796_500_000_000, 1_796_600_000_000  # ms, a day apart
    day = datetime.datetime.fromtimestamp(first / 1000).strftime("%Y.%m.%d")
    assert exports.pgn_date([{"ts": later}, {"ts": first}]) == day
    assert exports.pgn_date([]) is None
    rows = exports.clock_log([])
    text = exports.clock_log_pgn(GAME, rows, derive_game([]), event="赛", date=day)
    assert f'[Date "{day}"]' in text and '[Event "赛"]' in text


def test_a_handicap_game_gives_each_clock_to_its_side_in_a_chess_reader() -> None:
    """让二先: black receives and moves twice in a row. A PGN reader takes turns (python-chess),
    so every time after black's second move went to the other player (an outsider): red's turn
    passes between, with no clock."""
    import io

    import chess.pgn

    sides = ["red", "black", "black", "red", "black", "red"]
    counts: dict[str, int] = {"red": 0, "black": 0}
    events = []
    for i, side in enumerate(sides, 1):
        counts[side] += 1
        events.append(move(i, side, counts[side], 1000 * i, 1_800_000 - 10_000 * i, 1_800_000))
    rows = exports.clock_log(events)
    game = chess.pgn.read_game(io.StringIO(exports.clock_log_pgn(GAME, rows, derive_game([]))))
    assert game is not None
    read = [
        ("black" if node.board().turn else "red", node.clock())  # the side that just moved
        for node in game.mainline()
        if node.clock() is not None
    ]
    assert read == [(r.side, r.remaining_ms / 1000) for r in rows]


def test_round_results_in_words_for_a_wall() -> None:
    """The round's results for people: the header and each reason in the regulation's words
    (an outsider organiser found round,board,… and `resignation`)."""
    from clock_service.regulation import Regulation

    rows = [{"round": 1, "board": "3", "game": "r1-b3", "red": "甲", "black": "乙",
             "result": "0-1", "red_points": 0, "black_points": 2, "reason": "late"}]  # fmt: skip
    wulong = Regulation.load("wulong-2015")
    zh = exports.round_results_csv(rows, lang="zh", reason_words=exports.reason_words(wulong, "zh"))
    late = wulong.reason("late", kind="forfeit").text("zh")  # the seed's own sentence
    assert late and late != "late"
    assert zh.splitlines() == ["轮次,台次,对局号,红方,黑方,结果,红方得分,黑方得分,原因",
                               f"1,3,r1-b3,甲,乙,0-1,0,2,{late}"]  # fmt: skip
    assert exports.round_results_csv(rows).startswith("round,board,game,")  # for programs
