"""A station stopped cleanly (the technician restarts the laptop's service) leaves no alarm:
an outsider found one false 与消息服务器断开 (broker_down) alert per stop, though the broker never
went down. A broker that does go away still raises it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support.station import station_config

pytestmark = pytest.mark.broker


async def broker_alerts(station: Any) -> list[dict[str, Any]]:
    await station.ingest.flush()
    return [a for a in await station.store.alerts() if a["kind"] == "broker_down"]


async def test_a_clean_stop_is_no_broker_lost(
    broker_factory: Any, tmp_path: Path, start_station: Any
) -> None:
    broker = broker_factory()
    config = station_config(tmp_path, broker)
    for _ in range(2):
        station = await start_station(config, serve_http=False)
        await asyncio.wait_for(station.collector.connected.wait(), 10)
        assert await broker_alerts(station) == []
        await station.stop()
    station = await start_station(config, serve_http=False)
    await asyncio.wait_for(station.collector.connected.wait(), 10)
    assert await broker_alerts(station) == []

    broker.close()  # the broker really goes: the arbiter is told
    for _ in range(100):
        if await broker_alerts(station):
            break
        await asyncio.sleep(0.05)
    assert [a["kind"] for a in await broker_alerts(station)] == ["broker_down"]
