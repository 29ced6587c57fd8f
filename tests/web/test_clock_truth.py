"""Clock truth: a node's wall-clock offset from its messages, and the arbiter's alert."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.web import WebStation, login, wall_ms

from venue_station.intake.clock_truth import ClockTruth, OffsetEstimator

pytestmark = pytest.mark.asyncio(loop_scope="session")


def feed(
    truth: ClockTruth, board: str, offset: int, delays: list[int], start: int = 10**12
) -> list[Any]:
    """Messages stamped by a node ``offset`` ms behind the station, arriving after ``delays``."""
    alerts = []
    for i, delay in enumerate(delays):
        sent_station = start + 1000 * i
        spec = truth.observe(board, ts=sent_station - offset, received_ms=sent_station + delay)
        if spec is not None:
            alerts.append(spec)
    return alerts


async def test_a_node_in_time_never_alerts_even_on_a_slow_network() -> None:
    truth = ClockTruth()
    rng = random.Random(7)
    # Mostly 60-250 ms (a congested broker), now and then a fast one: the fast ones tell the truth.
    delays = [rng.randint(60, 250) if i % 10 else rng.randint(1, 5) for i in range(300)]
    assert feed(truth, "1", 20, delays) == []
    assert truth.offset_ms("1") is not None and 20 <= truth.offset_ms("1") <= 25  # type: ignore[operator]


@pytest.mark.parametrize(("offset", "direction"), [(300, "behind"), (-150, "ahead")])
async def test_a_node_off_by_more_than_100ms_alerts_once(offset: int, direction: str) -> None:
    truth = ClockTruth()
    alerts = feed(truth, "7", offset, [3, 40, 2, 9, 30] * 20)
    assert len(alerts) == 1
    spec = alerts[0]
    assert spec.kind == "clock_offset" and spec.board == "7"
    assert spec.detail["direction"] == direction
    assert offset <= spec.detail["offset_ms"] <= offset + 2


async def test_no_verdict_before_enough_samples_and_hysteresis() -> None:
    truth = ClockTruth(window=4, min_samples=4)
    assert feed(truth, "1", 500, [1, 1, 1]) == []  # three messages are not enough to judge
    assert len(feed(truth, "1", 500, [1])) == 1
    # Back to 90 ms: still beyond half the limit, so no re-arm and no new alert at 120.
    assert feed(truth, "1", 90, [1] * 4) == []
    assert feed(truth, "1", 120, [1] * 4) == []
    # Fixed (NTP caught up), then off again: a second episode, a second alert with a new key.
    assert feed(truth, "1", 10, [1] * 4) == []
    again = feed(truth, "1", 130, [1] * 4)
    assert len(again) == 1 and again[0].key.startswith("off:1:2:")
    assert truth.estimator("1").episodes == 2


async def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="window"):
        OffsetEstimator(window=0)
    with pytest.raises(ValueError, match="min_samples"):
        OffsetEstimator(window=4, min_samples=5)
    with pytest.raises(ValueError, match="limit_ms"):
        ClockTruth(limit_ms=0)


@given(
    offset=st.integers(-5_000, 5_000),
    delays=st.lists(st.integers(0, 2_000), min_size=4, max_size=40),
)
async def test_the_estimate_is_the_offset_plus_the_fastest_delay(
    offset: int, delays: list[int]
) -> None:
    truth = ClockTruth(window=64)
    feed(truth, "b", offset, delays)
    assert truth.offset_ms("b") == offset + min(delays)


@pytest.mark.browser
@pytest.mark.broker
async def test_the_arbiter_is_alerted_to_a_node_300ms_behind(
    page: Any, web_station: WebStation
) -> None:
    await login(page, web_station)
    # The station judges clocks on live messages only: not in the first seconds after it
    # connects, when what arrives may be the broker's backlog for it.
    ingest = web_station.station.ingest
    assert ingest is not None
    await asyncio.sleep(max(0, getattr(ingest, "live_after_ms", 0) - wall_ms()) / 1000)
    good = await web_station.fake_node("node-a", ["1"])
    late = await web_station.fake_node("node-b", ["3"])
    await web_station.publish_status(good, "1", "online")
    for _ in range(12):
        await web_station.publish_state(good, "1")
        await web_station.publish_state(late, "3", ts=wall_ms() - 300)
    alert = page.locator('#alerts li[data-kind="clock_offset"][data-board="3"]')
    await alert.wait_for(timeout=5000)
    text = await alert.text_content() or ""
    assert "时钟偏差过大" in text and "ms" in text
    offset = int(text.split(" ms")[0].split("·")[-1].strip())
    assert 300 <= offset < 400
    assert await page.locator('#alerts li[data-kind="clock_offset"][data-board="1"]').count() == 0
    views = {v["board"]: v for v in web_station.station.board_views()}
    assert abs(views["1"]["clock_offset_ms"]) < 100
