"""The store's game records (录谱, issue 29): one row per game with its moves in ICCS, and the
audit of every edit. ``Store.record_rows`` (``database.py`` holds the rest), like ``reads.py``.

The domain (``venue_station/domain/records.py``) checks every move with clock_service.xiangqi
before it comes here; the store keeps what it is given, but only over the record it was read
from: ``write_record`` is a compare-and-set on the record's ply count, so two recorders typing
at once can never both write over the same ply (the later one gets ``RecordConflict``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from venue_station.errors import StoreError
from venue_station.store import tables as t
from venue_station.store.batch_writes import insert_for
from wire_contract.wallclock import wall_ms

__all__ = ["RecordConflict", "RecordRows"]


class RecordConflict(StoreError):
    """The record changed since it was read (``expect_ply`` is no longer its ply count)."""

    def __init__(self, game: str, expected: int, found: int) -> None:
        super().__init__(f"the record of {game} has {found} plies now, not {expected}")
        self.game, self.expected, self.found = game, expected, found


def _row(row: Any) -> dict[str, Any]:
    out = dict(row._mapping)
    out["moves"] = [str(m) for m in out["moves"] or []]
    return out


class RecordRows:
    """The game records' rows (``Store.record_rows``)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    def insert(self, table: sa.Table) -> Any:
        return insert_for(self.engine.dialect.name, table)

    async def record(self, game: str) -> dict[str, Any] | None:
        """The stored record of ``game`` (moves: ICCS list), or None."""
        r = t.records
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(r).where(r.c.game == game))).first()
        return _row(row) if row is not None else None

    async def records(
        self, *, round: int | None = None, games: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        """game -> stored record, of a round, of the games named, or all."""
        r = t.records
        q = sa.select(r)
        if round is not None:
            q = q.where(r.c.round == round)
        if games is not None:
            q = q.where(r.c.game.in_(list(games)))
        async with self.engine.connect() as conn:
            return {row.game: _row(row) for row in await conn.execute(q)}

    async def write_record(
        self,
        *,
        game: str,
        board: str,
        round: int,
        start_fen: str,
        moves: Sequence[str],
        expect_ply: int,
        action: str,
        move: str | None,
        by: str | None,
    ) -> dict[str, Any]:
        """Store ``moves`` as the record of ``game`` if it still has ``expect_ply`` plies (a
        game without a row has 0), with its edit in the same transaction; the stored row.
        Raises ``RecordConflict`` (nothing stored) when another write came first."""
        r, now = t.records, wall_ms()
        values = {
            "moves": list(moves),
            "ply": len(moves),
            "updated_ms": now,
            "updated_by": by,
        }
        async with self.engine.begin() as conn:
            found = (
                await conn.execute(sa.select(r.c.ply).where(r.c.game == game))
            ).scalar_one_or_none()
            if found is None and expect_ply == 0:
                stmt = self.insert(r).values(
                    game=game,
                    board=board,
                    round=round,
                    start_fen=start_fen,
                    created_ms=now,
                    **values,
                )
                done = await conn.execute(stmt.on_conflict_do_nothing(index_elements=["game"]))
            elif found == expect_ply:
                done = await conn.execute(
                    sa.update(r).where(r.c.game == game, r.c.ply == expect_ply).values(**values)
                )
            else:
                raise RecordConflict(game, expect_ply, found or 0)
            if done.rowcount != 1:  # another connection wrote between the read and the write
                raise RecordConflict(game, expect_ply, -1)
            await conn.execute(
                sa.insert(t.record_edits).values(
                    game=game, ply=len(moves), action=action, move=move, by=by, ts=now
                )
            )
            row = (await conn.execute(sa.select(r).where(r.c.game == game))).first()
        return _row(row)

    async def set_record_consent(
        self,
        *,
        game: str,
        board: str,
        round: int,
        start_fen: str,
        by: str | None,
        consent: bool = True,
    ) -> dict[str, Any]:
        """The chief's consent to a later or no record of ``game`` (Meishan), or its
        withdrawal (``consent=False``), audited as a ``consent`` edit; the stored row (a game
        not recorded yet gets an empty record to carry it)."""
        r, now = t.records, wall_ms()
        consent_values = {
            "consent_by": by if consent else None,
            "consent_ms": now if consent else None,
        }
        async with self.engine.begin() as conn:
            stmt = self.insert(r).values(
                game=game,
                board=board,
                round=round,
                start_fen=start_fen,
                moves=[],
                ply=0,
                created_ms=now,
                updated_ms=now,
                updated_by=by,
                **consent_values,
            )
            await conn.execute(
                stmt.on_conflict_do_update(index_elements=["game"], set_=consent_values)
            )
            ply = (await conn.execute(sa.select(r.c.ply).where(r.c.game == game))).scalar_one()
            await conn.execute(
                sa.insert(t.record_edits).values(
                    game=game,
                    ply=ply,
                    action="consent" if consent else "revoke",
                    move=None,
                    by=by,
                    ts=now,
                )
            )
            row = (await conn.execute(sa.select(r).where(r.c.game == game))).first()
        return _row(row)

    async def record_edits(self, game: str) -> list[dict[str, Any]]:
        """Every edit of ``game``'s record, oldest first."""
        e = t.record_edits
        async with self.engine.connect() as conn:
            rows = await conn.execute(sa.select(e).where(e.c.game == game).order_by(e.c.id))
            return [dict(row._mapping) for row in rows]
