"""让二先 on the clock: “成年男子棋手对阵少儿棋手和非大师女子棋手通让二先（不论先后手）” (Wulong).

The receiver makes its first two moves in a row, whichever colour it plays: the clock stays
with it after its first press, each press still earns the increment, and the given move is
not a full move (回合) for the move-limit and early-draw rules.
"""

from __future__ import annotations

import pytest
from support.fake_time import MS, FakeTime

from clock_service import GameClock, Moved, Side, TimeControl
from clock_service.handicap import Handicap, full_moves
from clock_service.referee import Referee
from clock_service.regulation import Regulation

RED, BLACK = Side.RED, Side.BLACK


def play(handicap: Handicap | None, presses: list[Side]) -> tuple[GameClock, list[Side | None]]:
    t = FakeTime()
    clock = GameClock(TimeControl.parse("35m+5s"), now=t, handicap=handicap)
    clock.start()
    on_move = []
    for side in presses:
        t.ns += 1000 * MS
        clock.press(side)
        on_move.append(clock.running)
    return clock, on_move


@pytest.mark.parametrize(
    ("handicap", "presses", "on_move_after", "red_moves", "black_moves"),
    [
        # red receives: red, red, then black
        (Handicap(RED, 2), [RED, RED, BLACK, RED], [RED, BLACK, RED, BLACK], 3, 1),
        # black receives: red moves first, then black twice
        (Handicap(BLACK, 2), [RED, BLACK, BLACK, RED], [BLACK, BLACK, RED, BLACK], 2, 2),
        # the giver cannot press twice: a press out of turn changes nothing
        (Handicap(BLACK, 2), [RED, RED], [BLACK, BLACK], 1, 0),
        # no handicap: strict alternation
        (None, [RED, RED, BLACK], [BLACK, BLACK, RED], 1, 1),
    ],
)
def test_the_receiver_moves_twice_in_a_row(
    handicap: Handicap | None,
    presses: list[Side],
    on_move_after: list[Side],
    red_moves: int,
    black_moves: int,
):
    clock, on_move = play(handicap, presses)
    assert on_move == on_move_after
    assert (clock.moves(RED), clock.moves(BLACK)) == (red_moves, black_moves)


def test_each_given_move_earns_the_increment_and_is_charged_its_own_time():
    t = FakeTime()
    clock = GameClock(TimeControl.parse("35m+5s"), now=t, handicap=Handicap(RED, 2))
    clock.start()
    t.ns += 3000 * MS
    (moved,) = clock.press(RED)
    assert moved == Moved(RED, 3000, 1)
    t.ns += 2000 * MS
    (moved,) = clock.press(RED)
    assert moved == Moved(RED, 2000, 2)
    assert clock.remaining_ms(RED) == 35 * 60_000 - 5000 + 2 * 5000


def test_the_handicap_survives_a_snapshot():
    clock, _ = play(Handicap(BLACK, 2), [RED, BLACK])
    again = GameClock.restore(clock.snapshot(), now=FakeTime(), resume=True)
    assert again.handicap == Handicap(BLACK, 2)
    again.press(BLACK)
    assert again.running is RED


@pytest.mark.parametrize(
    ("handicap", "red", "black", "full"),
    [
        (None, 20, 20, 20),
        (None, 21, 20, 20),
        (Handicap(RED, 2), 2, 0, 0),
        (Handicap(RED, 2), 21, 20, 20),  # 20 回合 played: red's extra move is given
        (Handicap(RED, 2), 22, 20, 20),
        (Handicap(BLACK, 2), 1, 2, 1),
        (Handicap(BLACK, 2), 20, 21, 20),
    ],
)
def test_full_moves_do_not_count_the_given_move(
    handicap: Handicap | None, red: int, black: int, full: int
):
    assert full_moves(red, black, handicap) == full


def test_the_early_draw_and_move_limit_rules_count_full_moves_of_a_handicap_game():
    reg = Regulation.load("wulong-2015")  # “严禁20回合内无故协议和棋”, “自然限着为50回合”
    ref = Referee(reg, handicap=Handicap(RED, 2))
    assert ref.full_moves(21, 20) == 20
    ref.start_move_count(red_moves=2, black_moves=0)  # after red's two moves, black to move
    assert ref.moves_made(51, 49) == []  # 49 full moves after the start
    (reached,) = ref.moves_made(52, 50)
    assert reached.reason == "reached"


def test_a_bad_handicap_is_refused():
    with pytest.raises(ValueError, match=r"2\.\.10"):
        Handicap(RED, 1)
    with pytest.raises(ValueError, match="Side"):
        Handicap("red", 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="receiver, moves"):
        Handicap.parse({"receiver": "red"})
