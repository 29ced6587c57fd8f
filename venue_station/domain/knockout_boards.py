"""A Swiss round imported while the knockout is played (Meishan: 其余棋手继续完成剩余轮次的比赛)
keeps off the knockout's boards.

A pairing program numbers a round's boards from 1, and the knockout's games sit on the top
boards (where they are recorded, 录谱). An outsider chief confirmed the semi-finals on boards 1
and 2 and imported round 8's pairs list: its first two games took those boards over without a
word, and 全场开钟 started them. Now a round after the knockout's start whose boards meet a
board the knockout holds (a game confirmed there, no result yet) is placed, in its own order,
on the boards the knockout leaves free (1–6 → 3–8 beside semi-finals on 1 and 2), and the
answer says which boards moved. Rounds up to the knockout's start are never moved.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from venue_station.errors import ImportRefused

if TYPE_CHECKING:
    from venue_station.domain.station import Station

__all__ = ["place_beside_knockout", "placed"]


def placed(round_no: int, rows: list[dict[str, Any]], held: Mapping[str, str]) -> dict[str, str]:
    """Move ``rows`` (one round's, changed in place) off the ``held`` boards; old -> new."""
    if not any(str(r["board"]) in held for r in rows):
        return {}
    if not all(str(r["board"]).isdigit() for r in rows):
        busy = sorted(b for b in held if any(str(r["board"]) == b for r in rows))
        raise ImportRefused(
            "board_held",
            f"round {round_no} uses board(s) {', '.join(busy)} the knockout plays on",
            round=round_no, boards=busy, games=[held[b] for b in busy],
        )  # fmt: skip
    free = (str(n) for n in itertools.count(1) if str(n) not in held)
    moved: dict[str, str] = {}
    for row, board in zip(sorted(rows, key=lambda r: int(r["board"])), free, strict=False):
        if row["board"] != board:
            moved[str(row["board"])] = board
            row["board"] = board
    return moved


async def place_beside_knockout(
    station: Station, by_round: Mapping[int, list[dict[str, Any]]]
) -> dict[int, dict[str, str]]:
    """Each round after the knockout's start placed off its boards; round -> old -> new."""
    if station.regulation.knockout is None:
        return {}  # (Wulong: no knockout record to read at each import)
    after, held = await station.knockout.boards_in_play()
    if after is None or not held:
        return {}
    out: dict[int, dict[str, str]] = {}
    for round_no, rows in by_round.items():
        if round_no > after:
            moved = placed(round_no, rows, held)
            if moved:
                out[round_no] = moved
    return out
