"""Which command an alert's confirm / dismiss sends the board (issue 25: one decision, one
click): the proposal each alert carries, found among its game's events, and the refusals."""

from __future__ import annotations

from typing import Any

import pytest

from venue_station.domain.rulings import RulingRefused, plan_ruling
from venue_station.live.results import derive_game


def ev(seq: int, type_: str, **data: Any) -> dict[str, Any]:
    return {"board": "5", "seq": seq, "type": type_, "data": data}


def alert(kind: str, seq: int, *, side: str | None = None, status: str = "open", **detail: Any):
    return {"id": 7, "kind": kind, "board": "5", "game": "r1-b5", "side": side, "seq": seq,
            "status": status, "detail": detail}  # fmt: skip


FLAG = [
    ev(10, "flag", side="red"),
    ev(11, "result", winner="black", reason="flag", status="pending"),
]
LATE = [
    ev(3, "late", side="red"),
    ev(4, "forfeit", side="red", reason="late", status="pending"),
    ev(5, "late", side="black"),
    ev(6, "forfeit", side="black", reason="late", status="pending"),
    ev(7, "result", winner=None, reason="double_forfeit", status="pending"),
]


def test_a_flag_alert_resolves_the_flags_pending_loss_not_the_flag_event() -> None:
    ruling = plan_ruling(alert("flag", 10, side="red"), "confirm", FLAG, decided=False)
    assert (ruling.cmd, ruling.args, ruling.status) == (
        "resolve",
        {"seq": 11, "status": "confirmed"},
        "confirmed",
    )
    dismissed = plan_ruling(alert("flag", 10, side="red"), "dismiss", FLAG, decided=False)
    assert dismissed.args == {"seq": 11, "status": "dismissed"}


def test_each_late_alert_resolves_its_own_sides_forfeit() -> None:
    red = plan_ruling(alert("late", 3, side="red"), "confirm", LATE, decided=False)
    black = plan_ruling(alert("late", 5, side="black"), "confirm", LATE, decided=False)
    assert (red.args["seq"], black.args["seq"]) == (4, 6)


def test_a_switched_off_clock_a_foul_and_a_pending_warning() -> None:
    events = [
        ev(20, "shutdown", cause="power_switch", authorised=False, side_on_move="red"),
        ev(21, "forfeit", side="red", reason="power_switch", status="pending"),
    ]
    shut = plan_ruling(alert("shutdown", 20, side="red"), "dismiss", events, decided=False)
    assert shut.args == {"seq": 21, "status": "dismissed"}
    foul = [ev(30, "foul", side="black", reason="board_pause", status="pending", count=0)]
    assert plan_ruling(alert("foul_pending", 30), "confirm", foul, decided=False).args == {
        "seq": 30, "status": "confirmed"
    }  # fmt: skip
    early = [ev(40, "warning", reason="draw_too_early", status="pending")]
    a = alert("warning", 40, reason="draw_too_early", status="open")
    a["detail"]["status"] = "pending"
    assert plan_ruling(a, "confirm", early, decided=True).args == {"seq": 40, "status": "confirmed"}


def test_a_press_before_the_flag_confirmed_takes_the_flags_loss_away() -> None:
    events = [*FLAG, ev(12, "warning", reason="press_before_flag", side="red", status="pending")]
    a = alert("warning", 12, side="red", reason="press_before_flag", status="pending")
    ruling = plan_ruling(a, "confirm", events, decided=False)
    assert (ruling.cmd, ruling.args) == ("resolve", {"seq": 11, "status": "dismissed"})
    assert plan_ruling(a, "dismiss", events, decided=False).cmd is None


def test_a_move_count_reached_confirmed_is_a_draw_entered() -> None:
    ruling = plan_ruling(alert("move_limit", 50), "confirm", [], decided=False)
    assert (ruling.cmd, ruling.args) == ("result", {"winner": None, "reason": "move_limit_draw"})
    with pytest.raises(RulingRefused) as refused:
        plan_ruling(alert("move_limit", 50), "confirm", [], decided=True)
    assert refused.value.code == "already_decided"


def test_ruling_again_is_refused_with_a_code() -> None:
    with pytest.raises(RulingRefused) as refused:
        plan_ruling(alert("flag", 10, status="confirmed"), "dismiss", FLAG, decided=True)
    assert refused.value.code == "already_ruled"
    assert refused.value.args_ == {"status": "confirmed", "by": "station"}
    ruled = [*FLAG, ev(12, "result", winner="black", reason="flag", status="confirmed", ref=11)]
    with pytest.raises(RulingRefused) as refused:
        plan_ruling(alert("flag", 10), "confirm", ruled, decided=True)
    assert refused.value.code == "already_ruled"
    with pytest.raises(RulingRefused) as refused:
        plan_ruling(alert("flag", 10), "confirm", FLAG[:1], decided=False)
    assert refused.value.code == "no_proposal"


def test_informing_alerts_are_only_closed() -> None:
    ruling = plan_ruling(alert("board_lost", 0), "confirm", [], decided=False)
    assert (ruling.cmd, ruling.status) == (None, "confirmed")


def test_one_confirmed_lateness_decides_nothing_while_the_double_forfeit_waits() -> None:
    one = [*LATE, ev(8, "forfeit", side="red", reason="late", status="confirmed", ref=4)]
    out = derive_game(one)
    assert (out.result, out.status, out.proposed) == (None, "pending", "0-0")
    both = [
        *one,
        ev(9, "forfeit", side="black", reason="late", status="confirmed", ref=6),
        ev(10, "result", winner=None, reason="double_forfeit", status="confirmed", ref=7),
    ]
    assert derive_game(both).result == "0-0"
    # Black was there after all: the 0:0 is dismissed, red's lateness alone decides.
    black_there = [
        *one,
        ev(9, "forfeit", side="black", reason="late", status="dismissed", ref=6),
        ev(10, "result", winner=None, reason="double_forfeit", status="dismissed", ref=7),
        ev(11, "result", winner="black", reason="late", status="confirmed"),
    ]
    assert derive_game(black_there).result == "0-1"
