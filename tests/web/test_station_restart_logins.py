"""A station restarted mid-round logs no one out (an outsider deputy arbiter: both arbiters'
pages dropped to a bare login form, and a flag that fell meanwhile was neither shown nor beeped
until someone logged in again — on a phone in a busy hall, for minutes).

Chromium reaches the station through a TCP pipe whose far end follows the station to its new
port: the page sees what a restart looks like from the hall — the link gone, then back.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from support.chaos import TcpProxy
from support.station import ARBITER, ARBITER_PASSWORD, Feeder, station_config

from venue_station.auth import RECORDER, Sessions, hash_password
from venue_station.web.web_server import StationWithWeb

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]
# (the last test is pure; async only to share the file's marks)


async def logged_in(page: Any, url: str) -> None:
    """The arbiter page at ``url``, logged in as the arbiter."""
    await page.goto(f"{url}/arbiter")
    await page.fill("#username", ARBITER)
    await page.fill("#password", ARBITER_PASSWORD)
    await page.click("#login-submit")
    await page.wait_for_selector("#station:not([hidden])")


async def test_a_station_restart_keeps_the_arbiters_logged_in_and_rings_for_a_new_flag(
    page: Any, broker_factory: Any, tmp_path: Any
) -> None:
    config = station_config(tmp_path, broker_factory(), command_timeout_s=1.0)
    station = StationWithWeb(config)
    await station.start()
    target = {"port": station.web.port if station.web else 0}
    pipe = await TcpProxy(lambda: ("127.0.0.1", target["port"])).start()
    api = httpx.AsyncClient(timeout=10)
    try:
        await station.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=False)
        await logged_in(page, f"http://127.0.0.1:{pipe.port}")
        r = await api.post(f"{station.http_url}/api/auth/login",
                           json={"username": ARBITER, "password": ARBITER_PASSWORD})  # fmt: skip
        csrf = r.json()["csrf"]

        await station.stop()  # the station restarted (same config, same store)
        station = StationWithWeb(config)
        await station.start()
        target["port"] = station.web.port if station.web else 0
        await page.wait_for_selector("#conn", state="hidden", timeout=15_000)  # back
        assert await page.locator("#station").is_visible()
        assert not await page.locator("#login").is_visible()

        beeps = await page.evaluate("QZ.beeps")
        feed = Feeder(station)
        feed("1", "r1-b1", "flag", {"side": "red"})
        await feed.flush()
        await page.locator('#alerts li[data-kind="flag"][data-board="1"]').wait_for()
        assert await page.evaluate("QZ.beeps") > beeps

        # The API's own client: the same cookie and CSRF token still act after the restart.
        r = await api.get(f"{station.http_url}/api/auth/session")
        assert r.status_code == 200 and r.json()["csrf"] == csrf
        pause = {"cmd": "pause", "args": {}}
        r = await api.post(
            f"{station.http_url}/api/boards/1/cmd", json=pause, headers={"X-CSRF-Token": csrf}
        )
        assert r.status_code not in (401, 403), r.text
        # Logged out, it stays out across a restart.
        r = await api.post(f"{station.http_url}/api/auth/logout", headers={"X-CSRF-Token": csrf})
        assert r.status_code == 200
        await station.stop()
        station = StationWithWeb(config)
        await station.start()
        target["port"] = station.web.port if station.web else 0
        api.cookies.update(r.cookies)
        r = await api.get(f"{station.http_url}/api/auth/session")
        assert r.status_code == 401
    finally:
        await api.aclose()
        await pipe.close()
        await station.stop()


async def test_a_page_whose_login_ended_says_so_and_rings_for_what_it_never_saw(
    page: Any, broker_factory: Any, tmp_path: Any
) -> None:
    """A login the station no longer knows (it expired): the page says why, not a bare form;
    logged in again, an open alert it never saw beeps."""
    station = StationWithWeb(station_config(tmp_path, broker_factory(), command_timeout_s=1.0))
    await station.start()
    try:
        await station.import_pairings("round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n", send=False)
        await logged_in(page, station.http_url)
        # the login's read of the alerts and its stream's hello's were answered before the
        # login ends: one answered after the flag would show it then (a loaded CI run), and
        # the page would rightly have nothing new to ring for after the next login
        await page.wait_for_function(
            "performance.getEntriesByType('resource')"
            ".filter((e) => e.name.includes('/api/alerts')).length >= 2"
        )
        sessions: Sessions = station.app.state.sessions
        for sid in [s.sid for s in list(sessions._sessions.values())]:  # every login ended
            sessions.logout(sid)
        feed = Feeder(station)
        feed("1", "r1-b1", "flag", {"side": "black"})
        await feed.flush()
        # its stream ends at the next news (the flag), reconnects as anyone: the page learns
        await page.locator("#login").wait_for()
        assert "登录已失效" in await page.inner_text("#login-error")
        beeps = await page.evaluate("QZ.beeps")
        await page.fill("#password", ARBITER_PASSWORD)
        await page.click("#login-submit")
        await page.locator('#alerts li[data-kind="flag"][data-board="1"]').wait_for()
        assert await page.evaluate("QZ.beeps") > beeps
        # and the stream is the arbiter's again: a flag now comes by it, shown and beeped
        # (the page kept the anonymous stream its ended login had become: a reviewer)
        beeps = await page.evaluate("QZ.beeps")
        feed("2", "r1-b2", "flag", {"side": "red"})
        await feed.flush()
        await page.locator('#alerts li[data-kind="flag"][data-board="2"]').wait_for()
        assert await page.evaluate("QZ.beeps") > beeps
    finally:
        await station.stop()


@pytest.mark.asyncio(loop_scope="session")
async def test_kept_sessions_come_back_only_for_what_the_accounts_still_allow() -> None:
    accounts = [("chief", hash_password("a"), "chief"), ("deputy", hash_password("b"), "arbiter")]
    before = Sessions(accounts)
    chief, deputy = before.open("chief", "chief"), before.open("deputy", "arbiter")
    recorder = before.open("board-3-key", RECORDER, boards=("3",), key_fp="secret-1")
    gone = before.open("viewer-1", "viewer")  # an account since removed
    kept = before.dumps()
    assert chief.sid not in kept and chief.csrf in kept  # only the ids' hashes are written
    before.logout(deputy.sid)
    # the deputy became a viewer meanwhile: a different role, the session is not taken back
    after = Sessions([accounts[0], ("deputy", hash_password("b"), "viewer")])
    assert after.restore(kept, key_fp="secret-1") == 2
    assert after.check(chief.sid, chief.csrf) is not None
    assert after.get(deputy.sid) is None and after.get(gone.sid) is None
    back = after.get(recorder.sid)
    assert back is not None and back.boards == ("3",) and back.role == RECORDER
    # nothing malformed is taken, nothing expired
    assert after.restore("[1, 2]") == 0 and after.restore("{not json") == 0
    assert after.restore('{"' + "0" * 64 + '": {"user": "chief"}}') == 0
    # a password changed in station.toml ends the account's kept sessions (a restart was the
    # way to log someone out; now the password is), and a removed recorder account that had
    # boards is no board's record key (a reviewer)
    changed = Sessions([("chief", hash_password("new"), "chief"), accounts[1]])
    assert changed.restore(kept, key_fp="secret-1") == 2  # the deputy's and the record key's
    assert changed.get(chief.sid) is None and changed.get(deputy.sid) is not None
    recorders = Sessions(accounts, boards={"rec1": ("4",)})
    rec = Sessions([*accounts, ("rec1", hash_password("c"), RECORDER)], boards={"rec1": ("4",)})
    rec_session = rec.open("rec1", RECORDER)
    assert recorders.restore(rec.dumps()) == 0 and recorders.get(rec_session.sid) is None
    # the record key secret deleted (None) or replaced since: every printed key is void, and
    # the sessions the keys opened are not taken back (a reviewer found them kept)
    for now in (None, "secret-2"):
        void = Sessions(accounts)
        assert void.restore(kept, key_fp=now) == 2 and void.get(recorder.sid) is None
    stale = Sessions(accounts, ttl_s=-1)
    stale.open("chief", "chief")
    assert Sessions(accounts).restore(stale.dumps()) == 0
