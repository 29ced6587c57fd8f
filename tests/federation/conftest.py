"""Fixtures of the federation tests: a fresh PostgreSQL database per test for the hub."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from support.postgres import database_url, throwaway_database


@pytest.fixture
async def hub_db() -> AsyncIterator[str]:
    async with throwaway_database("qz_hub") as name:
        yield database_url(name)
