"""Alerts that only inform are put away with one tap (an outsider's round: acknowledged, they
kept marking their board round after round, and offered 确认 / 驳回 that decided nothing).

An alert that carries a decision (a flag, a foul, a lateness …) offers 知悉 / 确认 / 驳回 and
stays until ruled; one that informs (a clock fault, a node restart, a board lost …) offers
知悉 alone, and once acknowledged it leaves the list and its board's mark — also after a reload.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.web import WebStation, login

from venue_station.domain.rulings import decides
from venue_station.live.alerts import ALERT_KINDS

pytestmark = [pytest.mark.browser, pytest.mark.broker, pytest.mark.asyncio(loop_scope="session")]


def shapes() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"kind": kind, "detail": {}} for kind in ALERT_KINDS]
    for detail in (
        {"reason": "clock_fault"},
        {"reason": "draw_too_early", "status": "pending"},
        {"reason": "draw_too_early", "status": "confirmed"},
        {"reason": "press_before_flag", "status": "pending", "early_ms": 80},
        {"reason": "clock_rebooted"},
    ):
        out.append({"kind": "warning", "detail": detail})
    out.append({"kind": "flag", "detail": None})
    return out


async def test_the_page_and_the_station_agree_which_alerts_decide(
    page: Any, web_station: WebStation
) -> None:
    await login(page, web_station)
    alerts = shapes()
    on_page = await page.evaluate("(as) => as.map((a) => QZ.alertDecides(a))", alerts)
    assert on_page == [decides(a) for a in alerts]
    # both kinds are there: the rule is not trivially all or nothing
    assert decides({"kind": "flag", "detail": {}}) and decides({"kind": "record_missing"})
    assert not decides({"kind": "node_restart", "detail": {}})


def row(page: Any, kind: str, board: str) -> Any:
    return page.locator(f'#alerts li[data-kind="{kind}"][data-board="{board}"]')


async def buttons(alert: Any) -> list[str]:
    return list(
        await alert.locator(".alert-actions button").evaluate_all(
            "bs => bs.map((b) => b.dataset.action)"
        )
    )


async def test_an_informing_alert_acknowledged_is_put_away(
    page: Any, web_station: WebStation
) -> None:
    node = await web_station.node(["1", "2"], mode="idle")
    station = web_station.station
    await login(page, web_station)
    await page.wait_for_selector('#boards .card[data-board="2"][data-online="online"]')
    game = {"tc": "30m+5s", "red": "甲", "black": "乙"}
    assert (await station.send_command("1", "set_game", {**game, "game": "r1-b1"})).ok
    assert (await station.send_command("1", "start")).ok
    flagging = {**game, "game": "r1-b2", "red_ms": 500, "black_ms": 60_000}
    assert (await station.send_command("2", "set_game", flagging)).ok
    assert (await station.send_command("2", "start")).ok

    # Board 1's clock reports a fault: an alert that informs.
    node.boards["1"].report_clock_fault("cable pulled")
    fault = row(page, "warning", "1")
    await fault.wait_for()
    assert await buttons(fault) == ["ack"]
    card1 = page.locator('#boards .card[data-board="1"]')
    assert await card1.get_attribute("data-attention") == "1"

    # Board 2's flag: an alert that decides, ruled with the three buttons.
    flag = row(page, "flag", "2")
    await flag.wait_for()
    assert await buttons(flag) == ["ack", "confirm", "dismiss"]

    await fault.locator('[data-action="ack"]').click()
    await fault.wait_for(state="detached")
    await page.wait_for_function(
        "!document.querySelector('#boards .card[data-board=\"1\"]').hasAttribute('data-attention')"
    )
    await flag.locator('[data-action="ack"]').click()
    await page.wait_for_selector('#alerts li[data-kind="flag"][data-status="acked"]')
    assert await buttons(flag) == ["confirm", "dismiss"]  # acknowledged, still to rule
    assert await page.locator('#boards .card[data-board="2"]').get_attribute("data-attention")

    # A reload (a new shift, a laptop restarted) keeps it so.
    await page.reload()
    await page.wait_for_selector("#station:not([hidden])")
    await row(page, "flag", "2").wait_for()
    assert await row(page, "warning", "1").count() == 0
    assert (
        await page.locator('#boards .card[data-board="1"]').get_attribute("data-attention") is None
    )
    # "show settled" still lists it, acknowledged
    await page.check("#show-all")
    await page.wait_for_selector(
        '#alerts li[data-kind="warning"][data-board="1"][data-status="acked"]'
    )
