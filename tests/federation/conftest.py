"""Fixtures of the federation tests: a fresh PostgreSQL database per test for the hub."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from support.station import PG_ADMIN


@pytest.fixture
async def hub_db() -> AsyncIterator[str]:
    import asyncpg

    name = f"qz_hub_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(**PG_ADMIN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        admin = await asyncpg.connect(**PG_ADMIN)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
