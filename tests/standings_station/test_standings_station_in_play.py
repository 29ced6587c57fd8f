"""The station's latest standings (the page's API and the CSV) while a round is being played.

累进分 is "每一轮积分之和" (Meishan 补充 一（四）), the sum of the player's score after each round;
a round whose game has no result yet is not played yet, so it adds nothing. Meishan deducts 1
累进分 per confirmed foul ("记犯规1次，并扣累进分1分").

    round 1: 甲 (red) mates 乙, 甲 one confirmed foul;  丁 (black) wins against 丙
    round 2: 丁-甲 draw;  乙 (red) wins against 丙
    round 3: 甲-丙 still being played;  丁 (black) wins against 乙

    running totals  r1  r2  r3          累进分
        甲           2   3   -           2 + 3 - 1 = 4
        丁           2   3   5           2 + 3 + 5 = 10
        乙           0   2   2           0 + 2 + 2 = 4
        丙           0   0   -           0
"""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
from support.station import Feeder

from venue_station.domain.station import Station

PLAYERS = "name,tags\n甲,\n乙,\n丙,\n丁,\n"
ROUND_1 = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n"
ROUND_2 = "round,board,red,black\n2,1,丁,甲\n2,2,乙,丙\n"
ROUND_3 = "round,board,red,black\n3,1,甲,丙\n3,2,乙,丁\n"


async def latest(client: httpx.AsyncClient, **params: Any) -> dict[str, tuple[int, int]]:
    r = await client.get("/api/standings", params=params)
    assert r.status_code == 200, r.text
    return {s["player"]: (s["points"], s["progressive"]) for s in r.json()["standings"]}


async def latest_csv(client: httpx.AsyncClient) -> dict[str, tuple[int, int]]:
    r = await client.get("/api/export/standings.csv")
    assert r.status_code == 200, r.text
    rows = csv.DictReader(io.StringIO(r.content.decode("utf-8-sig")))
    return {x["player"]: (int(x["points"]), int(x["progressive"])) for x in rows}


async def test_latest_standings_count_only_the_rounds_played(offline: Station) -> None:
    await offline.import_players(PLAYERS)
    await offline.import_pairings(ROUND_1, send=False)
    feed = Feeder(offline)
    foul = feed(
        "1", "r1-b1", "foul", {"side": "red", "reason": "长将", "status": "pending", "count": 1}
    )
    feed(
        "1",
        "r1-b1",
        "foul",
        {"side": "red", "reason": "长将", "status": "confirmed", "count": 1, "ref": foul},
    )
    feed.result("1", "r1-b1", "red")
    feed.result("2", "r1-b2", "black")
    await feed.flush()
    after1 = {"甲": (2, 1), "丁": (2, 2), "乙": (0, 0), "丙": (0, 0)}  # 甲: 2 - 1 foul

    async with httpx.AsyncClient(base_url=offline.http_url) as client:
        assert await latest(client) == after1
        # Round 2 paired, not a result yet: nobody has a score after round 2.
        await offline.import_pairings(ROUND_2, send=False)
        assert await latest(client) == after1  # not 甲 2/3, 丁 2/4
        assert await latest_csv(client) == after1
        assert await latest(client, round=1) == after1

        feed.result("1", "r2-b1", None)
        feed.result("2", "r2-b2", "red")
        await feed.flush()
        after2 = {"甲": (3, 4), "丁": (3, 5), "乙": (2, 2), "丙": (0, 0)}  # 2+3-1, 2+3, 0+2
        assert await latest(client) == after2

        # Round 3: 乙-丁 decided, 甲-丙 still being played.
        await offline.import_pairings(ROUND_3, send=False)
        feed.result("2", "r3-b2", "black")
        await feed.flush()
        now = {"丁": (5, 10), "甲": (3, 4), "乙": (2, 4), "丙": (0, 0)}  # 甲 not 2+3+3-1 = 7
        assert await latest(client) == now
        assert await latest_csv(client) == now
        assert await latest(client, round=2) == after2
        order = (await client.get("/api/standings")).json()["standings"]
    # 积分 5, 3, 2, 0: the order is the points' (甲 3 ahead of 乙 2, both 累进分 4).
    assert [r["player"] for r in order] == ["丁", "甲", "乙", "丙"]
