"""Meishan's knockout: 1v4 and 2v3, colours by lot, a drawn slow game followed by a 10+3 game
on the same board where the slow game's black chooses and a draw is a win for black."""

from __future__ import annotations

import random
import re

import pytest

from clock_service.knockout import (
    ColourChoice,
    Knockout,
    KnockoutError,
    Lot,
    Placing,
    Stage,
    merge_standings,
)
from clock_service.regulation import Regulation
from clock_service.side import Side
from clock_service.standings import GameRecord, compute_standings

MEISHAN = Regulation.load("meishan-2016")
TOP = ["P1", "P2", "P3", "P4"]


def start(seed: int = 7) -> Knockout:
    return Knockout.start(TOP, random.Random(seed), regulation=MEISHAN)


def winner_side(ko: Knockout, game_id: str, player: str) -> Side:
    g = ko.game(game_id)
    return Side.RED if g.red == player else Side.BLACK


def test_semi_finals_are_1v4_and_2v3_with_colours_by_lot() -> None:
    ko = start()
    games = ko.propose_next()
    assert [(g.id, g.stage, {g.red, g.black}) for g in games] == [
        ("ko-sf1", Stage.SEMI_FINAL, {"P1", "P4"}),
        ("ko-sf2", Stage.SEMI_FINAL, {"P2", "P3"}),
    ]
    assert all(
        (g.tc, g.tiebreak, g.board, g.draw_winner) == ("30m+5s", False, None, None) for g in games
    )
    assert ko.lots == tuple(Lot(g.id, g.red, g.black, "lot") for g in games)
    # The lot is the injected Random: the same seed draws the same colours.
    assert start().lots == ko.lots
    seen = {start(seed).lots[0].red for seed in range(20)}
    assert seen == {"P1", "P4"}  # both outcomes occur: the colours really are drawn


def test_a_whole_knockout_without_draws() -> None:
    ko = start()
    for g in ko.propose_next():
        assert ko.confirm(g.id, board="1" if g.id == "ko-sf1" else "2").board is not None
    assert ko.record("ko-sf1", winner_side(ko, "ko-sf1", "P1")) == []
    opened = ko.record("ko-sf2", winner_side(ko, "ko-sf2", "P3").value)
    assert [(g.id, g.stage, {g.red, g.black}) for g in opened] == [
        ("ko-f", Stage.FINAL, {"P1", "P3"}),
        ("ko-3", Stage.THIRD_PLACE, {"P4", "P2"}),
    ]
    assert [g.id for g in ko.propose_next()] == ["ko-f", "ko-3"]
    assert [lot.game_id for lot in ko.lots] == ["ko-sf1", "ko-sf2", "ko-f", "ko-3"]
    ko.record("ko-3", winner_side(ko, "ko-3", "P2"))
    assert ko.placings() == [Placing(3, "P2"), Placing(4, "P4")]
    assert not ko.finished
    ko.record("ko-f", winner_side(ko, "ko-f", "P3"))
    assert ko.placings() == [Placing(1, "P3"), Placing(2, "P1"), Placing(3, "P2"), Placing(4, "P4")]
    assert ko.finished and ko.propose_next() == []


@pytest.mark.parametrize("choice", [Side.RED, Side.BLACK])
def test_a_drawn_slow_game_then_armageddon_draw_is_a_black_win(choice: Side) -> None:
    ko = start()
    ko.confirm("ko-sf1", board="7")
    slow = ko.game("ko-sf1")
    assert ko.record("ko-sf1", "draw") == []
    # The slow game is settled as drawn; nothing to play until its black chooses a colour.
    assert [g.id for g in ko.propose_next()] == ["ko-sf2"]
    assert ko.pending_choices() == [ColourChoice("ko-sf1", chooser=slow.black, opponent=slow.red)]
    tb = ko.choose_colour("ko-sf1", choice.value)
    assert (tb.id, tb.stage, tb.tc, tb.tiebreak) == ("ko-sf1-tb", Stage.SEMI_FINAL, "10m+3s", True)
    assert tb.board == "7"  # the same board as the slow game
    assert tb.draw_winner is Side.BLACK
    chooser_side = Side.RED if tb.red == slow.black else Side.BLACK
    assert chooser_side is choice
    assert ko.lots[-1] == Lot("ko-sf1-tb", tb.red, tb.black, "choice", slow.black)
    assert ko.pending_choices() == []
    assert [g.id for g in ko.propose_next()] == ["ko-sf2", "ko-sf1-tb"]
    ko.record("ko-sf1-tb", "draw")  # 和棋黑胜
    ko.record("ko-sf2", "red")
    final = ko.game("ko-f")
    assert tb.black in {final.red, final.black}
    assert tb.red in {ko.game("ko-3").red, ko.game("ko-3").black}


def test_an_armageddon_can_still_be_won_by_red() -> None:
    ko = start()
    ko.record("ko-sf2", "black")
    ko.record("ko-sf1", "draw")
    tb = ko.choose_colour("ko-sf1", Side.BLACK)
    ko.record("ko-sf1-tb", Side.RED)
    assert tb.red in {ko.game("ko-f").red, ko.game("ko-f").black}


def test_a_drawn_final_gets_its_tie_break_too() -> None:
    ko = start()
    ko.record("ko-sf1", "red")
    ko.record("ko-sf2", "red")
    ko.confirm("ko-f", board="1")
    ko.record("ko-f", None)
    tb = ko.choose_colour("ko-f", "black")
    assert (tb.id, tb.stage, tb.board) == ("ko-f-tb", Stage.FINAL, "1")
    ko.record("ko-f-tb", "draw")
    ko.record("ko-3", "black")
    assert ko.placings()[0] == Placing(1, tb.black)
    assert ko.finished


ERRORS = [
    ("unknown game", lambda ko: ko.record("ko-x", "red"), "'ko-x': no such knockout game"),
    ("bad result", lambda ko: ko.record("ko-sf1", "white"), "result 'white' is not red"),
    ("twice", lambda ko: (ko.record("ko-sf1", "red"), ko.record("ko-sf1", "red")),
     "ko-sf1: result already recorded"),
    ("drawn slow game again", lambda ko: (ko.record("ko-sf1", "draw"), ko.record("ko-sf1", "red")),
     "ko-sf1: drawn; its tie-break game decides"),
    ("no choice pending", lambda ko: ko.choose_colour("ko-sf1", "red"), "no tie-break colour"),
    ("bad colour", lambda ko: (ko.record("ko-sf1", "draw"), ko.choose_colour("ko-sf1", "blue")),
     "side must be 'red' or 'black', not 'blue'"),
    ("confirm played", lambda ko: (ko.record("ko-sf1", "red"), ko.confirm("ko-sf1", board="1")),
     "ko-sf1: already played"),
    ("bad board", lambda ko: ko.confirm("ko-sf1", board=""), "board '' is not a board id"),
    ("final too early", lambda ko: ko.record("ko-f", "red"), "'ko-f': no such knockout game"),
]  # fmt: skip


@pytest.mark.parametrize(("act", "says"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_calls_change_nothing_and_say_why(act: object, says: str) -> None:
    ko = start()
    with pytest.raises(KnockoutError, match=re.escape(says)):
        act(ko)  # type: ignore[operator]
    assert {g.id for g in ko.propose_next()} <= {"ko-sf1", "ko-sf2", "ko-sf1-tb"}


@pytest.mark.parametrize(
    ("top", "says"),
    [(["A", "B", "C"], "need 4 distinct players"), (["A", "B", "C", "A"], "need 4 distinct")],
)
def test_bad_starts(top: list[str], says: str) -> None:
    with pytest.raises(KnockoutError, match=says):
        Knockout.start(top, random.Random(1), regulation=MEISHAN)


def test_wulong_has_no_knockout() -> None:
    with pytest.raises(KnockoutError, match="wulong-2015: the regulation has no knockout"):
        Knockout.start(TOP, random.Random(1), regulation=Regulation.load("wulong-2015"))


def test_from_standings_after_round_7_to_the_final_list() -> None:
    # Six players, seven rounds: P1..P6 in strength order, the stronger always wins.
    names = [f"P{i}" for i in range(1, 7)]
    rng = random.Random(3)
    games = []
    for rnd in range(1, 8):
        order = names[:]
        rng.shuffle(order)
        for a, b in zip(order[::2], order[1::2], strict=True):
            games.append(
                GameRecord(rnd, a, b, "red" if names.index(a) < names.index(b) else "black")
            )
    after7 = compute_standings(MEISHAN, games, after_round=7)
    ko = Knockout.start(after7[:4], random.Random(1), regulation=MEISHAN)
    assert ko.top == tuple(s.player for s in after7[:4])
    ko.record("ko-sf1", winner_side(ko, "ko-sf1", ko.top[3]))  # 4th beats 1st
    ko.record("ko-sf2", winner_side(ko, "ko-sf2", ko.top[1]))
    ko.record("ko-f", winner_side(ko, "ko-f", ko.top[3]))
    ko.record("ko-3", winner_side(ko, "ko-3", ko.top[0]))
    final = merge_standings(after7, ko.placings())
    assert [s.player for s in final[:4]] == [ko.top[3], ko.top[1], ko.top[0], ko.top[2]]
    assert [s.rank for s in final] == list(range(1, 7))
    # the whole event's place is the final place (a spreadsheet sorted by 全场名次 put the
    # knockout's winner 5th: an outsider organiser)
    assert [s.event_rank for s in final] == list(range(1, 7))
    assert final[0].reason_zh == "淘汰赛第1名" and final[0].reason_en == "knockout place 1"
    assert [s.player for s in final[4:]] == [s.player for s in after7[4:]]
    assert [s.knockout_place for s in final] == [1, 2, 3, 4, None, None]
    assert all(s.decided_by is None for s in final[:4])  # no Swiss reason to borrow from them
    # the others ranked among themselves: the same order, their own reasons, ranked 1..
    rest = compute_standings(MEISHAN, games, after_round=7, without=ko.top)
    assert [s.player for s in rest] == [s.player for s in after7[4:]]
    assert [s.rank for s in rest] == [1, 2] and rest[-1].reason_zh == ""
    assert [s.rank for s in merge_standings([*final[:4], *rest], ko.placings())] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    with pytest.raises(KnockoutError, match="not in the standings"):
        merge_standings(after7[4:], ko.placings())
