"""The TRF over HTTP: who may import, what a bad file answers (line, columns, reason; counted),
the export's headers and its round/absent parameters, and the pairing page in both languages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, station_config

from clock_service.trf.document import Trf
from venue_station.auth import hash_password
from venue_station.domain.station import Station

GOLDEN = Path(__file__).parent / "golden"
BAD_RATING = (GOLDEN / "xiangqi-r3.trf").read_bytes().decode().replace(" 2480 CHN", " 24a0 CHN")


@pytest.fixture
async def station(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    accounts = [
        {"username": ARBITER, "password_hash": hash_password(ARBITER_PASSWORD), "role": "arbiter"},
        {"username": "boss", "password_hash": hash_password("pw-boss"), "role": "admin"},
    ]
    started: Station = await start_station(
        station_config(tmp_path, database_url=db_url, account=accounts), connect=False
    )
    return started


async def login(client: httpx.AsyncClient, user: str, password: str) -> dict[str, str]:
    r = await client.post("/api/auth/login", json={"username": user, "password": password})
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


async def test_import_needs_the_chief_or_admin(station: Station) -> None:
    body = (GOLDEN / "xiangqi-r3.trf").read_bytes()
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        assert (await client.post("/api/trf", content=body)).status_code == 401
        arbiter = await login(client, ARBITER, ARBITER_PASSWORD)
        r = await client.post("/api/trf?send=0", content=body, headers=arbiter)
        assert r.status_code == 403 and "chief" in r.json()["error"]
        r = await client.post("/api/pairs?send=0", content=b"1\n1 2\n", headers=arbiter)
        assert r.status_code == 403
        admin = await login(client, "boss", "pw-boss")
        r = await client.post("/api/trf?send=0", content=body, headers=admin)
        assert r.status_code == 200, r.text
        # the file's round 4 is not paired yet, but its absence (240 Z) is kept for it
        body = r.json()
        assert body.pop("audit") >= 1  # the import is in the audit (issue 25)
        assert body == {"players": 7, "round": 4, "games": 0, "byes": 1}


@pytest.mark.parametrize(
    ("path", "content", "where", "text"),
    [
        ("/api/trf", BAD_RATING, "line 21, columns 49-52", "rating"),
        ("/api/trf", "", "line 1", "empty file"),
        ("/api/pairs", "2\n1 2\n", "line 1", "2 pairs announced, 1 given"),
        ("/api/pairs", "1\n1 99\n", None, "no player with start rank 99"),
        ("/api/pairs?round=10", "1\n1 2\n", None, "round 10 is not 1..9"),
    ],
)
async def test_a_bad_file_names_line_and_columns(
    station: Station, path: str, content: str, where: str | None, text: str
) -> None:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        admin = await login(client, "boss", "pw-boss")
        ok = await client.post(
            "/api/trf?send=0", content=(GOLDEN / "xiangqi-r3.trf").read_bytes(), headers=admin
        )
        assert ok.status_code == 200
        query = "&send=0" if "?" in path else "?send=0&round=1"
        r = await client.post(path + query, content=content.encode(), headers=admin)
        assert r.status_code == 400, r.text
        body = r.json()
        assert text in body["error"]
        assert body.get("where") == where
        metrics = (await client.get("/metrics")).text
        assert 'kind="bad_trf"' in metrics


async def test_too_large(station: Station) -> None:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        admin = await login(client, "boss", "pw-boss")
        r = await client.post("/api/trf", content=b"0" * (2 * 1024 * 1024 + 1), headers=admin)
        assert r.status_code == 413


async def test_export_parameters(station: Station) -> None:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        admin = await login(client, "boss", "pw-boss")
        paired = (GOLDEN / "xiangqi-r4-paired.trf").read_bytes()
        assert (
            await client.post("/api/trf?send=0", content=paired, headers=admin)
        ).status_code == 200
        r = await client.get("/api/export/tournament.trf", params={"round": 0, "absent": "2,5"})
        assert r.status_code == 200
        assert 'filename="' in r.headers["content-disposition"]
        trf = Trf.parse(r.content)
        assert trf.rounds_played == 0 and trf.absent(1) == {2: "Z", 5: "Z"}
        assert [p.start_rank for p in trf.players] == [1, 2, 3, 4, 5, 6, 7]
        for bad in ({"absent": "x"}, {"absent": "99"}, {"round": "100"}):
            r = await client.get("/api/export/tournament.trf", params=bad)
            assert r.status_code == 400, (bad, r.text)


async def test_the_pairing_page(station: Station) -> None:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        page = await client.get("/pairing")
        assert page.status_code == 200 and '<html lang="zh-CN">' in page.text
        assert "导入 TRF、配对表或棋手名单" in page.text
        assert '<script src="/static/pairing_words.js"' in page.text  # the page's two languages
        js = (await client.get("/static/pairing_words.js")).text
        assert "Import a TRF, a pairs list or a players list" in js and "导入失败" in js
        spec = (await client.get("/api/openapi.json")).json()
        assert {"/api/trf", "/api/pairs", "/api/export/tournament.trf"} <= set(spec["paths"])


async def test_a_woman_of_the_players_csv_is_w_in_the_trf(station: Station) -> None:
    """A players CSV has no sex column: its women's group says it (column 10 was blank for
    them, an outsider organiser); a sex a TRF gave is kept as it was."""
    await station.import_players("name,club,rating,tags\n甲,,,women\n乙,,,local\n丙,,,\n丁,,,\n")
    await station.import_pairings("round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n", send=False)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.get("/api/export/tournament.trf", params={"round": 0})
    assert r.status_code == 200, r.text
    sexes = {p.name: p.sex for p in Trf.parse(r.content).players}
    assert sexes == {"甲": "w", "乙": "", "丙": "", "丁": ""}, sexes
