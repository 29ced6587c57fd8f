"""Move N pairs with press N (issue 29 §3); a count or side mismatch is shown, never merged."""

from __future__ import annotations

from clock_service.side import Side
from clock_service.xiangqi import PlyClock, Press, Record, pair_with_presses, write_pgn

RED, BLACK = Side.RED, Side.BLACK
RECORD = Record().play_all(["炮二平五", "马８进７", "马二进三"])
PRESSES = [
    Press(RED, 4_000, 1_796_000),
    Press(BLACK, 9_000, 1_791_000),
    Press(RED, 2_000, 1_799_000),
]


def test_each_move_gets_its_press() -> None:
    pairing = pair_with_presses(RECORD, PRESSES)
    assert pairing.matched
    assert pairing.clocks[1] == PlyClock(left_ms=1_791_000, used_ms=9_000)
    pgn = write_pgn(RECORD, clocks=pairing.clocks)
    assert "h9g7 {马８进７ [%clk 0:29:51] [%emt 0:00:09]}" in pgn


def test_fewer_moves_than_presses_is_flagged() -> None:
    pairing = pair_with_presses(RECORD.undo(), PRESSES)
    assert not pairing.matched and (pairing.moves, pairing.presses) == (2, 3)
    assert len(pairing.clocks) == 2


def test_more_moves_than_presses_leaves_the_extra_move_without_a_clock() -> None:
    pairing = pair_with_presses(RECORD, PRESSES[:2])
    assert not pairing.matched and pairing.clocks[2] is None and pairing.clocks[0] is not None


def test_a_press_by_the_other_side_stops_the_pairing() -> None:
    # The clock saw red press twice (a second press with no move, say): ply 2 disagrees.
    skewed = [PRESSES[0], Press(RED, 1_000, 1_795_000), PRESSES[1]]
    pairing = pair_with_presses(RECORD, skewed)
    assert pairing.disagreement == 2 and not pairing.matched
    assert pairing.clocks == (PlyClock(left_ms=1_796_000, used_ms=4_000), None, None)


def test_the_verdict_names_the_kind_of_mismatch() -> None:
    """matched / more / fewer / differs: what the recorder's and the arbiter's pages say."""
    assert pair_with_presses(RECORD, PRESSES).verdict == "matched"
    assert pair_with_presses(RECORD, PRESSES[:2]).verdict == "more"
    assert pair_with_presses(RECORD.undo(), PRESSES).verdict == "fewer"
    skewed = [PRESSES[0], Press(RED, 1_000, 1_795_000), PRESSES[1]]
    assert pair_with_presses(RECORD, skewed).verdict == "differs"
    assert pair_with_presses(Record(), []).verdict == "matched"
