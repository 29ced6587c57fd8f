"""A 9-round Swiss driven by a pairing engine from the station's HTTP API (issue 26).

Round 7 is run and approved from the ``/pairing`` page in chromium (the proposed boards read
off the page equal the proposal), every other round through the HTTP API.

The station is configured with ``[pairing] engine = "bbpPairings"`` and a path to a tiny
executable wrapping the stand-in engine (``tests/support/trf_engine.py``, invoked like
bbpPairings: ``--dutch input.trf -p output.txt``), which refuses any file bbpPairings or JaVaFo
would refuse. Each round the chief asks for a proposal, reviews it, approves it; the boards
play it (wins, draws, a flag, forfeits, a double forfeit); the export after the round must be
read by every engine (``clock_service.trf.engines``) and agree with the standings. Byes and
absences are given as a chief gives them, through ``POST /api/tournament/bye`` before the round
is paired: a half-point bye, a full-point bye, a zero-point bye (a known absence); and a player
is withdrawn (``POST /api/tournament/withdraw``) after round 5: the engine pairs them no more and
the export has them absent (``Z``) in every round left. 21 players: a pairing-allocated bye in
every round where an odd number is present."""

from __future__ import annotations

import contextlib
import json
import random
import sys
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from support.postgres import database_url, throwaway_database
from support.station import station_config
from support.trf_boards import Boards

from clock_service.trf import engines
from clock_service.trf.document import Trf
from venue_station.auth import hash_password
from venue_station.domain.station import Station
from venue_station.web.web_server import StationWithWeb

CHIEF, CHIEF_PASSWORD = "chief9", "总裁判-engine-9"
ENGINE = Path(__file__).resolve().parents[1] / "support" / "trf_engine.py"
PLAYERS = 21
# round -> start rank -> a bye asked for before the round is paired
REQUESTS = {2: {5: "H"}, 3: {6: "F"}, 4: {7: "Z"}}
KIND = {"H": "half", "F": "full", "Z": "zero"}
WITHDRAWN, WITHDRAWN_AFTER = 21, 5
PAGE_ROUND = 7  # paired from the /pairing page in chromium, the withdrawn player left out
# round -> board -> outcome: each kind of result at least once, whatever the dice say
FIXED = {1: {1: "forfeit"}, 2: {2: "double_forfeit"}, 3: {1: "flag"}, 6: {3: "double_forfeit"}}


def players_file() -> str:
    lines = ["012 引擎编排公开赛", "042 2026/12/05", "102 钱裁判", "142 9", "XXR 9"]
    lines.append("162  W 2.0    D 1.0")
    for i in range(1, PLAYERS + 1):
        name = "陈" + "一二三四五六七八九十"[i % 10] + "甲乙丙丁戊己庚辛壬癸"[i // 10]
        lines.append(f"001 {i:>4} m    {name:<33} {2500 - 10 * i:>4} CHN {'':>11} {'':<10}  0.0")
    return "".join(x + "\r\n" for x in lines)


def wrapper(tmp_path: Path) -> Path:
    script = tmp_path / "bbpPairings"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ENGINE}" "$@"\n')
    script.chmod(0o755)
    return script


@pytest_asyncio.fixture(
    loop_scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def station(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Station]:
    # On the session's event loop, where the browser lives (tests/support/web.py).
    account = [{"username": CHIEF, "password_hash": hash_password(CHIEF_PASSWORD), "role": "chief"}]
    async with contextlib.AsyncExitStack() as stack:
        if request.param == "sqlite":
            db_url = f"sqlite:///{tmp_path / 'station.db'}"
        else:
            name = await stack.enter_async_context(throwaway_database("qz_test"))
            db_url = database_url(name, scheme="postgresql+asyncpg")
        config = station_config(
            tmp_path,
            database_url=db_url,
            regulation="wulong-2015",
            account=account,
            pairing={"engine": "bbpPairings", "path": str(wrapper(tmp_path)), "timeout_s": 60},
        )
        started = StationWithWeb(config, connect=False)
        await started.start()
        try:
            yield started
        finally:
            await started.stop()


async def propose_from_the_page(page: Any, url: str, round_no: int) -> list[list[str]]:
    """The chief runs the engine from /pairing and reads the proposed boards off the page."""
    await page.goto(f"{url}/pairing")
    login = json.dumps({"username": CHIEF, "password": CHIEF_PASSWORD})
    status = await page.evaluate(
        """async (body) => (await fetch('/api/auth/login', {method: 'POST', body,
             headers: {'Content-Type': 'application/json'}})).status""",
        login,
    )
    assert status == 200
    await page.goto(f"{url}/pairing")
    await page.wait_for_function(
        "document.getElementById('engine-name').textContent === 'bbpPairings'"
    )
    await page.click("#propose")
    await page.wait_for_selector("#proposal:not([hidden])")
    title = await page.text_content("#proposal-title")
    assert title == f"第{round_no}轮编排建议（bbpPairings），请核对"
    rows: list[list[str]] = await page.eval_on_selector_all(
        "#proposal-boards tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    return rows


async def approve_from_the_page(page: Any, round_no: int, games: int, byes: int) -> None:
    await page.uncheck("#approve-send")
    await page.click("#approve")
    await page.wait_for_function(
        "document.getElementById('engine-status').textContent.includes('已导入')"
    )
    status = await page.text_content("#engine-status")
    assert status == f"已导入第{round_no}轮：{games} 局，轮空/缺席 {byes}"
    assert await page.is_hidden("#proposal")


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="session")
async def test_nine_rounds_paired_by_the_engine(page: Any, station: Station) -> None:
    rng = random.Random(26)
    boards = Boards(station)
    async with httpx.AsyncClient(base_url=station.http_url, timeout=120) as client:
        r = await client.post(
            "/api/auth/login", json={"username": CHIEF, "password": CHIEF_PASSWORD}
        )
        chief = {"X-CSRF-Token": r.json()["csrf"]}
        r = await client.post("/api/trf?send=0", content=players_file().encode(), headers=chief)
        assert r.status_code == 200, r.text
        key_of = {
            e["start_rank"]: e["player"]
            for e in (await client.get("/api/trf/entrants")).json()["entrants"]
        }
        rank_of = {v: k for k, v in key_of.items()}
        state = (await client.get("/api/pairing/proposal")).json()
        assert state == {"engine": "bbpPairings", "proposal": None}

        for round_no in range(1, 10):
            asked = dict(REQUESTS.get(round_no, {}))
            for who, code in asked.items():
                body = {"round": round_no, "player": key_of[who], "kind": KIND[code]}
                r = await client.post("/api/tournament/bye", json=body, headers=chief)
                assert r.status_code == 200, r.text
                assert r.json()["kind"] == KIND[code]
            if round_no == WITHDRAWN_AFTER + 1:
                body = {"player": key_of[WITHDRAWN]}
                r = await client.post("/api/tournament/withdraw", json=body, headers=chief)
                assert r.status_code == 200, r.text
                assert r.json()["withdrawn"] is True
                entrants = (await client.get("/api/trf/entrants")).json()["entrants"]
                assert [e["start_rank"] for e in entrants if e["withdrawn"]] == [WITHDRAWN]
            if round_no > WITHDRAWN_AFTER:
                asked[WITHDRAWN] = "Z"
            if round_no == PAGE_ROUND:
                rows = await propose_from_the_page(page, station.http_url, round_no)
                proposal = (await client.get("/api/pairing/proposal")).json()["proposal"]
                assert [[row[1], row[3]] for row in rows] == [
                    [f"{b['white']} {b['red_player']}",
                     f"{b['black']} {b['black_player']}" if b["black"] else "轮空"]
                    for b in proposal["boards"]
                ]  # fmt: skip
            else:
                r = await client.post("/api/pairing/propose", headers=chief)
                assert r.status_code == 200, r.text
                proposal = r.json()
            assert proposal["round"] == round_no and proposal["engine"] == "bbpPairings"
            assert (await client.get("/api/pairing/proposal")).json()["proposal"] == proposal
            pairs = [(b["white"], b["black"]) for b in proposal["boards"]]
            seated = [x for pair in pairs for x in pair if x]
            assert len(seated) == len(set(seated)) == PLAYERS - len(asked)
            assert not set(seated) & set(asked), "a player with a bye or absent was paired"
            for b in proposal["boards"]:
                assert b["red_player"] == key_of[b["white"]]
            games = [(w, b) for w, b in pairs if b]
            assert len(games) == (PLAYERS - len(asked)) // 2

            if round_no == PAGE_ROUND:
                await approve_from_the_page(page, round_no, len(games), len(pairs) - len(games))
            else:
                r = await client.post("/api/pairing/approve?send=0", headers=chief)
                assert r.status_code == 200, r.text
                assert r.json()["games"] == len(games)
            assert (await client.get("/api/pairing/proposal")).json()["proposal"] is None
            stored = (await client.get("/api/games", params={"round": round_no})).json()
            stored = stored["games"] if isinstance(stored, dict) else stored
            assert {g["board"]: (g["red"], g["black"]) for g in stored} == {
                str(n): (key_of[w], key_of[b]) for n, (w, b) in enumerate(games, 1)
            }
            for n in range(1, len(games) + 1):
                kind = FIXED.get(round_no, {}).get(n)
                game = f"r{round_no}-b{n}"
                if kind:
                    boards.decide(str(n), game, kind)
                else:
                    boards.play(str(n), game, rng)
            await boards.flush()

            text = (await client.get(f"/api/export/tournament.trf?round={round_no}")).text
            assert engines.refusals(text, pairing=round_no < 9) == [], text
            trf = Trf.parse(text)
            trf.check()
            assert trf.rounds_played == round_no
            standings = (await client.get("/api/standings", params={"round": round_no})).json()
            for row in standings["standings"]:
                p = trf.player(rank_of[row["player"]])
                assert trf.computed_points(p, upto=round_no) == Decimal(row["points"]), row
            for who, kind in asked.items():
                assert trf.player(who).rounds[round_no - 1].code == kind
            gone = [key_of[WITHDRAWN]] if round_no > WITHDRAWN_AFTER else []
            assert standings["withdrawn"] == gone

        codes = {c.code for p in trf.players for c in p.rounds}
        assert {"1", "0", "=", "+", "-", "U", "H", "F", "Z"} <= codes, codes
        withdrawn = trf.player(WITHDRAWN).rounds[WITHDRAWN_AFTER:]
        assert [c.code for c in withdrawn] == ["Z"] * (9 - WITHDRAWN_AFTER)
        final = (await client.get("/api/standings")).json()["standings"]
        assert {rank_of[r["player"]]: Decimal(r["points"]) for r in final} == {
            p.start_rank: p.points for p in trf.players
        }
        refused = await client.post("/api/pairing/propose", headers=chief)
        assert refused.status_code == 409 and "all 9 rounds" in refused.text
