"""Alembic environment for the station store.

The store runs migrations itself at start (``Store.open``) and hands Alembic the live
connection through ``config.attributes["connection"]``; run from the ``alembic`` command line
instead, the URL comes from ``sqlalchemy.url`` or ``QZ_DATABASE_URL`` and an async engine is
created here.
"""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from venue_station.store.tables import metadata

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async(url: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_run)
    finally:
        await engine.dispose()


def main() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = os.environ.get("QZ_DATABASE_URL") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("set QZ_DATABASE_URL or sqlalchemy.url to migrate a station database")
    asyncio.run(_run_async(url))


if context.is_offline_mode():
    raise SystemExit("offline (SQL script) migrations are not supported; run against a database")
main()
