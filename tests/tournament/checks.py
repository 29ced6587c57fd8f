"""Reading what the station shows the way the seed's results are written."""

from __future__ import annotations

from typing import Any

from tournament.seed_rules import Game, Row

__all__ = ["page_row", "station_outcome", "table"]

_RESULTS = {"1-0": "red", "0-1": "black", "1/2-1/2": "draw", "0-0": "double"}


def station_outcome(game: dict[str, Any]) -> tuple[str | None, int, int]:
    """(red | black | draw | double | None when not decided, red's and black's confirmed fouls)."""
    decided = game["status"] == "confirmed" and game["result"] is not None
    fouls = game["fouls"]
    return (
        _RESULTS.get(game["result"]) if decided else None,
        fouls["red"]["confirmed"],
        fouls["black"]["confirmed"],
    )


def expected_outcome(game: Game) -> tuple[str | None, int, int]:
    return (game.result, game.red_fouls, game.black_fouls)


def page_row(row: dict[str, str]) -> tuple[str, int, int, int, int, int]:
    """A standings page row as (player, 积分, 累进分, 胜局, 犯规, 后走局数)."""
    return (
        row["player"],
        int(row["points"]),
        int(row["progressive"]),
        int(row["wins"]),
        int(row["fouls"]),
        int(row["black_games"]),
    )


def table(rows: list[Row]) -> list[tuple[str, int, int, int, int, int]]:
    return [(r.player, r.points, r.progressive, r.wins, r.fouls, r.black_games) for r in rows]


def games_shown(station_games: dict[int, list[dict[str, Any]]], last: int) -> list[Game]:
    """The Swiss games as the station decided them (undecided ones left out), rounds 1..last."""
    games = []
    for round_no, rows in station_games.items():
        for g in rows:
            result, red_fouls, black_fouls = station_outcome(g)
            if round_no <= last and result is not None:
                games.append(
                    Game(
                        round=round_no,
                        red=g["red"],
                        black=g["black"],
                        result=result,
                        red_fouls=red_fouls,
                        black_fouls=black_fouls,
                    )
                )
    return games
