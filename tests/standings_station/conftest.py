"""The standings tests' station: no broker, its boards' events fed as a node's (``Feeder``),
on SQLite and PostgreSQL (``db_url``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.station import station_config

from venue_station.domain.station import Station


@pytest.fixture
async def offline(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    station: Station = await start_station(
        station_config(tmp_path, database_url=db_url), connect=False
    )
    return station
