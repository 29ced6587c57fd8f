"""Referee.withdraw: a confirmed foul taken back (recorded by mistake), and the loss by fouls
it completed with it; both seed regulations."""

from __future__ import annotations

import json

import pytest

from clock_service.referee import Proposal, Referee
from clock_service.regulation import Regulation
from clock_service.side import Side

RED, BLACK = Side.RED, Side.BLACK
MEISHAN, WULONG = "meishan-2016", "wulong-2015"
BOTH = pytest.mark.parametrize("profile", [MEISHAN, WULONG])


def referee(profile: str) -> Referee:
    return Referee(Regulation.load(profile))


def shape(proposals: list[Proposal]) -> list[tuple[str, str, str]]:
    return [(p.kind.value, p.reason, p.status.value) for p in proposals]


@pytest.mark.parametrize(("profile", "forfeit_at"), [(MEISHAN, 2), (WULONG, 3)])
def test_withdrawing_a_foul_takes_back_the_loss_it_completed(profile: str, forfeit_at: int):
    ref = referee(profile)
    first = ref.arbiter_foul(RED, "disturbing")[0]
    for _ in range(forfeit_at - 1):
        out = ref.arbiter_foul(RED, "disturbing")
    forfeit, result = out[1], out[2]
    assert ref.finished and ref.fouls(RED) == forfeit_at
    back = ref.withdraw(first.id)  # the first was recorded by mistake
    assert shape(back) == [
        ("foul", "disturbing", "dismissed"),
        ("forfeit", "fouls", "dismissed"),
        ("result", "fouls", "dismissed"),
    ]
    assert [p.id for p in back] == [first.id, forfeit.id, result.id]
    assert back[0].count == forfeit_at - 1 == ref.fouls(RED)
    assert not ref.finished and ref.result is None
    assert ref.withdraw(first.id) == []  # again: nothing
    # the next foul completes the loss again, once
    again = ref.arbiter_foul(RED, "disturbing")
    assert shape(again)[1:] == [("forfeit", "fouls", "confirmed"), ("result", "fouls", "confirmed")]
    assert ref.finished and ref.result == again[2]
    # and it survives the journal
    back2 = Referee.restore(ref.regulation, json.loads(json.dumps(ref.snapshot())))
    assert back2.fouls(RED) == forfeit_at and back2.finished


@BOTH
def test_withdrawing_a_foul_leaves_a_loss_still_reached_and_a_result_entered_since(profile: str):
    ref = referee(profile)
    at = ref.regulation.fouls.forfeit_at
    fouls = [ref.arbiter_foul(BLACK, "disturbing")[0] for _ in range(at + 1)]  # one beyond
    assert shape(ref.withdraw(fouls[0].id)) == [("foul", "disturbing", "dismissed")]
    assert ref.finished and ref.result is not None and ref.result.reason == "fouls"
    ref2 = referee(profile)
    firsts = [ref2.arbiter_foul(BLACK, "disturbing")[0] for _ in range(at)]
    (entered,) = ref2.result_entered(None, "agreed_draw", moves=40)  # the arbiter's result
    out = ref2.withdraw(firsts[0].id)
    assert shape(out) == [("foul", "disturbing", "dismissed"), ("forfeit", "fouls", "dismissed")]
    assert ref2.result == entered  # the result entered since stands


def test_withdrawing_a_reasons_own_loss():
    # Wulong: the second move_rule_violation loses at once (立即判负（7）)
    ref = referee(WULONG)
    a = ref.arbiter_foul(RED, "move_rule_violation")[0]
    out = ref.arbiter_foul(RED, "move_rule_violation")
    assert shape(out)[1] == ("forfeit", "move_rule_violations", "confirmed")
    back = ref.withdraw(a.id)
    assert shape(back)[1:] == [
        ("forfeit", "move_rule_violations", "dismissed"),
        ("result", "move_rule_violations", "dismissed"),
    ]
    assert not ref.finished and ref.fouls(RED) == 1


def test_only_a_confirmed_foul_or_result_is_withdrawn():
    ref = referee(MEISHAN)
    (pending,) = ref.board_paused(RED)
    with pytest.raises(ValueError, match="not confirmed: dismiss it instead"):
        ref.withdraw(pending.id)
    (count,) = ref.start_move_count(red_moves=0, black_moves=0)
    with pytest.raises(ValueError, match="not a foul"):
        ref.withdraw(count.id)
    (flag,) = ref.flag_fell(RED)
    with pytest.raises(ValueError, match=f"result {flag.id} is not confirmed: dismiss it"):
        ref.withdraw(flag.id)
    with pytest.raises(ValueError, match="no proposal 99"):
        ref.withdraw(99)
    ref.resolve(pending.id, "dismissed")
    assert ref.withdraw(pending.id) == []  # dismissed at its ruling: nothing to take back


@BOTH
def test_a_result_confirmed_by_mistake_is_taken_back_and_the_game_goes_on(profile: str):
    """Entered on the wrong board, replaced, then taken back: every confirmed result goes, the
    game has none and goes on (clock facts count again); a flag's loss confirmed while its
    clock was at fault likewise; a pending proposal stays for the arbiter."""
    ref = referee(profile)
    wrong = ref.result_entered(RED, "resignation", moves=20)[-1]
    replaced = ref.result_entered(BLACK, "resignation", moves=20)[-1]
    back = ref.withdraw(replaced.id)
    assert [(p.id, p.status.value) for p in back] == [
        (replaced.id, "dismissed"),
        (wrong.id, "dismissed"),
    ]
    assert not ref.finished and ref.result is None and ref.withdraw(replaced.id) == []
    flag = ref.flag_fell(RED)[0]  # the clock goes on: a fact counts again
    ref.resolve(flag.id, "confirmed")
    assert shape(ref.withdraw(flag.id)) == [("result", "flag", "dismissed")]
    assert not ref.finished


@BOTH
def test_a_forfeit_taken_back_with_its_result_and_a_loss_by_fouls_is_not(profile: str):
    ref = referee(profile)
    forfeit = ref.clock_switched_off(RED, authorised=False)
    assert forfeit and forfeit[0].kind.value == "forfeit"
    made = ref.resolve(forfeit[0].id, "confirmed")
    result = made[-1]
    assert result.kind.value == "result" and ref.finished
    assert shape(ref.withdraw(result.id)) == [
        ("result", "power_switch", "dismissed"),
        ("forfeit", "power_switch", "dismissed"),
    ]
    assert not ref.finished
    with pytest.raises(ValueError, match="not confirmed"):
        ref.withdraw(ref.flag_fell(BLACK)[0].id)  # pending: dismissed in the alerts instead
    fouls = referee(profile)
    for _ in range(fouls.regulation.fouls.forfeit_at):
        out = fouls.arbiter_foul(BLACK, "disturbing")
    with pytest.raises(ValueError, match="withdraw the foul"):
        fouls.withdraw(out[-1].id)
    assert fouls.finished
