"""clock_service.outcome.game_outcome on a result taken back (the referee's withdraw of a
result): each result counts as its latest ruling left it, and the standing one is the newest
by its first report — as the referee has it."""

from __future__ import annotations

from typing import Any

from clock_service.outcome import game_outcome
from clock_service.regulation import Regulation

REG = Regulation.load("meishan-2016")


def result(seq: int, winner: str | None, reason: str, status: str, ref: int | None = None) -> Any:
    data: dict[str, Any] = {"winner": winner, "reason": reason, "status": status}
    if ref is not None:
        data["ref"] = ref
    return {"seq": seq, "type": "result", "data": data}


FLAG = {"seq": 3, "type": "flag", "data": {"side": "red"}}


def test_a_flag_confirmed_then_taken_back_decides_nothing() -> None:
    facts = [
        FLAG,
        result(4, "black", "flag", "pending"),
        result(5, "black", "flag", "confirmed", 4),
    ]
    assert game_outcome(facts, REG).status == "confirmed"  # (control: it stood)
    facts.append(result(6, "black", "flag", "dismissed", 4))
    outcome = game_outcome(facts, REG)
    assert outcome.status == "undecided" and outcome.outcome is None, outcome


def test_the_standing_result_is_the_newest_reported_not_the_newest_ruled() -> None:
    # a flag proposed, the arbiter's own result entered, then the flag confirmed after all:
    # the referee's standing result is the arbiter's (the newest proposal), not the flag's
    facts = [
        FLAG,
        result(4, "black", "flag", "pending"),
        result(5, None, "agreed_draw", "confirmed"),
        result(6, "black", "flag", "confirmed", 4),
    ]
    outcome = game_outcome(facts, REG)
    assert (outcome.status, outcome.outcome, outcome.reason) == ("confirmed", "draw", "agreed_draw")
    # the draw taken back with the flag (withdraw dismisses every confirmed result)
    facts += [
        result(7, None, "agreed_draw", "dismissed", 5),
        result(8, "black", "flag", "dismissed", 4),
    ]
    assert game_outcome(facts, REG).status == "undecided"
