"""The store's schema migrations (Alembic), run at open: a database whose schema is newer
than this code is refused."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection

from venue_station.errors import StoreError
from venue_station.resources import migrations_dir

__all__ = ["migrate"]


def alembic_config(connection: Connection) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.attributes["connection"] = connection
    return cfg


def migrate(connection: Connection) -> str:
    """Upgrade to head; refuse a database whose revision this code does not know."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    cfg = alembic_config(connection)
    scripts = ScriptDirectory.from_config(cfg)
    current = MigrationContext.configure(connection).get_current_revision()
    head = scripts.get_current_head()
    if current is not None:
        try:
            known = scripts.get_revision(current)
        except Exception:  # alembic raises several kinds for an unknown id
            known = None
        if known is None:
            raise StoreError(
                f"the database schema is at revision {current!r}, newer than this qizhong "
                f"(it knows up to {head!r}); upgrade qizhong or use another database"
            )
    command.upgrade(cfg, "head")
    return head or ""
