"""The tournament's own facts survive a players file's import and the export after it: the
number of rounds (142 and XXR), the point system (162, in the form the engines read), the
event's name, the arbiters, the type, the time control and the round dates as written; a file
declaring another point system than the regulation's is refused at its 162 line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from support.station import ARBITER, ARBITER_PASSWORD, station_config

from clock_service.trf import engines
from clock_service.trf.document import Trf
from venue_station.domain.station import Station

KEPT = [
    "092 Individual: Swiss-System (象棋)",
    "112 孙副裁判, 周副裁判",
    "122 90' + 30\"",
    "132" + " " * 87 + "26/12/05  26/12/05  26/12/06  26/12/06",
]
HEAD = ["012 四轮快棋赛", "042 2026/12/05", "052 2026/12/06", "102 钱总裁判", *KEPT]
SCORING = "162  W 2.0    D 1.0    L 0.0    A 0.0    P 2.0    X 1.0"
PLAYERS = [
    f"001 {i:>4} m    {'棋手' + str(i):<33} {2300 - i:>4} CHN {'':>11} {'':<10}  0.0"
    for i in range(1, 8)
]


def players_file(*, scoring: str = SCORING) -> bytes:
    lines = [*HEAD, "142 4", "XXR 4", scoring, *PLAYERS]
    return "".join(x + "\r\n" for x in lines).encode()


async def test_a_players_file_survives_the_round_trip(
    tmp_path: Path, db_url: str, start_station: Any
) -> None:
    config = station_config(tmp_path, database_url=db_url, regulation="wulong-2015")
    station: Station = await start_station(config, connect=False)
    assert station.regulation.tournament.rounds != 4  # the file's 4, not the regulation's
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        chief = {"X-CSRF-Token": r.json()["csrf"]}
        three = players_file(scoring="162  W 3.0    D 1.0")
        refused = await client.post("/api/trf?send=0", content=three, headers=chief)
        assert refused.status_code == 400 and refused.json()["line"] == len(HEAD) + 3
        assert "not the regulation's 2/1/0" in refused.json()["error"]
        r = await client.post("/api/trf?send=0", content=players_file(), headers=chief)
        assert r.status_code == 200, r.text
        text = (await client.get("/api/export/tournament.trf")).text

    back, sent = Trf.parse(text), Trf.parse(players_file())
    lines = text.split("\r\n")
    assert "142 4" in lines and "XXR 4" in lines and back.total_rounds == 4
    for code in "WDLAPX":
        assert back.scoring[code] == sent.scoring[code], code
    for line in [*HEAD]:
        assert line in lines, line
    assert engines.refusals(text) == []  # and in the form every engine reads
