"""A throwaway PostgreSQL database on 127.0.0.1:5432 (trust auth), created and dropped.

``async with throwaway_database("qz_test") as name:`` makes a database of a unique name from
``test`` and drops it after, even with sessions still open on it (``WITH (FORCE)``).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator

PG_ADMIN = {"host": "127.0.0.1", "port": 5432, "database": "test", "user": "postgres"}


@contextlib.asynccontextmanager
async def throwaway_database(prefix: str) -> AsyncIterator[str]:
    import asyncpg  # only the tests marked postgres need it

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(**PG_ADMIN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield name
    finally:
        admin = await asyncpg.connect(**PG_ADMIN)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
