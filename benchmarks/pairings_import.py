"""How long a pairings import holds SQLite's write lock, now that it is all or nothing.

``venue_station.store.round_import.replace_rounds`` stages the rows in a temporary table (no lock on
the station's tables), then swaps them in with one transaction. Timed, on a fresh SQLite store
each repeat: the whole import, and the swap (the only time the station's writers wait).
Baseline, same run: the plain way to make it one transaction — one ``executemany`` of every
pairing and game inside a single transaction — which holds the lock the whole time. The ratio
is swap lock / baseline lock: under 1, the staged import keeps the station's writers waiting
less than a plain single transaction would.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from _common import emit, parse_args

from venue_station.store import round_import
from venue_station.store import tables as t
from venue_station.store.database import Store, game_id

TC = "30m+5s"


def _rows(count: int) -> list[dict[str, Any]]:
    return [{"board": f"b{i}", "red": f"红{i}", "black": f"黑{i}"} for i in range(count)]


async def _plain_one_transaction(store: Store, rows: list[dict[str, Any]]) -> float:
    """Seconds the lock is held by one transaction inserting every row (the baseline)."""
    stamp = int(time.time() * 1000)
    games = [
        {**row, "game": game_id(1, row["board"]), "round": 1, "tc": TC, "updated_ms": stamp}
        for row in rows
    ]
    start = time.perf_counter()
    async with store.engine.begin() as conn:
        await conn.execute(sa.delete(t.pairings).where(t.pairings.c.round == 1))
        await conn.execute(sa.insert(t.pairings), [{"round": 1, **row} for row in rows])
        await conn.execute(sa.insert(t.games), games)
        await conn.execute(sa.insert(t.rounds).values(round=1, tc=TC, imported_ms=stamp))
    return time.perf_counter() - start


async def _staged(store: Store, rows: list[dict[str, Any]]) -> tuple[float, float]:
    """(seconds of the whole import, seconds of its swap transaction)."""
    swap_took: list[float] = []
    real_swap = round_import._swap_in

    async def timed_swap(*args: Any, **kw: Any) -> None:
        begun = time.perf_counter()
        await real_swap(*args, **kw)
        swap_took.append(time.perf_counter() - begun)

    round_import._swap_in = timed_swap  # type: ignore[assignment]
    try:
        start = time.perf_counter()
        await store.replace_rounds(TC, {1: rows})
        whole = time.perf_counter() - start
    finally:
        round_import._swap_in = real_swap  # type: ignore[assignment]
    return whole, swap_took[0]


async def _fresh_store(folder: Path, name: str) -> Store:
    return await Store.open(f"sqlite:///{folder / name}.db")


async def main(rows_count: int, repeats: int) -> dict[str, Any]:
    rows = _rows(rows_count)
    plain: list[float] = []
    whole: list[float] = []
    swap: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            store = await _fresh_store(Path(tmp), f"plain{i}")
            plain.append(await _plain_one_transaction(store, rows))
            await store.close()
            store = await _fresh_store(Path(tmp), f"staged{i}")
            took, swapped = await _staged(store, rows)
            whole.append(took)
            swap.append(swapped)
            await store.close()
    return {
        "rows": rows_count,
        "plain_lock_s": min(plain),
        "staged_import_s": min(whole),
        "staged_swap_lock_s": min(swap),
        "ratio": min(swap) / min(plain),
    }


if __name__ == "__main__":
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "")
    emit(asyncio.run(main(10_000 if args.quick else 60_000, 3)))
