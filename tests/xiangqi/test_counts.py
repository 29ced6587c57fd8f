"""The natural move limit and the early-draw check counted on a game record (issue 29 §3).

The seeds: Meishan 二、1 "自然限着为40回合，提出方的'将军'着数不计"; Wulong 三、2
"自然限着为50回合。提出方的'将军'着数，最多只计算10着"; Wulong 三、1 "严禁20回合内无故协议和棋".
The clock counts
presses; where a record matches them the count is the record's, the claimant's checks (the
xiangqi module's in-check test) counted per the profile: an uncounted check takes its 回合 with it
(the check and the reply to it).
"""

from __future__ import annotations

import pytest

from clock_service.side import Side
from clock_service.xiangqi import Press, Record, pair_with_presses
from clock_service.xiangqi.counts import (
    MAX_LAG,
    claimant_checks,
    early_draw_count,
    natural_move_count,
)

RED, BLACK = Side.RED, Side.BLACK
# A legal game of 14 plies in which red checks at plies 5 (炮八平五) and 7 (车九平六), and no
# other move checks.
CHECKS_GAME = [
    "a0a1", "e9e8", "b2b5", "b9c7", "b5e5", "e8d8", "a1d1",
    "h7d7", "h2h7", "h9i7", "h7h1", "g6g5", "d1d3", "i6i5",
]  # fmt: skip
RECORD = Record().play_all(CHECKS_GAME)


def presses(n: int) -> list[Press]:
    return [Press(RED if i % 2 == 0 else BLACK, 1_000, 600_000) for i in range(n)]


def count(
    plies: int,
    pressed: int | None = None,
    *,
    start: int = 0,
    limit: int = 4,
    claimant: Side | None = RED,
    counted: int | None = 0,
) -> tuple[str, int, int, bool, bool]:
    record = Record(moves=RECORD.moves[:plies]) if plies else None
    pressed = plies if pressed is None else pressed
    pairing = None if record is None else pair_with_presses(record, presses(pressed))
    c = natural_move_count(
        record, pairing, presses=pressed, start_ply=start, limit=limit, claimant=claimant,
        checks_counted=counted,
    )  # fmt: skip
    return (c.source, c.full_moves, c.uncounted, c.reached, c.waiting)


def test_the_record_has_the_checks_the_rules_see() -> None:
    assert claimant_checks(RECORD, start_ply=0, claimant=RED) == [5, 7]
    assert claimant_checks(RECORD, start_ply=0, claimant=BLACK) == []
    assert claimant_checks(RECORD, start_ply=6, claimant=RED) == [7]


@pytest.mark.parametrize(
    ("case", "args", "expected"),
    [
        # no record: the clock's presses, as the node counts them
        ("no record", dict(plies=0, pressed=8), ("presses", 4, 0, True, False)),
        # Meishan: none of the claimant's checks counts; 8 plies are 2 回合, 12 are 4
        ("meishan at the press limit", dict(plies=8), ("record", 2, 2, False, False)),
        ("meishan later", dict(plies=12), ("record", 4, 2, True, False)),
        ("meishan one ply short", dict(plies=11), ("record", 3, 2, False, False)),
        # black claims: red's checks count like any move
        (
            "the other side's checks count",
            dict(plies=8, claimant=BLACK),
            ("record", 4, 0, True, False),
        ),
        # Wulong: the claimant's checks count, at most 10 (here one of the two counts)
        ("wulong's allowance", dict(plies=8, counted=10), ("record", 4, 0, True, False)),
        ("an allowance of one", dict(plies=10, counted=1), ("record", 4, 1, True, False)),
        ("an allowance of one, short", dict(plies=8, counted=1), ("record", 3, 1, False, False)),
        ('"all" of them count', dict(plies=8, counted=None), ("record", 4, 0, True, False)),
        # no claimant named: no check can be left out
        ("no claimant", dict(plies=8, claimant=None), ("record", 4, 0, True, False)),
        # the count started later: only the checks after its start
        ("a later start", dict(plies=14, start=6, limit=3), ("record", 3, 1, True, False)),
        # the record lags a press or two: its moves so far, the rest as the clock says; once
        # that reaches the limit, wait for the record (the last press may be a check)
        ("lagging, short", dict(plies=8, pressed=10), ("record", 3, 2, False, False)),
        ("lagging at the limit", dict(plies=11, pressed=12), ("record", 4, 2, False, True)),
        (
            "lagging more than allowed",
            dict(plies=8, pressed=8 + MAX_LAG + 1),
            ("presses", 5, 0, True, False),
        ),
        # a record ahead (a move entered before its press, presses on their way to the
        # station): counted up to the presses, a check not pressed yet not counted yet
        ("a move ahead", dict(plies=9, pressed=8), ("record", 2, 2, False, False)),
        ("further ahead", dict(plies=12, pressed=8), ("record", 2, 2, False, False)),
        ("ahead by a check", dict(plies=7, pressed=6), ("record", 2, 1, False, False)),
        ("ahead at the limit", dict(plies=13, pressed=12), ("record", 4, 2, True, False)),
        ("below the limit", dict(plies=0, pressed=7), ("presses", 3, 0, False, False)),
    ],
)
def test_the_natural_move_count(case: str, args: dict, expected: tuple) -> None:
    assert count(**args) == expected, case


def test_a_record_that_disagrees_with_the_presses_is_not_counted() -> None:
    skewed = [Press(RED, 1_000, 600_000)] * 8  # red pressed every time: ply 2 disagrees
    record = Record(moves=RECORD.moves[:8])
    pairing = pair_with_presses(record, skewed)
    c = natural_move_count(
        record, pairing, presses=8, start_ply=0, limit=4, claimant=RED, checks_counted=0
    )
    assert (c.source, c.full_moves, c.reached) == ("presses", 4, True)


def test_the_count_describes_itself() -> None:
    c = natural_move_count(
        RECORD, pair_with_presses(RECORD, presses(14)), presses=14, start_ply=0, limit=4,
        claimant=RED, checks_counted=0,
    )  # fmt: skip
    assert c.as_detail() == {
        "count": "record",
        "counted": 5,
        "plies": 14,
        "checks": 2,
        "uncounted_checks": 2,
        "claimant": "red",
    }


@pytest.mark.parametrize(
    ("plies", "pressed", "expected"),
    [
        (14, 14, ("record", 7)),  # a record that matches: its full moves
        (13, 14, ("presses", 7)),  # fewer moves: the clock's count
        (0, 14, ("presses", 7)),  # no record
    ],
)
def test_the_early_draw_count(plies: int, pressed: int, expected: tuple[str, int]) -> None:
    record = Record(moves=RECORD.moves[:plies]) if plies else None
    pairing = None if record is None else pair_with_presses(record, presses(pressed))
    assert early_draw_count(record, pairing, press_full_moves=pressed // 2) == expected


def test_the_early_draw_count_of_a_record_starting_with_black() -> None:
    """A record from a FEN with black to move: its full moves are the plies halved, as the
    clock counts (a handicap's given moves are the node's to leave out)."""
    fen = RECORD.positions()[1].fen
    record = Record(start_fen=fen, moves=RECORD.moves[1:5])
    blacks = [Press(BLACK if i % 2 == 0 else RED, 1, 1) for i in range(4)]
    assert early_draw_count(record, pair_with_presses(record, blacks), press_full_moves=2) == (
        "record",
        2,
    )
