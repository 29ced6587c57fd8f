"""The store on SQLite and PostgreSQL: migrations, exactly-once inserts, version check."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from support.station import envelope

from venue_station.errors import StoreError
from venue_station.intake.ingest_writer import round_of
from venue_station.store import tables
from venue_station.store.database import Store


def _row(board: str, seq: int, session: int = 1) -> dict:
    ev = envelope(board, seq, session=session)
    return {
        "board": board,
        "session": session,
        "seq": seq,
        "node": ev["node"],
        "game": ev["game"],
        "round": round_of(ev["game"]),
        "ts": ev["ts"],
        "type": ev["type"],
        "replay": False,
        "red_ms": 1,
        "black_ms": 2,
        "running": None,
        "data": ev["data"],
        "received_ms": 3,
    }


async def test_migrated_schema_matches_the_tables(store: Store) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    def diff(conn: sa.Connection) -> list:
        return compare_metadata(MigrationContext.configure(conn), tables.metadata)

    async with store.engine.connect() as conn:
        assert await conn.run_sync(diff) == []
    assert await store.get_meta("schema_version") == tables.SCHEMA_VERSION


async def test_events_are_stored_once_whatever_the_duplicates(store: Store) -> None:
    first = await store.insert_events([_row("1", 1), _row("1", 2), _row("2", 1)])
    assert first == {("1", 1, 1), ("1", 1, 2), ("2", 1, 1)}
    again = await store.insert_events([_row("1", 2), _row("1", 3), _row("1", 1, session=2)])
    assert again == {("1", 1, 3), ("1", 2, 1)}
    assert await store.count_events() == 5
    assert await store.seqs_by_board() == {"1": [1, 1, 2, 3], "2": [1]}


async def test_the_unique_key_is_enforced_by_the_database(store: Store) -> None:
    await store.insert_events([_row("1", 1)])
    with pytest.raises(sa.exc.IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(sa.insert(tables.events).values(**_row("1", 1)))


async def test_event_queries_filter_and_page(store: Store) -> None:
    await store.insert_events([_row("1", s) for s in range(1, 8)] + [_row("2", 1)])
    page = await store.events(board="1", limit=3)
    assert [e["seq"] for e in page] == [1, 2, 3]
    nxt = await store.events(board="1", limit=3, after=page[-1]["id"])
    assert [e["seq"] for e in nxt] == [4, 5, 6]
    assert len(await store.events(round=1, limit=100)) == 8
    assert await store.events(round=2) == []
    assert [e["seq"] for e in await store.game_events("r1-b1")][:3] == [1, 1, 2]


async def test_station_session_counter_persists(db_url: str) -> None:
    s = await Store.open(db_url)
    assert await s.next_station_session() == 1
    await s.close()
    s = await Store.open(db_url)
    assert await s.next_station_session() == 2
    await s.close()


async def test_a_database_newer_than_the_code_is_refused(db_url: str) -> None:
    s = await Store.open(db_url)
    async with s.engine.begin() as conn:
        await conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    await s.close()
    with pytest.raises(StoreError, match="revision '9999', newer than this qizhong"):
        await Store.open(db_url)


async def test_rounds_games_alerts_and_commands(store: Store) -> None:
    await store.replace_round(
        1,
        "30m+5s",
        [
            {"board": "10", "red": "王天一", "black": "郑惟桐"},
            {"board": "2", "red": "许银川", "black": "吕钦"},
        ],
    )
    games = await store.games(1)
    assert [g["game"] for g in games] == ["r1-b2", "r1-b10"]  # boards sort as numbers
    await store.set_game_result("r1-b2", "red", "1-0", "flag")
    await store.replace_round(1, "30m+5s", [{"board": "2", "red": "许银川", "black": "吕钦"}])
    assert (await store.game("r1-b2"))["result"] == "1-0"  # a re-import keeps the facts
    assert len(await store.pairings(1)) == 1
    alert = {
        "key": "k1",
        "kind": "flag",
        "board": "2",
        "game": None,
        "side": "red",
        "seq": 5,
        "ts": 1,
        "status": "open",
        "detail": {},
        "updated_ms": 1,
        "by": None,
    }
    first = await store.insert_alert(alert)
    assert first is not None and await store.insert_alert(alert) is None
    assert (await store.update_alert(first, status="acked", by="arb1"))["status"] == "acked"
    assert [a["id"] for a in await store.alerts(status="active")] == [first]
    await store.log_command(
        {
            "txn": "t1",
            "board": "2",
            "cmd": "pause",
            "args": {},
            "user": "arb1",
            "sent_ms": 1,
            "replies": None,
            "outcome": "sent",
        }
    )
    await store.finish_command("t1", outcome="ok", replies={"2": {"ok": True, "error": None}})
    assert (await store.commands())[0]["outcome"] == "ok"


async def test_board_rows_go_in_the_events_transaction(store: Store) -> None:
    """Issue 30: a batch's board rows (last_seq) commit with its events: one transaction."""
    seen: list[set] = []

    def boards(inserted: set) -> list[dict]:
        seen.append(set(inserted))
        return [{"board": b, "last_seq": max(s for bb, _, s in inserted if bb == b)}
                for b in {k[0] for k in inserted}]  # fmt: skip

    assert await store.insert_events([_row("1", 1), _row("1", 2)], boards=boards)
    assert seen == [{("1", 1, 1), ("1", 1, 2)}]  # given the keys inserted
    assert {r["board"]: r["last_seq"] for r in await store.boards()} == {"1": 2}
    # Every event a duplicate: the board rows are still written.
    assert (
        await store.insert_events([_row("1", 2)], boards=lambda _: [{"board": "1", "node": "n9"}])
        == set()
    )
    assert [(r["last_seq"], r["node"]) for r in await store.boards()] == [(2, "n9")]

    def bad(inserted: set) -> list[dict]:
        return [{"board": "1", "last_seq": None}]  # NOT NULL: the database refuses

    with pytest.raises(sa.exc.IntegrityError):
        await store.insert_events([_row("1", 3)], boards=bad)
    assert await store.count_events() == 2  # the events' insert rolled back with the boards'


def test_watermark_with_adds_nothing() -> None:
    from venue_station.intake.seqs import SeqTracker

    seqs = SeqTracker()
    assert seqs.watermark_with("1", [2, 1, 4]) == 2
    seqs.add("1", 1, 0.0)
    seqs.add("1", 3, 0.0)
    assert seqs.watermark_with("1", [2]) == 3
    assert seqs.watermark_with("1", [5]) == 1
    assert seqs.get("1").watermark == 1 and seqs.get("1").above == {3}  # unchanged


async def test_a_batch_waiting_on_a_lock_leaves_the_event_loop_free(tmp_path) -> None:
    """Issue 30: on SQLite a small batch is written on the loop only when SQLite takes it at
    once; another process holding the write lock (a backup, a tool) sends it to the store's
    writing thread, which waits (busy_timeout), never the event loop: every page, board and
    flag goes on meanwhile; the batch is stored after."""
    import asyncio
    import sqlite3
    import time

    store = await Store.open(f"sqlite:///{tmp_path / 'station.db'}")
    assert store.writes is not None
    await store.insert_events([_row("1", 1)])  # inline: nothing in the way
    assert (store.writes.inline_done, store.writes.inline_busy) == (1, 0)
    lock = sqlite3.connect(tmp_path / "station.db", isolation_level=None, check_same_thread=False)
    try:
        lock.execute("BEGIN IMMEDIATE")
        batch = asyncio.create_task(store.insert_events([_row("1", 2)]))
        loop = asyncio.get_running_loop()
        worst, started = 0.0, loop.time()
        while loop.time() - started < 0.8:  # the batch waits on the lock all this while
            before = time.monotonic()
            await asyncio.sleep(0.01)
            worst = max(worst, time.monotonic() - before)
        assert not batch.done()
        assert store.writes.inline_busy == 1  # tried on the loop, refused at once, to the thread
        lock.execute("COMMIT")
        assert await asyncio.wait_for(batch, 10) == {("1", 1, 2)}
    finally:
        lock.close()
        await store.close()
        await store.close()  # idempotent
    assert worst < 0.4, f"the loop stalled {worst * 1000:.0f} ms"


async def test_a_slow_write_on_the_loop_sends_the_next_ones_to_the_thread(tmp_path) -> None:
    """A write on the loop that took longer than INLINE_SLOW_S (a disk that makes even the
    page cache wait) is the last one there for INLINE_PAUSE_S; large batches never go there."""
    import threading
    import time

    from venue_station.store.sqlite_writes import INLINE_ROWS, INLINE_SLOW_S

    store = await Store.open(f"sqlite:///{tmp_path / 'station.db'}")
    writes = store.writes
    assert writes is not None
    where: list[str] = []

    def slow(conn: sa.Connection) -> None:
        where.append(threading.current_thread().name)
        time.sleep(INLINE_SLOW_S * 3)

    try:
        await writes.run(slow, rows=1)
        await writes.run(slow, rows=1)
        await writes.run(lambda conn: where.append(threading.current_thread().name), rows=1)
        await store.insert_events([_row("3", s) for s in range(1, INLINE_ROWS + 2)])
        assert where[0] == threading.main_thread().name
        assert all(name.startswith("qz-store-writes") for name in where[1:]), where
        assert writes.inline_slow == 1 and await store.count_events() == INLINE_ROWS + 1
    finally:
        await store.close()


async def test_what_a_batch_writes_reads_back_as_it_was(store: Store) -> None:
    """Issue 30: on SQLite the writer's batch is plain SQL (batch_writes.py), not SQLAlchemy's
    statements; what it writes reads back through SQLAlchemy exactly as given: JSON with
    Chinese and nesting, booleans, nulls; a batch with keys stored before and keys twice."""
    first = _row("7", 1)
    first["data"] = {"note": "红方擅停棋钟", "nested": {"list": [1, "二", None]}, "ok": True}
    first["running"] = None
    assert await store.insert_events([first, _row("7", 2)]) == {("7", 1, 1), ("7", 1, 2)}
    again = await store.insert_events(
        [_row("7", 2), _row("7", 3), _row("7", 3), _row("7", 1, session=2)],
        boards=lambda inserted: [
            {"board": "7", "last_seq": 3, "node": "pi-07",
             "status": {"state": "online", "note": "在线"}, "state": {"seq": 3, "x": [1, 2]}},
        ],
    )  # fmt: skip
    assert again == {("7", 1, 3), ("7", 2, 1)}
    rows = {(r["session"], r["seq"]): r for r in await store.events(board="7")}
    assert sorted(rows) == [(1, 1), (1, 2), (1, 3), (2, 1)]
    assert rows[(1, 1)]["data"] == first["data"] and rows[(1, 1)]["running"] is None
    assert rows[(1, 1)]["replay"] is False and rows[(1, 2)]["red_ms"] == 1
    (board,) = [b for b in await store.boards() if b["board"] == "7"]
    assert board["status"] == {"state": "online", "note": "在线"}
    assert board["state"] == {"seq": 3, "x": [1, 2]} and board["last_seq"] == 3
    await store.upsert_boards([{"board": "7", "last_seq": 4}])  # only the columns given
    (board,) = [b for b in await store.boards() if b["board"] == "7"]
    assert board["last_seq"] == 4 and board["node"] == "pi-07" and board["state"]["seq"] == 3
