"""The records' store (录谱, migration 0004) on SQLite and PostgreSQL: a compare-and-set write
per ply with its edit, a conflict that stores nothing, the chief's consent, a round's records."""

from __future__ import annotations

import asyncio

import pytest

from clock_service.xiangqi import START_FEN
from venue_station.store.database import Store
from venue_station.store.records import RecordConflict


def _write(
    store: Store, moves: list[str], expect: int, by: str = "arb", game: str = "r1-b1"
) -> object:
    return store.record_rows.write_record(
        game=game, board=game.split("-b")[1], round=int(game[1]), start_fen=START_FEN,
        moves=moves, expect_ply=expect, action="add", move=moves[-1] if moves else None, by=by,
    )  # fmt: skip


async def test_a_record_is_written_ply_by_ply_and_a_stale_write_stores_nothing(
    store: Store,
) -> None:
    assert await store.record_rows.record("r1-b1") is None
    row = await _write(store, ["h2e2"], 0)
    assert row["moves"] == ["h2e2"] and row["ply"] == 1 and row["updated_by"] == "arb"
    await _write(store, ["h2e2", "h9g7"], 1)
    with pytest.raises(RecordConflict) as stale:
        await _write(store, ["h2e2", "b9c7"], 1, by="late")
    assert stale.value.found == 2
    with pytest.raises(RecordConflict):
        await _write(store, ["b2e2"], 0, by="late")  # a second first move
    stored = await store.record_rows.record("r1-b1")
    assert stored is not None and stored["moves"] == ["h2e2", "h9g7"]
    edits = await store.record_rows.record_edits("r1-b1")
    assert [(e["ply"], e["move"], e["by"]) for e in edits] == [
        (1, "h2e2", "arb"),
        (2, "h9g7", "arb"),
    ]


async def test_two_writers_of_one_ply_one_wins(store: Store) -> None:
    results = await asyncio.gather(
        _write(store, ["h2e2"], 0, by="a"), _write(store, ["b2e2"], 0, by="b"),
        return_exceptions=True,
    )  # fmt: skip
    assert sorted(type(r).__name__ for r in results) == ["RecordConflict", "dict"]
    assert len(await store.record_rows.record_edits("r1-b1")) == 1


async def test_consent_and_a_rounds_records(store: Store) -> None:
    row = await store.record_rows.set_record_consent(
        game="r1-b2", board="2", round=1, start_fen=START_FEN, by="chief"
    )
    assert row["consent_by"] == "chief" and row["moves"] == [] and row["consent_ms"]
    await _write(store, ["h2e2"], 0)
    await _write(store, ["h2e2"], 0, game="r2-b1")
    assert sorted(await store.record_rows.records(round=1)) == ["r1-b1", "r1-b2"]
    row = await store.record_rows.set_record_consent(
        game="r1-b2", board="2", round=1, start_fen=START_FEN, by="chief", consent=False
    )
    assert row["consent_by"] is None
    assert [e["action"] for e in await store.record_rows.record_edits("r1-b2")] == [
        "consent",
        "revoke",
    ]


def test_boards_belong_to_a_recorder_account_only(tmp_path: object) -> None:
    from pathlib import Path

    from support.station import station_config

    from venue_station.auth import hash_password
    from venue_station.errors import ConfigError

    pw = hash_password("x")
    ok = station_config(
        Path(str(tmp_path)),
        account=[{"username": "r", "password_hash": pw, "role": "recorder", "boards": ["1"]}],
    )
    assert ok.account[0].boards == ("1",)
    for bad in (
        {"username": "a", "password_hash": pw, "role": "arbiter", "boards": ["1"]},
        {"username": "r", "password_hash": pw, "role": "recorder", "boards": ["1/2"]},
    ):
        with pytest.raises((ConfigError, ValueError)):
            station_config(Path(str(tmp_path)), account=[bad])
