"""A throwaway PostgreSQL database (trust auth for ``postgres``), created and dropped.

The server is at ``QZ_PG_HOST:QZ_PG_PORT`` (default 127.0.0.1:5432): ``make test`` runs the
tests through tools/bring_up.py, which sets them to the server it found or started.

``async with throwaway_database("qz_test") as name:`` makes a database of a unique name from
``test`` and drops it after, even with sessions still open on it (``WITH (FORCE)``);
``database_url(name)`` is its URL.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator

PG_HOST = os.environ.get("QZ_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("QZ_PG_PORT", "5432"))
PG_ADMIN = {"host": PG_HOST, "port": PG_PORT, "database": "test", "user": "postgres"}


def database_url(name: str, *, scheme: str = "postgresql", user: str = "postgres") -> str:
    """The URL of database ``name`` on the tests' server (``scheme`` e.g. postgresql+asyncpg)."""
    return f"{scheme}://{user}@{PG_HOST}:{PG_PORT}/{name}"


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
