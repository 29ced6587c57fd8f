"""Issue 25's acceptance: a whole Wulong 2015 event run by the arbiter through the pages.

As test_meishan_event.py, by the Wulong seed: 35′+5″ (the profile's), nine Swiss rounds and no
knockout, a foul costs no 累进分, and 一盘棋单方犯规达到3次的 立即判负: on board 1 of round 2 red
pauses the clock three times, each foul confirmed: the third loses the game.
"""

from __future__ import annotations

import pytest
from tournament.checks import expected_outcome, games_shown, page_row, station_outcome, table
from tournament.event import EventRecord
from tournament.seed_rules import rank

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


STORIES = [
    pytest.param("flag_confirmed"),
    "flag_dismissed",
    "draw",
    "three_fouls",
    "pause_dismissed",
    "switched_off",
    "late",
    "no_show",
]


async def test_players_and_every_pairs_list_are_imported(wulong: EventRecord) -> None:
    n = len(wulong.players)
    assert wulong.imports[0].startswith(f"已导入：{n} 名棋手"), wulong.imports[0]
    for round_no, answer in enumerate(wulong.imports[1:], 1):
        assert f"第{round_no}轮 {n // 2} 局" in answer, answer
    assert len(wulong.imports) == 1 + 9


@pytest.mark.parametrize("kind", STORIES)
async def test_each_ruling_decides_its_game(wulong: EventRecord, kind: str) -> None:
    plan = wulong.plan(kind)
    station = station_outcome(wulong.station_game(plan.round, plan.board))
    assert station == expected_outcome(plan.expected()), (kind, plan)


async def test_the_third_foul_is_a_loss(wulong: EventRecord) -> None:
    ruled = [(kind, action) for r, b, kind, action in wulong.ruled if (r, b) == (2, "1")]
    # 立即判负 at the third: the third confirmation decides, or a proposed loss is confirmed
    assert ruled[:3] == [("foul_pending", "confirm")] * 3
    assert ruled[3:] in ([], [("forfeit_pending", "confirm")])
    game = wulong.station_game(2, "1")
    assert (game["result"], game["fouls"]["red"]["confirmed"]) == ("0-1", 3)


async def test_no_knockout(wulong: EventRecord) -> None:
    assert wulong.ko_view == {} and "7" not in wulong.standings


async def test_every_round_was_decided_on_the_boards(wulong: EventRecord) -> None:
    assert wulong.problems == []


async def test_final_standings_follow_the_seed(wulong: EventRecord) -> None:
    mine = rank(wulong.seed, wulong.games, wulong.players, last=9)
    page = wulong.standings["final"]
    assert [page_row(r) for r in page] == table(mine)
    assert [int(r["rank"]) for r in page] == [r.rank for r in mine]


async def test_final_standings_follow_the_seed_over_the_games_shown(wulong: EventRecord) -> None:
    """The page ranks the games the station decided by the seed's order (whatever it missed)."""
    mine = rank(wulong.seed, games_shown(wulong.station_games, 9), wulong.players, last=9)
    assert [page_row(r) for r in wulong.standings["final"]] == table(mine)
