"""A game's result and fouls derived from its events (the one outcome function, issue 15:
a pending proposal is shown as one and counts nowhere until the arbiter confirms it)."""

from __future__ import annotations

from clock_service.regulation import Scoring
from venue_station.live.results import derive_game, points, tournament_fouls


def ev(seq: int, type: str, **data: object) -> dict:
    return {"seq": seq, "type": type, "data": data}


def test_undecided_without_a_decisive_event() -> None:
    out = derive_game([ev(1, "move", side="red", used_ms=1, move=1)])
    assert not out.decided and out.result is None


def test_the_first_flag_proposes_the_loss_and_later_flags_are_ignored() -> None:
    out = derive_game([ev(9, "flag", side="red"), ev(5, "flag", side="black")])
    assert (out.winner, out.result, out.reason, out.seq) == (None, None, None, 5)
    assert (out.status, out.proposed, out.proposed_reason) == ("pending", "1-0", "flag")
    assert not out.decided


def test_a_result_event_decides_and_the_latest_wins() -> None:
    events = [
        ev(3, "flag", side="red"),
        ev(4, "result", winner="red", reason="arbiter"),
        ev(6, "result", winner=None, reason="agreed_draw"),
    ]
    out = derive_game(events)
    assert (out.result, out.reason, out.source) == ("1/2-1/2", "agreed_draw", "result")


def test_a_confirmed_forfeit_loses_a_pending_or_dismissed_one_does_not() -> None:
    pending = [ev(4, "forfeit", side="black", reason="switch_off", status="pending")]
    assert not derive_game(pending).decided
    dismissed = [
        *pending,
        ev(6, "forfeit", side="black", reason="switch_off", status="dismissed", ref=4),
    ]
    assert not derive_game(dismissed).decided
    confirmed = [
        *pending,
        ev(6, "forfeit", side="black", reason="switch_off", status="confirmed", ref=4),
    ]
    out = derive_game(confirmed)
    assert (out.winner, out.result, out.reason, out.source) == (
        "red",
        "1-0",
        "switch_off",
        "forfeit",
    )


def test_the_earliest_offence_decides_between_a_forfeit_and_a_flag() -> None:
    events = [
        ev(4, "forfeit", side="black", reason="switch_off", status="pending"),
        ev(8, "flag", side="red"),
        ev(9, "forfeit", side="black", reason="switch_off", status="confirmed", ref=4),
    ]
    assert derive_game(events).winner == "red"


def test_fouls_counted_by_their_latest_ruling() -> None:
    events = [
        ev(2, "foul", side="red", reason="pause", status="pending", count=0),
        ev(3, "foul", side="red", reason="pause", status="confirmed", count=1, ref=2),
        ev(5, "foul", side="black", reason="pause", status="pending", count=0),
        ev(7, "foul", side="red", reason="press_no_move", status="confirmed", count=2),
    ]
    out = derive_game(events)
    assert out.fouls == {
        "red": {"pending": 0, "confirmed": 2, "dismissed": 0},
        "black": {"pending": 1, "confirmed": 0, "dismissed": 0},
    }
    game = {"red": "王天一", "black": "郑惟桐"}
    other = {"red": "郑惟桐", "black": "许银川"}
    total = tournament_fouls([(game, out), (other, out)])
    assert total["郑惟桐"] == {"pending": 1, "confirmed": 2, "dismissed": 0}
    assert total["王天一"]["confirmed"] == 2 and total["许银川"]["pending"] == 1


def test_points() -> None:
    s = Scoring(2, 1, 0)
    assert points("1-0", s) == (2, 0) and points("0-1", s) == (0, 2)
    assert points("1/2-1/2", s) == (1, 1) and points(None, s) == (None, None)
    assert points("0-0", s) == (0, 0)  # a double forfeit: both lose


def test_a_dismissed_result_decides_nothing_and_a_dismissed_flag_result_takes_the_flag() -> None:
    flag = ev(5, "flag", side="red")
    proposed = ev(6, "result", winner="black", reason="flag", status="pending")
    dismissed = ev(7, "result", winner="black", reason="flag", status="dismissed", ref=6)
    pending = derive_game([flag, proposed])
    assert (pending.winner, pending.status, pending.proposed) == (None, "pending", "0-1")
    assert derive_game([flag, proposed, dismissed]).status == "undecided"
    confirmed = ev(7, "result", winner="black", reason="flag", status="confirmed", ref=6)
    assert derive_game([flag, proposed, confirmed]).result == "0-1"
    entered = ev(8, "result", winner="red", reason="resigned")
    assert derive_game([flag, proposed, dismissed, entered]).winner == "red"


def test_a_double_forfeit_is_0_0_once_both_forfeits_are_confirmed() -> None:
    late = [
        ev(3, "forfeit", side="red", reason="late", status="pending"),
        ev(4, "forfeit", side="black", reason="late", status="pending"),
        ev(5, "result", winner=None, reason="double_forfeit", status="pending"),
    ]
    out = derive_game(late)
    assert (out.result, out.status, out.proposed) == (None, "pending", "0-0")
    ruled = [
        *late,
        ev(6, "forfeit", side="red", reason="late", status="confirmed", ref=3),
        ev(7, "forfeit", side="black", reason="late", status="confirmed", ref=4),
        ev(8, "result", winner=None, reason="double_forfeit", status="confirmed", ref=5),
    ]
    out = derive_game(ruled)
    assert (out.winner, out.result, out.outcome, out.forfeit) == (
        None,
        "0-0",
        "double_forfeit",
        True,
    )
