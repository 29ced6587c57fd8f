"""The Referee, rule by rule of DESIGN.md §2, both seed regulations side by side."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clock_service.referee import Proposal, ProposalKind, ProposalStatus, Referee
from clock_service.regulation import Regulation
from clock_service.side import Side
from wire_contract.messages import EVENT_DATA

RED, BLACK = Side.RED, Side.BLACK
PENDING, CONFIRMED, DISMISSED = (
    ProposalStatus.PENDING,
    ProposalStatus.CONFIRMED,
    ProposalStatus.DISMISSED,
)
MEISHAN, WULONG = "meishan-2016", "wulong-2015"
BOTH = pytest.mark.parametrize("profile", [MEISHAN, WULONG])


def referee(profile: str, **kw: bool) -> Referee:
    return Referee(Regulation.load(profile), **kw)


def shape(proposals: list[Proposal]) -> list[tuple[str, str, str]]:
    return [(p.kind.value, p.reason, p.status.value) for p in proposals]


def pause_and_rule(ref: Referee, side: Side, status: str) -> list[Proposal]:
    (foul,) = ref.board_paused(side)
    return ref.resolve(foul.id, status)


# -- fouls --------------------------------------------------------------------------------
@pytest.mark.parametrize(("profile", "forfeit_at"), [(MEISHAN, 2), (WULONG, 3)])
def test_confirmed_fouls_forfeit_at_the_profile_threshold(profile: str, forfeit_at: int):
    ref = referee(profile)
    for n in range(1, forfeit_at):
        out = pause_and_rule(ref, BLACK, "confirmed")
        assert shape(out) == [("foul", "board_pause", "confirmed")]
        assert out[0].count == n == ref.fouls(BLACK)
        assert not ref.finished
    out = pause_and_rule(ref, BLACK, "confirmed")
    assert shape(out) == [
        ("foul", "board_pause", "confirmed"),
        ("forfeit", "fouls", "confirmed"),
        ("result", "fouls", "confirmed"),
    ]
    assert out[0].count == forfeit_at
    assert out[1].side is BLACK and out[2].winner is RED
    assert ref.finished and ref.result == out[2]


@BOTH
def test_a_board_pause_is_a_pending_foul_against_the_pauser_or_the_side_on_move(profile: str):
    ref = referee(profile)
    (p,) = ref.board_paused(RED)
    assert (p.kind, p.side, p.status, p.count) == (ProposalKind.FOUL, RED, PENDING, 0)
    (q,) = ref.board_paused(RED, by=BLACK)
    assert q.side is BLACK
    assert ref.pending() == [p, q] and ref.fouls(RED) == ref.fouls(BLACK) == 0
    assert ref.board_paused(None) == []  # before the start: no game, no offence


@pytest.mark.parametrize(("profile", "forfeit_at"), [(MEISHAN, 2), (WULONG, 3)])
def test_dismissed_fouls_do_not_count(profile: str, forfeit_at: int):
    ref = referee(profile)
    for _ in range(forfeit_at + 2):
        out = pause_and_rule(ref, RED, "dismissed")
        assert shape(out) == [("foul", "board_pause", "dismissed")] and out[0].count == 0
    assert ref.fouls(RED) == 0 and not ref.finished


@pytest.mark.parametrize(("profile", "allowed"), [(MEISHAN, False), (WULONG, True)])
def test_pressing_without_moving_is_a_foul_only_where_listed(profile: str, allowed: bool):
    ref = referee(profile)
    if allowed:
        out = ref.arbiter_foul(RED, "pressed_without_moving")
        assert shape(out) == [("foul", "pressed_without_moving", "confirmed")]
        assert out[0].count == 1
    else:
        with pytest.raises(ValueError, match="not a foul under meishan-2016"):
            ref.arbiter_foul(RED, "pressed_without_moving")
        assert ref.proposals() == []


@pytest.mark.parametrize(("profile", "forfeit_at"), [(MEISHAN, 2), (WULONG, 3)])
def test_arbiter_fouls_and_ruled_pauses_add_up(profile: str, forfeit_at: int):
    ref = referee(profile)
    for _ in range(forfeit_at - 1):
        ref.arbiter_foul(RED, "disturbing")
    out = pause_and_rule(ref, RED, "confirmed")
    assert [p.kind for p in out][1:] == [ProposalKind.FORFEIT, ProposalKind.RESULT]


@BOTH
def test_fouls_beyond_the_threshold_do_not_forfeit_twice(profile: str):
    ref = referee(profile)
    at = ref.regulation.fouls.forfeit_at
    for _ in range(at):
        ref.arbiter_foul(BLACK, "disturbing")
    out = ref.arbiter_foul(BLACK, "disturbing")
    assert shape(out) == [("foul", "disturbing", "confirmed")] and out[0].count == at + 1


# -- switching the clock off, late, flag ----------------------------------------------------
@BOTH
def test_unauthorised_switch_off_is_a_pending_forfeit(profile: str):
    ref = referee(profile)
    (p,) = ref.clock_switched_off(BLACK, authorised=False)
    assert (p.kind, p.side, p.reason, p.status) == (
        ProposalKind.FORFEIT,
        BLACK,
        "power_switch",
        PENDING,
    )
    out = ref.resolve(p.id, "confirmed")
    assert shape(out) == [
        ("forfeit", "power_switch", "confirmed"),
        ("result", "power_switch", "confirmed"),
    ]
    assert out[1].winner is RED


@BOTH
def test_authorised_switch_off_is_no_offence(profile: str):
    ref = referee(profile)
    assert ref.clock_switched_off(RED, authorised=True) == []
    assert ref.clock_switched_off(None, authorised=False) == []
    assert ref.proposals() == []


@BOTH
def test_arbiter_attributes_a_switch_off_to_the_other_side(profile: str):
    ref = referee(profile)
    (p,) = ref.clock_switched_off(RED, authorised=False)
    forfeit, result = ref.resolve(p.id, CONFIRMED, side=BLACK)
    assert forfeit.side is BLACK and result.winner is RED


@BOTH
def test_dismissed_switch_off_changes_nothing(profile: str):
    ref = referee(profile)
    (p,) = ref.clock_switched_off(RED, authorised=False)
    assert shape(ref.resolve(p.id, DISMISSED)) == [("forfeit", "power_switch", "dismissed")]
    assert not ref.finished and ref.pending() == []


@BOTH
def test_a_clock_switched_off_again_while_its_forfeit_waits_proposes_no_second(profile: str):
    """One switched-off clock gave two 擅自关闭棋钟 alerts (off before a node restart and
    again after it): ruled by two arbiters, the loss and the result went twice into the
    board's history (an outsider). While the side's power-switch forfeit waits, another
    switch-off is the same offence for the arbiter; once that one is dismissed, a new one
    counts again — also after the referee is restored from the node's checkpoint."""
    ref = referee(profile)
    (p,) = ref.clock_switched_off(RED, authorised=False)
    assert ref.clock_switched_off(RED, authorised=False) == []
    again = Referee.restore(ref.regulation, json.loads(json.dumps(ref.snapshot())))
    assert again.clock_switched_off(RED, authorised=False) == []  # after a node restart
    assert [q.id for q in again.pending()] == [p.id]
    again.resolve(p.id, DISMISSED)
    (second,) = again.clock_switched_off(RED, authorised=False)
    assert second.id != p.id and second.status is PENDING


@BOTH
def test_late_is_a_pending_forfeit_once_per_side(profile: str):
    ref = referee(profile)
    (p,) = ref.late(RED)
    assert (p.kind, p.side, p.reason, p.status) == (ProposalKind.FORFEIT, RED, "late", PENDING)
    assert ref.late(RED) == []
    _, result = ref.resolve(p.id, "confirmed")
    assert (result.winner, result.reason) == (BLACK, "late")


MIN = 60_000
LATE_CASES = [
    # (ms after round start, red moves, black moves, late side)
    (15 * MIN - 1, 0, 0, None),
    (15 * MIN, 0, 0, RED),
    (15 * MIN, 1, 0, BLACK),
    (15 * MIN, 1, 1, None),
    (40 * MIN, 5, 4, None),
]


@BOTH
@pytest.mark.parametrize(("after", "red", "black", "late"), LATE_CASES)
def test_late_side_after_fifteen_minutes(profile: str, after: int, red: int, black: int, late):
    ref = referee(profile)
    start = 1_481_333_400_000
    assert ref.late_deadline_ms(start) == start + 15 * MIN
    got = ref.late_side(
        now_ms=start + after, round_start_ms=start, red_moves=red, black_moves=black
    )
    assert got is late


@BOTH
@pytest.mark.parametrize("side", [RED, BLACK])
def test_flag_proposes_a_loss_for_the_flagged_side(profile: str, side: Side):
    ref = referee(profile)
    (p,) = ref.flag_fell(side)
    assert (p.kind, p.winner, p.reason, p.status) == (
        ProposalKind.RESULT,
        side.other,
        "flag",
        PENDING,
    )
    assert ref.finished and ref.result == p


# -- results ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("profile", "moves", "warned"),
    [
        (MEISHAN, 5, False),
        (MEISHAN, 19, False),
        (WULONG, 0, True),
        (WULONG, 19, True),
        (WULONG, 20, False),
    ],
)
def test_early_agreed_draw_is_flagged_only_under_wulong(profile: str, moves: int, warned: bool):
    ref = referee(profile)
    out = ref.result_entered(None, "agreed", moves=moves)
    expected = [("warning", "draw_too_early", "pending")] if warned else []
    assert shape(out) == [*expected, ("result", "agreed", "confirmed")]
    assert out[-1].winner is None
    if warned:
        assert (out[0].moves, out[0].limit) == (moves, 20)


@BOTH
def test_a_decisive_result_is_never_too_early(profile: str):
    assert shape(referee(profile).result_entered(RED, "resigned", moves=3)) == [
        ("result", "resigned", "confirmed")
    ]


def test_tiebreak_draw_is_a_win_for_black():
    ref = referee(MEISHAN, tiebreak_game=True)
    (p,) = ref.result_entered(None, "agreed", moves=2)
    assert (p.winner, p.reason) == (BLACK, "draw_black_wins")
    assert (
        referee(MEISHAN, tiebreak_game=True).result_entered(RED, "mate", moves=30)[0].winner is RED
    )


def test_wulong_has_no_tiebreak_game():
    with pytest.raises(ValueError, match="wulong-2015 has no tie-break game"):
        referee(WULONG, tiebreak_game=True)


@BOTH
def test_after_a_result_facts_yield_nothing_but_rulings_work(profile: str):
    ref = referee(profile)
    (pause,) = ref.board_paused(RED)
    (late,) = ref.late(BLACK)
    ref.flag_fell(BLACK)
    assert ref.board_paused(RED) == []
    assert ref.clock_switched_off(RED, authorised=False) == []
    assert ref.flag_fell(RED) == [] and ref.late(RED) == []
    assert ref.start_move_count(red_moves=1, black_moves=1) == []
    assert shape(ref.resolve(pause.id, "confirmed")) == [("foul", "board_pause", "confirmed")]
    # A confirmed forfeit is a ruling: its result overrides the standing one.
    out = ref.resolve(late.id, "confirmed")
    assert ref.result == out[-1] and out[-1].reason == "late"


@BOTH
def test_a_foul_reaching_the_limit_after_a_result_is_left_to_the_arbiter(profile: str):
    ref = referee(profile)
    pauses = [ref.board_paused(RED)[0] for _ in range(ref.regulation.fouls.forfeit_at)]
    (flag,) = ref.flag_fell(BLACK)
    for p in pauses[:-1]:
        ref.resolve(p.id, "confirmed")
    out = ref.resolve(pauses[-1].id, "confirmed")
    assert shape(out) == [("foul", "board_pause", "confirmed"), ("forfeit", "fouls", "pending")]
    assert ref.result == flag
    assert ref.resolve(out[1].id, "confirmed")[-1].winner is BLACK


@BOTH
def test_dismissing_the_flag_result_reopens_the_game(profile: str):
    ref = referee(profile)
    (flag,) = ref.flag_fell(RED)
    ref.resolve(flag.id, "dismissed")
    assert not ref.finished and ref.result is None
    assert len(ref.board_paused(RED)) == 1


@BOTH
def test_the_arbiter_can_override_a_result(profile: str):
    ref = referee(profile)
    ref.flag_fell(RED)
    (p,) = ref.result_entered(RED, "arbiter", moves=30)
    assert ref.result == p


# -- resolve ----------------------------------------------------------------------------------
def test_resolve_is_idempotent_and_strict():
    ref = referee(MEISHAN)
    (p,) = ref.board_paused(RED)
    assert len(ref.resolve(p.id, "confirmed")) == 1
    assert ref.resolve(p.id, "confirmed") == []
    assert ref.fouls(RED) == 1
    with pytest.raises(ValueError, match="already confirmed"):
        ref.resolve(p.id, "dismissed")
    with pytest.raises(ValueError, match="no proposal 99"):
        ref.resolve(99, "confirmed")
    with pytest.raises(ValueError, match="only be resolved as confirmed or dismissed"):
        ref.resolve(p.id, "pending")
    with pytest.raises(ValueError, match="status must be"):
        ref.resolve(p.id, "ok")
    (flag,) = ref.flag_fell(RED)
    with pytest.raises(ValueError, match="no side to attribute"):
        ref.resolve(flag.id, "confirmed", side=BLACK)


# -- natural move limit -----------------------------------------------------------------------
@pytest.mark.parametrize(("profile", "limit"), [(MEISHAN, 40), (WULONG, 50)])
def test_move_count_reaches_the_profile_limit(profile: str, limit: int):
    ref = referee(profile)
    (started,) = ref.start_move_count(red_moves=30, black_moves=30)
    assert started.to_wire() == ("move_count", {"status": "started", "limit": limit, "at_move": 30})
    for n in range(1, limit):
        assert ref.moves_made(30 + n, 30 + n - 1) == []
        assert ref.moves_made(30 + n, 30 + n) == []
    assert ref.move_count() == (limit - 1, limit)
    assert ref.moves_made(30 + limit, 30 + limit - 1) == []
    (reached,) = ref.moves_made(30 + limit, 30 + limit)
    assert (reached.reason, reached.limit) == ("reached", limit)
    assert ref.moves_made(31 + limit, 31 + limit) == []  # reported once


@BOTH
def test_move_count_started_on_blacks_turn_counts_full_moves(profile: str):
    ref = referee(profile)
    ref.start_move_count(red_moves=11, black_moves=10, limit=2)
    assert ref.moves_made(12, 11) == []  # black then red: one full move
    assert ref.moves_made(13, 12) != []  # two


@BOTH
def test_move_count_restarts_and_validates(profile: str):
    ref = referee(profile)
    assert ref.moves_made(5, 5) == []  # no count running
    ref.start_move_count(red_moves=0, black_moves=0, limit=3)
    ref.start_move_count(red_moves=2, black_moves=2, limit=3)
    assert ref.moves_made(4, 4) == [] and ref.moves_made(5, 5) != []
    with pytest.raises(ValueError, match="at least 1"):
        ref.start_move_count(red_moves=0, black_moves=0, limit=0)
    with pytest.raises(ValueError, match="impossible move counts"):
        ref.moves_made(3, 5)


@pytest.mark.parametrize(("profile", "checks"), [(MEISHAN, 0), (WULONG, 10)])
def test_the_checks_rule_is_exposed_for_the_arbiter(profile: str, checks: int):
    assert referee(profile).regulation.move_limit.claimant_checks_counted == checks


# -- wire, repr, journal ---------------------------------------------------------------------
def _every_kind(ref: Referee) -> list[Proposal]:
    out = ref.board_paused(RED) + ref.clock_switched_off(BLACK, authorised=False) + ref.late(RED)
    out += ref.start_move_count(red_moves=0, black_moves=0, limit=1) + ref.moves_made(1, 1)
    out += ref.resolve(out[0].id, "confirmed") + ref.resolve(out[1].id, "dismissed")
    out += ref.arbiter_foul(BLACK, "disturbing")
    return out + ref.result_entered(None, "agreed", moves=1) + ref.flag_fell(RED)


@BOTH
def test_to_wire_matches_the_wire_contract(profile: str):
    proposals = _every_kind(referee(profile))
    kinds = {p.kind for p in proposals}
    assert kinds >= {
        ProposalKind.FOUL,
        ProposalKind.FORFEIT,
        ProposalKind.RESULT,
        ProposalKind.MOVE_COUNT,
    }
    for p in proposals:
        kind, data = p.to_wire()
        EVENT_DATA[kind].model_validate(data)  # raises on any mismatch
    foul = proposals[0].to_wire()
    assert foul == (
        "foul",
        {"side": "red", "reason": "board_pause", "status": "pending", "count": 0},
    )
    assert proposals[2].to_wire() == (
        "forfeit",
        {"side": "red", "reason": "late", "status": "pending"},
    )


def test_warning_wire_and_reprs():
    ref = referee(WULONG)
    (foul,) = ref.board_paused(BLACK)
    assert repr(foul) == "<Proposal #1 foul black board_pause pending count=0>"
    warning, result = ref.result_entered(None, "agreed", moves=12)
    assert warning.to_wire() == (
        "warning",
        {"reason": "draw_too_early", "side": None, "detail": "moves=12 min_moves=20"},
    )
    assert repr(warning) == "<Proposal #2 warning draw_too_early pending limit=20 moves=12>"
    assert repr(result) == "<Proposal #3 result winner=draw agreed confirmed>"
    assert repr(ref) == "<Referee wulong-2015 finished fouls red=0 black=0 pending=2>"


@BOTH
def test_snapshot_restore_round_trip(profile: str):
    ref = referee(profile)
    _every_kind(ref)
    snap = json.loads(json.dumps(ref.snapshot()))
    again = Referee.restore(ref.regulation, snap)
    assert again.snapshot() == ref.snapshot()
    assert again.proposals() == ref.proposals() and again.result == ref.result
    # the restored referee continues with fresh ids and the same counts
    assert (
        again.arbiter_foul(BLACK, "disturbing")[0].id == ref.arbiter_foul(BLACK, "disturbing")[0].id
    )
    assert again.fouls(BLACK) == ref.fouls(BLACK)


def test_restore_mid_count_keeps_counting():
    ref = referee(MEISHAN)
    ref.start_move_count(red_moves=0, black_moves=0, limit=2)
    ref.moves_made(1, 1)
    again = Referee.restore(ref.regulation, ref.snapshot())
    assert again.move_count() == (1, 2)
    assert again.moves_made(2, 2)[0].reason == "reached"


def test_restore_refuses_another_regulation():
    snap = referee(MEISHAN).snapshot()
    with pytest.raises(ValueError, match="snapshot is for 'meishan-2016', not 'wulong-2015'"):
        Referee.restore(Regulation.load(WULONG), snap)


# -- property: whatever the order of rulings, the count and the forfeit follow the rule ---------
@given(
    st.sampled_from([MEISHAN, WULONG]),
    st.lists(st.tuples(st.booleans(), st.booleans()), max_size=12),
)
def test_foul_count_and_forfeit_follow_the_rulings(profile: str, rulings: list[tuple[bool, bool]]):
    ref = referee(profile)
    at = ref.regulation.fouls.forfeit_at
    pauses = [(ref.board_paused(RED if red else BLACK)[0], confirm) for red, confirm in rulings]
    for p, confirm in reversed(pauses):
        ref.resolve(p.id, "confirmed" if confirm else "dismissed")
    for side in (RED, BLACK):
        confirmed = sum(1 for (p, c) in pauses if c and p.side is side)
        assert ref.fouls(side) == confirmed
        forfeits = [p for p in ref.proposals() if p.kind is ProposalKind.FORFEIT and p.side is side]
        assert len(forfeits) == (1 if confirmed >= at else 0)
    assert ref.pending() == [p for p in ref.proposals() if p.status is PENDING]
