"""Issue 25's acceptance: a whole Meishan 2016 event run by the arbiter through the pages.

16 players (24 with ``--tournament-long``): players in by the pairing page (a TRF), each
round's pairs list in (paired by the test from its own results), sent to the clocks, started
from the arbiter page, every alert ruled by its own button (a flag confirmed, one dismissed, a
late forfeit, a pause foul confirmed and one dismissed, a clock switched off, a double
no-show, a draw entered), seven rounds, the knockout of the top four (a drawn semi-final and
its 10′+3″ armageddon, 和棋黑胜), rounds 8–9 for the rest. The standings pages are then read
as a person reads them and compared with the seed's rules as tests/tournament/seed_rules.py
writes them. The event runs once (the ``meishan`` fixture); each test checks one thing.
"""

from __future__ import annotations

import pytest
from tournament.checks import expected_outcome, games_shown, page_row, station_outcome, table
from tournament.event import EventRecord
from tournament.prize_checks import (
    api_list,
    check_api,
    check_csv,
    check_english,
    check_final,
    check_page_rows,
    check_print,
    check_provisional_before,
    check_totals,
    page_list,
)
from tournament.seed_rules import knockout_places, rank

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

STORIES = [
    pytest.param("flag_confirmed"),
    "flag_dismissed",
    "draw",
    "pause_confirmed",
    "pause_dismissed",
    "switched_off",
    "late",
    "no_show",
    pytest.param("late_alert"),
    pytest.param("switched_off_alert"),
]


async def test_players_and_every_pairs_list_are_imported(meishan: EventRecord) -> None:
    n = len(meishan.players)
    assert meishan.imports[0].startswith(f"已导入：{n} 名棋手"), meishan.imports[0]
    boards = [n // 2] * 7 + [(n - 4) // 2] * 2
    for round_no, (answer, k) in enumerate(zip(meishan.imports[1:], boards, strict=True), 1):
        assert f"第{round_no}轮 {k} 局" in answer, answer


@pytest.mark.parametrize("kind", STORIES)
async def test_each_ruling_decides_its_game(meishan: EventRecord, kind: str) -> None:
    plan = meishan.plan(kind)
    station = station_outcome(meishan.station_game(plan.round, plan.board))
    assert station == expected_outcome(plan.expected()), (kind, plan)


async def test_each_alert_was_ruled_by_its_own_button(meishan: EventRecord) -> None:
    ruled = {(r, b): (kind, action) for r, b, kind, action in meishan.ruled}
    assert ruled[(1, "1")] == ("flag", "confirm")
    assert ruled[(1, "2")] == ("flag", "dismiss")
    assert ruled[(2, "1")] == ("foul_pending", "confirm")
    assert ruled[(2, "2")] == ("foul_pending", "dismiss")
    assert ruled[(2, "3")][1] == ruled[(3, "1")][1] == ruled[(3, "2")][1] == "confirm"
    assert ruled[(3, "3")] == ("late", "confirm")
    assert ruled[(4, "1")] == ("shutdown", "confirm")
    # the double no-show: one confirmation per absent player (or one for both)
    assert len([r for r in meishan.ruled if r[:2] == (3, "2")]) in (1, 2)


async def test_every_round_was_decided_on_the_boards(meishan: EventRecord) -> None:
    assert meishan.problems == []


async def test_standings_after_round_7_follow_the_seed(meishan: EventRecord) -> None:
    mine = rank(meishan.seed, meishan.games, meishan.players, last=7)
    page = meishan.standings["7"]
    assert [page_row(r) for r in page] == table(mine)
    assert [int(r["rank"]) for r in page] == [r.rank for r in mine]


async def test_standings_after_round_7_follow_the_seed_over_the_games_shown(
    meishan: EventRecord,
) -> None:
    """The page ranks the games the station decided by the seed's order (whatever it missed)."""
    mine = rank(meishan.seed, games_shown(meishan.station_games, 7), meishan.players, last=7)
    assert [page_row(r) for r in meishan.standings["7"]] == table(mine)


async def test_the_knockout_takes_the_top_four_after_round_7(meishan: EventRecord) -> None:
    mine = rank(meishan.seed, meishan.games, meishan.players, last=7)
    assert meishan.ko_top == [r.player for r in mine[:4]]


async def test_the_drawn_semi_final_goes_to_a_10_3_armageddon(meishan: EventRecord) -> None:
    tb = meishan.armageddon
    games = {g["id"]: g for g in meishan.ko_view["games"]}
    slow = games["ko-sf1"]
    assert slow["result"] == "draw"
    # 由慢棋执黑者选择先后: the slow game's black chooses; he took black (和棋黑胜)
    assert tb["chooser"] == slow["black"]
    assert (tb["tc"], tb["tiebreak"], tb["board"]) == ("10m+3s", True, slow["board"])
    # the armageddon was drawn on the board: black wins the match
    assert games["ko-sf1-tb"]["result"] == "black"


async def test_the_knockout_places_follow_its_games(meishan: EventRecord) -> None:
    placings = [p["player"] for p in meishan.ko_view["placings"]]
    assert placings == knockout_places(meishan.ko_matches)
    assert meishan.ko_view["finished"] is True


async def test_final_standings_page_opens_with_the_knockout_places(meishan: EventRecord) -> None:
    page = meishan.standings["final"]
    assert [r["player"] for r in page[:4]] == knockout_places(meishan.ko_matches)
    assert [r["rank"] for r in page[:4]] == ["1", "2", "3", "4"]


async def test_final_standings_from_5th_follow_the_seed(meishan: EventRecord) -> None:
    """Places 5.. : the other twelve by their nine rounds, the seed's order."""
    rest = [p for p in meishan.players if p not in meishan.ko_top]
    mine = rank(meishan.seed, meishan.games, rest, last=9)
    page = [r for r in meishan.standings["final"] if r["player"] in rest]
    assert [page_row(r) for r in page] == table(mine)


# -- the prize list (奖励名单, docs/prizes.md), read by the organiser at the end of the event --


async def test_the_standings_page_links_the_prize_list(meishan: EventRecord) -> None:
    assert "奖励名单" in meishan.prizes.get("link", []), meishan.prizes


async def test_prize_list_follows_the_seed(meishan: EventRecord) -> None:
    """录取前30名: with 16 players every one takes a prize, by the final places."""
    check_page_rows(meishan)
    assert len(page_list(meishan, "open")) == len(meishan.players)


async def test_prize_places_1_to_4_follow_the_knockout(meishan: EventRecord) -> None:
    """第七轮比赛结束后，前4名选手参加淘汰赛…争夺4名以后名次: 3000, 1500, 1000, 800 to the
    knockout's final and third-place game, whatever the Swiss order."""
    rows = page_list(meishan, "open")
    ko = knockout_places(meishan.ko_matches)
    assert [(r[0], r[2], r[3]) for r in rows[:4]] == list(
        zip([1, 2, 3, 4], ko, [3000, 1500, 1000, 800], strict=True)
    )
    got = api_list(meishan, "open")["rows"]
    assert [r["knockout_place"] for r in got] == [1, 2, 3, 4] + [None] * (len(got) - 4)


async def test_prize_api_follows_the_seed(meishan: EventRecord) -> None:
    check_api(meishan)
    lst = api_list(meishan, "open")
    assert (lst["places"], lst["paid_places"], lst["shrunk"]) == (30, 30, None)


async def test_prize_totals(meishan: EventRecord) -> None:
    check_totals(meishan)


async def test_prize_csv_agrees_with_the_page(meishan: EventRecord) -> None:
    check_csv(meishan)


async def test_prize_list_is_final_at_the_end(meishan: EventRecord) -> None:
    check_final(meishan)


async def test_prize_list_is_provisional_before(meishan: EventRecord) -> None:
    check_provisional_before(meishan)


async def test_prize_page_in_english(meishan: EventRecord) -> None:
    check_english(meishan)


async def test_prize_page_prints_on_white(meishan: EventRecord) -> None:
    check_print(meishan)
