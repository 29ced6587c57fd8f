"""A long import (issue 12): a 60,000-row pairings CSV is parsed off the event loop and staged
in short chunks (then swapped in at once, all or nothing: venue_station/store/round_import.py), so
the station keeps serving and another write completes while it runs (it used to hold SQLite's
write lock for 47 s and the gap watcher's "database is locked" stopped the station). No timing
asserts: the other write must finish *before the import does*.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, station_config

from venue_station.domain.station import Station

ROWS = 60_000


def _pairings(rows: int) -> bytes:
    lines = ["round,board,red,black"]
    lines += [f"1,b{i},红{i},黑{i}" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.slow
async def test_a_60000_row_import_does_not_hold_the_write_lock(
    tmp_path: Path, start_station: object
) -> None:
    config = station_config(tmp_path)
    station: Station = await start_station(config, connect=False)  # type: ignore[operator]
    assert station.store is not None
    body = _pairings(ROWS)
    done: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=station.http_url, timeout=300) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        csrf = {"X-CSRF-Token": r.json()["csrf"]}

        async def importing() -> httpx.Response:
            r = await client.post("/api/pairings?send=0", content=body, headers=csrf)
            done["import"] = time.monotonic()
            return r

        task = asyncio.create_task(importing())
        # Wait until the import is storing (its rows are being staged: the round itself is
        # swapped in only at the end, all or nothing), then write something else.
        while not station.store.import_staged_rows:
            assert not task.done(), (await task).text
            await asyncio.sleep(0.01)
        await station.store.add_players([{"name": "插队的人"}])
        done["other write"] = time.monotonic()
        async with httpx.AsyncClient(base_url=station.http_url, timeout=30) as other:
            assert (await other.get("/healthz")).status_code == 200
        done["healthz"] = time.monotonic()
        r = await task
    assert r.status_code == 200, r.text
    assert r.json()["imported"] == ROWS
    assert done["other write"] < done["import"], done
    assert done["healthz"] < done["import"], done
    assert len(await station.store.pairings(1)) == ROWS
    assert "插队的人" in await station.store.player_names()
