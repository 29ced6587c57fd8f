"""A board gone without its will is shown unknown and the arbiter is told (issue 28).

A node that leaves with a clean DISCONNECT and says nothing (an older node, a crash its
library closes politely) leaves its boards' retained status ``online``: the station showed
them online and running for 40 s and more. Now a board online by its status that has said
nothing — no event, state, status, nor an answer to the station's clock probes — for the
silence bound (``board_silent_s``, never under two probe rounds + 2 s) is shown "unknown
since" its last message on every page, its clock not run on, one ``board_silent`` alert per
node's outage, and a banner; a message from it ends all that (the alert is cleared).

Real station and web, real Mosquitto, chromium; the node is a FakeNode that answers no probe.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from support.station import FakeNode
from support.web import served_station

from venue_station.intake.silence import silence_after_ms
from venue_station.web.api_models import BoardView, StationAlarm

pytestmark = [pytest.mark.broker, pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

PROBE_S, SILENT_S = 1.0, 3.0


async def test_the_bound_is_never_under_two_probe_rounds() -> None:
    assert silence_after_ms(12.0, 5.0) == 12_000  # the defaults: 12 s
    assert silence_after_ms(3.0, 5.0) == 12_000
    assert silence_after_ms(SILENT_S, PROBE_S) == 4_000


async def test_a_board_gone_without_its_will_is_unknown_since_its_last_word(
    broker_factory: Any, tmp_path: Path, page: Any
) -> None:
    broker = broker_factory()
    config = {"clock_probe_s": PROBE_S, "board_silent_s": SILENT_S, "command_timeout_s": 1.0}
    async with served_station(broker, tmp_path, **config) as web:
        station = web.station
        assert station.ingest is not None and station.store is not None
        async with FakeNode(broker, "node-a", ["1", "2"], answer=False, keep_retained=True) as fake:
            for b in ("1", "2"):
                await web.publish_status(fake, b, "online")
                await web.publish_state(fake, b, phase="running", running="red", red_ms=600_000)
            await web.wait_board("2", lambda v: v["state"] is not None)
            await page.goto(web.url + "/")
            await page.wait_for_selector('.card[data-board="1"][data-online="online"]')
            last_word = time.monotonic()
        # the node is gone: a clean DISCONNECT, no offline, its retained status says online
        bound = silence_after_ms(SILENT_S, PROBE_S) / 1000 + 1.0  # + the watch's tick, slack
        await page.wait_for_selector(
            '.card[data-board="1"][data-online="silent"]', timeout=int(bound * 1000) + 1000
        )
        took = time.monotonic() - last_word
        assert took <= bound + 0.5, took
        badge = await page.text_content('.card[data-board="1"] .badge') or ""
        assert "状态未知" in badge, badge
        first = await page.text_content('.card[data-board="1"] .side.red .time')
        await asyncio.sleep(1.2)
        assert await page.text_content('.card[data-board="1"] .side.red .time') == first
        await page.wait_for_selector("#qz-alarm", timeout=3000)
        # the banner polls every 2 s: the second board's silence may show one poll later
        with contextlib.suppress(Exception):
            await page.wait_for_function(
                "() => (document.querySelector('#qz-alarm')?.textContent || '')"
                " .includes('2 个台次')",
                timeout=5000,
            )
        assert "2 个台次" in (await page.text_content("#qz-alarm") or "")
        await page.goto(web.url + "/?lang=en")
        await page.wait_for_selector('.card[data-board="2"][data-online="silent"]')
        assert "Unknown since" in (await page.text_content('.card[data-board="2"] .badge') or "")
        await page.wait_for_selector("#qz-alarm")
        assert "2 board(s) silent" in (await page.text_content("#qz-alarm") or "")
        alarms = {a["code"]: a for a in station.info()["alarms"]}
        assert alarms["boards_silent"]["boards"] == ["1", "2"]
        # what /api/boards and /api/station answer is what the API's document declares
        views = [BoardView.model_validate(v) for v in station.board_views()]
        assert all(v.status is not None and v.status.silent_since_ms for v in views)
        [StationAlarm.model_validate(a) for a in station.info()["alarms"]]
        await station.ingest.flush()
        silent = [a for a in await station.store.alerts() if a["kind"] == "board_silent"]
        assert len(silent) == 1 and silent[0]["detail"]["boards"] == ["1", "2"], silent
        print(f"\nunknown on the page {took:.2f} s after the node's last message")

        # it speaks again: known again, the alert cleared by the station
        async with FakeNode(broker, "node-a", ["1", "2"], answer=False) as fake:
            for b in ("1", "2"):
                await web.publish_status(fake, b, "online")
            await page.wait_for_selector('.card[data-board="1"][data-online="online"]')
            await page.wait_for_selector("#qz-alarm", state="detached", timeout=5000)
            await station.ingest.flush()
            (alert,) = [a for a in await station.store.alerts() if a["kind"] == "board_silent"]
            assert alert["status"] == "cleared" and alert["detail"]["cleared"] == "heard_again"
