"""A pairings import is stored all or nothing (docs/station.md "Games, results, alerts").

A file refused on a row in the middle changes nothing: not the rows before it, not the round's
earlier import. Nor does a store that refuses a row midway — here a real trigger in the real
database (SQLite and PostgreSQL) refusing one row of the second round, past the first few
hundred rows of the first: the import used to be stored round by round and in chunks of
``IMPORT_CHUNK`` rows, and such a failure left part of it behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from support.station import ARBITER, ARBITER_PASSWORD, station_config

from venue_station.domain.station import Station
from venue_station.store.database import IMPORT_CHUNK, Store

EARLIER = "round,board,red,black\n7,1,王天一,郑惟桐\n7,2,许银川,吕钦\n"
REFUSED_BOARD = "b700"


async def _everything(store: Store) -> dict[str, Any]:
    return {
        "pairings": await store.pairings(),
        "rounds": await store.rounds(),
        "games": await store.games(),
    }


async def test_a_bad_row_in_the_middle_is_named_and_nothing_is_stored(
    tmp_path: Path, start_station: Any
) -> None:
    station: Station = await start_station(station_config(tmp_path), connect=False)
    assert station.store is not None
    await station.import_pairings(EARLIER, send=False)
    before = await _everything(station.store)
    rows = [f"7,{b},红{b},黑{b}" for b in range(1, 6)] + ["8,1,甲,乙", "8,2 号,丙,丁", "8,3,戊,己"]
    body = ("round,board,red,black\n" + "\n".join(rows) + "\n").encode()
    async with httpx.AsyncClient(base_url=station.http_url, timeout=30) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        csrf = {"X-CSRF-Token": r.json()["csrf"]}
        r = await client.post("/api/pairings?send=0", content=body, headers=csrf)
    assert r.status_code == 400, r.text
    assert r.json()["where"] == "line 8" and "board '2 号'" in r.json()["error"]
    assert await _everything(station.store) == before


async def _refuse_one_row(store: Store) -> None:
    """A trigger of the database itself refusing board ``REFUSED_BOARD`` of round 8."""
    if store.dialect == "sqlite":
        ddl = [
            "CREATE TRIGGER refuse_one BEFORE INSERT ON pairings "
            f"WHEN NEW.round = 8 AND NEW.board = '{REFUSED_BOARD}' "
            "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
        ]
    else:
        ddl = [
            "CREATE FUNCTION refuse_one() RETURNS trigger AS $$ BEGIN "
            f"IF NEW.round = 8 AND NEW.board = '{REFUSED_BOARD}' THEN "
            "RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER refuse_one BEFORE INSERT ON pairings "
            "FOR EACH ROW EXECUTE FUNCTION refuse_one()",
        ]
    async with store.engine.begin() as conn:
        for statement in ddl:
            await conn.execute(sa.text(statement))


async def test_a_row_the_store_refuses_midway_leaves_the_store_as_it_was(
    db_url: str, tmp_path: Path, start_station: Any
) -> None:
    config = station_config(tmp_path, database_url=db_url)
    station: Station = await start_station(config, connect=False, serve_http=False)
    assert station.store is not None
    await station.import_pairings(EARLIER, send=False)
    before = await _everything(station.store)
    await _refuse_one_row(station.store)
    many = 2 * IMPORT_CHUNK + 200  # round 7 alone spans three of the old chunks
    rows = [f"7,b{i},红{i},黑{i}" for i in range(many)]
    rows += [f"8,b{i},甲{i},乙{i}" for i in range(800)]  # b700 is refused by the store
    with pytest.raises(sa.exc.DBAPIError, match="refused by the test"):
        await station.import_pairings("round,board,red,black\n" + "\n".join(rows), send=False)
    assert await _everything(station.store) == before
    # and the same file without the refused row goes in whole
    await station.import_pairings(
        "round,board,red,black\n"
        + "\n".join(r for r in rows if r != f"8,{REFUSED_BOARD},甲700,乙700"),
        send=False,
    )
    after = await _everything(station.store)
    assert len(after["pairings"]) == many + 799
    assert {r["round"] for r in after["rounds"]} == {7, 8}
