"""Players paired again are named by an import (venue_station/domain/rematches.py): the games
stored, and the earlier rounds of the same file; the answer of a CSV pairs import says it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.web import station_without_broker

from venue_station.domain.rematches import rematches

pytestmark = [pytest.mark.asyncio(loop_scope="session")]


def test_rematches_by_stored_games_and_earlier_rounds_of_the_file() -> None:
    played = [{"round": 1, "red": "甲", "black": "乙"}, {"round": 1, "red": "丙", "black": "丁"}]
    new = {
        3: [{"board": "1", "red": "丁", "black": "丙"}, {"board": "2", "red": "甲", "black": "乙"}],
        2: [{"board": "1", "red": "乙", "black": "甲"}, {"board": "2", "red": "丙", "black": "戊"}],
    }
    assert rematches(played, new) == [
        {"round": 2, "board": "1", "red": "乙", "black": "甲", "met": [1]},
        {"round": 3, "board": "1", "red": "丁", "black": "丙", "met": [1]},
        {"round": 3, "board": "2", "red": "甲", "black": "乙", "met": [1, 2]},
    ]
    # the round replaced itself is no rematch; nobody met: nothing said
    assert rematches(played, {1: [{"board": "1", "red": "甲", "black": "乙"}]}) == []
    assert rematches([], {1: [{"board": "1", "red": "甲", "black": "乙"}]}) == []


async def test_a_csv_pairs_import_names_its_rematches(tmp_path: Path) -> None:
    async with station_without_broker(tmp_path) as station:
        await station.import_players("name\n甲\n乙\n丙\n丁\n")
        await station.import_pairings("round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n", send=False)
        again = "round,board,red,black\n2,1,乙,甲\n2,2,丁,丙\n"
        preview = await station.import_pairings(again, send=False, dry_run=True)
        assert [(r["board"], r["met"]) for r in preview["rematches"]] == [("1", [1]), ("2", [1])]
        done = await station.import_pairings(again, send=False)
        assert len(done["rematches"]) == 2
        fresh = await station.import_pairings(
            "round,board,red,black\n3,1,甲,丙\n3,2,乙,丁\n", send=False
        )
        assert "rematches" not in fresh


async def test_a_round_imported_again_without_a_board_leaves_no_ghost_game(
    tmp_path: Path,
) -> None:
    """Round 1 imported again with 丙–丁 moved from board 2 to board 3: game r1-b2 stayed in
    the games table (丙 and 丁 had two games of round 1, one never decided)."""
    async with station_without_broker(tmp_path) as station:
        await station.import_players("name\n甲\n乙\n丙\n丁\n")
        await station.import_pairings("round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n", send=False)
        again = "round,board,red,black\n1,1,甲,乙\n1,3,丙,丁\n"
        await station.import_pairings(again, send=False, replace=1)
        games = await station.require_store().games(1)
        assert [(g["game"], g["red"]) for g in games] == [("r1-b1", "甲"), ("r1-b3", "丙")]
        assert len(await station.outcomes(1)) == 2
