"""Store an import of pairings all or nothing, without holding the write lock for long.

The rows go first, in chunks, into a temporary table of one connection (SQLite keeps it in the
connection's own temp database, PostgreSQL in its session: neither locks the station's
tables, so the ingest writer and the gap watcher write meanwhile). Then one transaction swaps
them in: the rounds' earlier pairings go, the new ones and their games come from the staged
table in a statement each, the rounds are stamped. A failure anywhere — a row the database
refuses, a lost connection — leaves the store as it was. (Before, each round and each chunk of
``IMPORT_CHUNK`` rows was its own transaction: a failure midway left part of the import.)
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from venue_station.store import tables as t
from wire_contract.wallclock import wall_ms

__all__ = [
    "STAGE_CHUNK",
    "VOIDED_KEY",
    "game_id",
    "replace_rounds",
    "voided_games",
    "voided_id",
]

VOIDED_KEY = "games.voided"  # meta: the games an import voided, with what they were

STAGE_CHUNK = 500  # rows per insert into the staged table: the event loop runs between
# What a re-import changes of a game: names and placing, never its result.
_GAME_FIELDS = ("red", "black", "tc", "board", "round")


def game_id(round_no: int, board: str) -> str:
    return f"r{round_no}-b{board}"


def voided_id(game: str, stamp: int) -> str:
    """The id a voided game's events keep: still stored, no longer any game's."""
    return f"{game}~void{stamp}"


def _staged_table() -> sa.Table:
    # A fresh name each time: a pooled connection may still hold one a cancelled import left.
    return sa.Table(
        f"pairing_import_{secrets.token_hex(6)}",
        sa.MetaData(),
        sa.Column("round", sa.Integer, nullable=False),
        sa.Column("board", sa.String(32), nullable=False),
        sa.Column("red", sa.String(64), nullable=False),
        sa.Column("black", sa.String(64), nullable=False),
        sa.Column("game", sa.String(64), nullable=False),
        prefixes=["TEMPORARY"],
    )


async def replace_rounds(
    engine: AsyncEngine,
    tc: str,
    rounds: Mapping[int, Sequence[Mapping[str, Any]]],
    *,
    on_staged: Callable[[int], None] | None = None,
    void: Sequence[str] = (),
    by: str | None = None,
) -> None:
    """Store each round's pairings (rows of ``board``, ``red``, ``black``) and games, replacing
    an earlier import of those rounds; all of it or, on any failure, none of it.
    ``on_staged`` hears how many rows are staged so far, after each chunk. ``void``: games
    whose results are voided in the same transaction (their events keep a voided id, the
    game as it was is kept under ``VOIDED_KEY``)."""
    staged = _staged_table()
    rows = [
        {**row, "round": round_no, "game": game_id(round_no, str(row["board"]))}
        for round_no, round_rows in rounds.items()
        for row in round_rows
    ]
    async with engine.connect() as conn:
        await conn.run_sync(staged.create)
        await conn.commit()
        try:
            for start in range(0, len(rows), STAGE_CHUNK):
                await conn.execute(sa.insert(staged), rows[start : start + STAGE_CHUNK])
                await conn.commit()
                if on_staged is not None:
                    on_staged(min(start + STAGE_CHUNK, len(rows)))
                await asyncio.sleep(0)
            try:
                if void:
                    await _void(conn, list(void), by)
                await _swap_in(conn, staged, tc, sorted(rounds))
                await conn.commit()
            except BaseException:
                await conn.rollback()
                raise
        finally:
            await conn.run_sync(staged.drop)
            await conn.commit()


async def _swap_in(conn: AsyncConnection, staged: sa.Table, tc: str, rounds: list[int]) -> None:
    dialect: Any = pg_dialect if conn.dialect.name == "postgresql" else sqlite_dialect
    stamp = wall_ms()
    await conn.execute(sa.delete(t.pairings).where(t.pairings.c.round.in_(rounds)))
    columns = ["round", "board", "red", "black"]
    await conn.execute(
        sa.insert(t.pairings).from_select(columns, sa.select(*(staged.c[c] for c in columns)))
    )
    # "WHERE true": SQLite cannot tell an upsert's ON from a join's after a bare SELECT.
    source = sa.select(
        staged.c.game,
        staged.c.round,
        staged.c.board,
        staged.c.red,
        staged.c.black,
        sa.literal(tc, sa.String),
        sa.literal(stamp, sa.BigInteger),
    ).where(sa.true())
    games = dialect.insert(t.games).from_select(
        ["game", "round", "board", "red", "black", "tc", "updated_ms"], source
    )
    games = games.on_conflict_do_update(
        index_elements=["game"], set_={k: games.excluded[k] for k in _GAME_FIELDS}
    )
    await conn.execute(games)
    # a game the new pairing no longer has (a board dropped or moved) leaves with it: its row
    # stayed, a second game of round 1 for its players in the standings and the TRF (a game
    # with a result or a running clock was voided above, or the import refused)
    await conn.execute(
        sa.delete(t.games).where(
            t.games.c.round.in_(rounds), t.games.c.game.not_in(sa.select(staged.c.game))
        )
    )
    marks = dialect.insert(t.rounds)
    marks = marks.on_conflict_do_update(
        index_elements=["round"], set_={"tc": marks.excluded.tc, "imported_ms": stamp}
    )
    await conn.execute(marks, [{"round": r, "tc": tc, "imported_ms": stamp} for r in rounds])


async def _void(conn: AsyncConnection, games: list[str], by: str | None) -> None:
    stamp = wall_ms()
    rows = [
        dict(r._mapping)
        for r in await conn.execute(sa.select(t.games).where(t.games.c.game.in_(games)))
    ]
    text = (
        await conn.execute(sa.select(t.meta.c.value).where(t.meta.c.key == VOIDED_KEY))
    ).scalar()
    kept: list[dict[str, Any]] = json.loads(text) if text else []
    for row in rows:
        kept.append(
            {
                **{
                    k: row[k]
                    for k in ("game", "round", "board", "red", "black", "result", "reason")
                },
                "winner": row.get("winner"),
                "events_game": voided_id(row["game"], stamp),
                "voided_ms": stamp,
                "by": by,
            }
        )
        await conn.execute(
            sa.update(t.events)
            .where(t.events.c.game == row["game"])
            .values(game=voided_id(row["game"], stamp))
        )
    await conn.execute(sa.delete(t.games).where(t.games.c.game.in_(games)))
    value = json.dumps(kept, ensure_ascii=False)
    await conn.execute(sa.delete(t.meta).where(t.meta.c.key == VOIDED_KEY))
    await conn.execute(sa.insert(t.meta).values(key=VOIDED_KEY, value=value))


async def voided_games(engine: AsyncEngine) -> list[dict[str, Any]]:
    """Games whose results an import voided, oldest first (``VOIDED_KEY``)."""
    async with engine.connect() as conn:
        q = sa.select(t.meta.c.value).where(t.meta.c.key == VOIDED_KEY)
        text = (await conn.execute(q)).scalar()
    return list(json.loads(text)) if text else []
