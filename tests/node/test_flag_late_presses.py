"""Presses that arrive after a flag stood unproven (a line down across the deadline): the
flagged side's own press from before it is kept for the arbiter's ruling; a press of the other
side from before the flag marks the order of the two as unknown, and the ruling then leaves the
times to the arbiter (a reviewer: black's press was dropped and black charged as if it had not
moved)."""

from __future__ import annotations

from board_nodes.flag_guard import FlagGuard
from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

MS = 1_000_000


def guard() -> FlagGuard:
    g = FlagGuard(SimulatedFace(mode="idle"), clock=lambda: None, stand=lambda: None)
    g.stood = (Side.RED, 10_000 * MS)  # red's flag, at 10 s
    return g


def test_the_flagged_sides_first_press_before_the_flag_is_kept() -> None:
    g = guard()
    assert g.press_before_flag(Side.RED, 9_700 * MS) == 300
    assert g.press_before_flag(Side.RED, 9_800 * MS) == 200
    assert g.late_press == (Side.RED, 9_700 * MS) and not g.other_pressed
    assert g.press_before_flag(Side.RED, 10_100 * MS) is None  # after the flag: no news


def test_the_other_sides_press_before_the_flag_marks_the_order_unknown() -> None:
    g = guard()
    g.press_before_flag(Side.RED, 9_000 * MS)
    assert g.press_before_flag(Side.BLACK, 9_500 * MS) is None
    assert g.other_pressed
    g.forget()
    assert (g.stood, g.late_press, g.other_pressed) == (None, None, False)


def test_the_other_sides_press_after_the_flag_changes_nothing() -> None:
    g = guard()
    g.press_before_flag(Side.BLACK, 10_500 * MS)
    assert not g.other_pressed
