"""Two arbiters rule the same alert at once — the chief at the laptop confirms a flag while the
deputy on a phone dismisses it (an outsider drove both pages): the flag is ruled once, the one
who came second is told it was ruled already and by whom (it was told "the clock refused"),
and the alert says who ruled it — the arbiter, not "with the board's ruling", which the
board's own ruling event, arriving as the arbiter's was stored, had written over it.

A real station, Mosquitto and a node on a simulated face; the two arbiters as the pages call
the API (cookie and CSRF token), then the chief's page in chromium.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD
from support.web import served_station

from venue_station.auth import hash_password

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]

DEPUTY, DEPUTY_PASSWORD = "deputy", "pw-deputy-2"


async def logged_in(url: str, user: str, password: str) -> httpx.AsyncClient:
    client = httpx.AsyncClient(base_url=url, timeout=10)
    r = await client.post("/api/auth/login", json={"username": user, "password": password})
    assert r.status_code == 200, r.text
    client.headers["X-CSRF-Token"] = r.json()["csrf"]
    return client


async def test_two_arbiters_ruling_one_flag_at_once(
    page: Any, broker_factory: Any, tmp_path: Any
) -> None:
    accounts = [
        {"username": ARBITER, "password_hash": hash_password(ARBITER_PASSWORD), "role": "chief"},
        {"username": DEPUTY, "password_hash": hash_password(DEPUTY_PASSWORD), "role": "arbiter"},
    ]
    async with served_station(broker_factory(), tmp_path, command_timeout_s=2.0,
                              account=accounts) as web:  # fmt: skip
        station = web.station
        await web.node(["1"], mode="idle")
        await station.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=False)
        game = {"game": "r1-b1", "tc": "30m+5s", "red": "甲", "black": "乙", "red_ms": 800,
                "black_ms": 60_000}
        assert (await station.send_command("1", "set_game", game)).ok
        assert (await station.send_command("1", "start")).ok
        flag: dict[str, Any] = {}
        async with asyncio.timeout(15):
            while not flag:
                await asyncio.sleep(0.1)
                found = [a for a in await station.store.alerts() if a["kind"] == "flag"]
                flag = found[0] if found else {}
        chief = await logged_in(web.url, ARBITER, ARBITER_PASSWORD)
        deputy = await logged_in(web.url, DEPUTY, DEPUTY_PASSWORD)
        try:
            url = f"/api/alerts/{flag['id']}"
            answers = await asyncio.gather(
                chief.post(url, json={"action": "confirm"}),
                deputy.post(url, json={"action": "dismiss"}),
            )
        finally:
            await chief.aclose()
            await deputy.aclose()
        codes = sorted(r.status_code for r in answers)
        assert codes == [200, 409], [r.text for r in answers]
        won, lost = sorted(answers, key=lambda r: r.status_code)
        who = ARBITER if won is answers[0] else DEPUTY
        assert lost.json()["code"] == "already_ruled", lost.text
        assert lost.json()["args"]["by"] == who
        # the board's ruling event comes in after the answer: it does not take the ruling over
        assert station.ingest is not None
        async with asyncio.timeout(15):  # until the board's ruling (an event with a ref) is in
            while not [e for e in await station.store.events(board="1") if e["data"].get("ref")]:
                await asyncio.sleep(0.1)
        await station.ingest.flush()
        stored = await station.store.alert(flag["id"])
        assert stored is not None and stored["by"] == who, stored

        # on the chief's page: who ruled, in words
        await page.goto(f"{web.url}/arbiter?lang=zh")
        await page.fill("#username", ARBITER)
        await page.fill("#password", ARBITER_PASSWORD)
        await page.click("#login-submit")
        await page.check("#show-all")
        state = page.locator(f'#alerts li[data-id="{flag["id"]}"] .state')
        await state.wait_for()
        assert who in str(await state.text_content())
        # and the one who came second reads why, in words
        text = await page.evaluate(
            "(d) => QZ.apiError(409, d)", {"code": "already_ruled", "args": lost.json()["args"]}
        )
        assert text.startswith("此警报已裁定（") and f" · {who}" in text and "{" not in text
