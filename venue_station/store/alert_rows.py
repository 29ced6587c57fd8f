"""The station's own changes of alert rows (the ingest writer's): find an active alert of a
kind for a game, change one (cleared, boards joined). Beside ``database.Store`` (which it
serves), to keep that module small."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from venue_station.store import tables as t
from wire_contract.wallclock import wall_ms

__all__ = ["change_alert", "find_open_alert"]


async def find_open_alert(
    engine: AsyncEngine, board: str, kind: str, game: str, *, side: str | None = None
) -> dict[str, Any] | None:
    """The earliest open (or acked) alert of ``kind`` for ``game`` on ``board``."""
    a = t.alerts
    q = sa.select(a).where(
        a.c.board == board,
        a.c.kind == kind,
        a.c.game == game,
        a.c.status.in_(["open", "acked"]),
    )
    if side is not None:
        q = q.where(a.c.side == side)
    async with engine.connect() as conn:
        row = (await conn.execute(q.order_by(a.c.id))).first()
        return dict(row._mapping) if row else None


async def change_alert(
    engine: AsyncEngine,
    id: int,
    *,
    status: str | None = None,
    detail_add: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The station's own change of an active alert (cleared, boards joined); an alert
    already ruled or cleared is left as it is (None)."""
    a = t.alerts
    async with engine.begin() as conn:
        row = (await conn.execute(sa.select(a).where(a.c.id == id))).first()
        if row is None or row.status not in ("open", "acked"):
            return None
        values: dict[str, Any] = {"updated_ms": wall_ms()}
        if status is not None:
            values.update(status=status, by="station")
        if detail_add:
            values["detail"] = {**(row.detail or {}), **detail_add}
        await conn.execute(sa.update(a).where(a.c.id == id).values(**values))
        new = (await conn.execute(sa.select(a).where(a.c.id == id))).first()
        return dict(new._mapping) if new else None
