"""``qizhong demo`` promises a few flags: its clocks run in real time while its players think
``speed`` times faster, so a player in time trouble must think long enough *at that speed* to
run out of his main time before his game is over (issue 25: at ×10 none ever flagged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qizhong.simulation.demo import INCREMENT_S, time_trouble_mean_s, tune_time_trouble
from qizhong.simulation.venue import LocalVenue

MEISHAN_MAIN_S, WULONG_MAIN_S = 30 * 60, 35 * 60  # the seeds' 30 min + 5 s and 35 min + 5 s


def flag_move(mean_move_s: float, speed: float, main_s: float) -> float:
    """The move at which a player thinking ``mean_move_s`` (simulated) on average flags."""
    real_s = mean_move_s / speed
    return main_s / (real_s - INCREMENT_S) if real_s > INCREMENT_S else float("inf")


@pytest.mark.parametrize("speed", [1.0, 10.0, 30.0])
@pytest.mark.parametrize("moves", [25, 40, 60])
def test_a_player_in_time_trouble_flags_before_his_game_ends(speed: float, moves: int) -> None:
    mean = time_trouble_mean_s(moves, speed)
    for main_s in (MEISHAN_MAIN_S, WULONG_MAIN_S):
        assert flag_move(mean, speed, main_s) <= moves / 2 + 0.01


def test_the_demo_venue_has_a_few_players_who_flag_at_x10(tmp_path: Path) -> None:
    venue = LocalVenue(tmp_path, boards=40, speed=10.0, seed=2016)
    # before: the venue's slow players (75 s a move) at ×10 never run out in their games
    slow = [p for p in venue.plans.values() if p.mean_move_s >= 60]
    assert slow and all(flag_move(p.mean_move_s, 10.0, MEISHAN_MAIN_S) > p.moves for p in slow)
    tuned = tune_time_trouble(venue)
    assert 1 <= len(tuned) <= 5  # a few, not the hall
    for board in tuned:
        plan = venue.plans[board]
        assert flag_move(plan.mean_move_s, 10.0, MEISHAN_MAIN_S) < plan.moves
    others = [p for b, p in venue.plans.items() if b not in tuned]
    assert all(flag_move(p.mean_move_s, 10.0, MEISHAN_MAIN_S) > p.moves for p in others)
