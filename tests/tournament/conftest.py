"""The whole event, run once per module: ``meishan`` / ``wulong`` fixtures (an EventRecord)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from tournament.event import EventRecord, EventSize, run_event

SHORT = EventSize(players=16, moves=2)
LONG = EventSize(players=24, moves=12)


def _size(request: pytest.FixtureRequest) -> EventSize:
    return LONG if request.config.getoption("--tournament-long") else SHORT


@pytest_asyncio.fixture(loop_scope="session", scope="module")
async def meishan(
    browser: Any, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[EventRecord]:
    tmp: Path = tmp_path_factory.mktemp("meishan")
    yield await run_event(browser, tmp, "meishan-2016", _size(request))


@pytest_asyncio.fixture(loop_scope="session", scope="module")
async def wulong(
    browser: Any, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> AsyncIterator[EventRecord]:
    tmp: Path = tmp_path_factory.mktemp("wulong")
    yield await run_event(browser, tmp, "wulong-2015", _size(request))
