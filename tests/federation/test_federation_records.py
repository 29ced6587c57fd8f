"""The hub's hot path (issue 18): an event validated straight from its payload text and stored
as that text by one multi-row INSERT — exactly once per (venue, board, session, seq), the count
of new rows exact, whatever PostgreSQL's ``json`` would refuse refused before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from support.station import envelope

from federation_hub.errors import RecordError
from federation_hub.records import EventRecord, parse_event
from federation_hub.store import HubStore, events

SUBJECT = "fed.qz.v1.va.board.{}.event"


def wire(board: str, seq: int, **kw: object) -> bytes:
    # Spaced unlike json.dumps' default: the stored text must be the venue's own, not a
    # re-encoding of it.
    return json.dumps(envelope(board, seq, **kw), separators=(",", ":")).encode()


def test_parse_event_keeps_the_payload_text_and_refuses_what_postgres_would() -> None:
    data = wire("3", 7)
    rec = parse_event(SUBJECT.format(3), data, "fed")
    assert rec.body == data.decode() and (rec.board, rec.seq) == ("3", 7)
    # Each of these must be a RecordError (counted, terminated), never a store failure that
    # would make JetStream redeliver the whole batch for ever.
    nan = data.replace(b'"used_ms":1007', b'"used_ms":NaN')
    assert nan != data
    bad = {
        "not JSON": b"{",
        "not UTF-8": b'{"v":1,"board":"\xff"}',
        "an array": b"[1,2]",
        "NaN": nan,
        "a lone surrogate": data.replace(b'"node":"node-a"', b'"node":"\\ud800"'),
        "trailing bytes": data + b"x",
    }
    for what, payload in bad.items():
        with pytest.raises(RecordError):
            parse_event(SUBJECT.format(3), payload, "fed")
            pytest.fail(f"{what} was accepted")


@pytest.mark.postgres
async def test_one_insert_stores_each_key_once_and_counts_exactly(hub_db: str) -> None:
    store = await HubStore.open(hub_db)
    try:
        first = [parse_event(SUBJECT.format(b), wire(b, s), "fed") for b in "12" for s in (1, 2)]
        # a redelivered message inside the same batch, and one built in code (a dict body)
        dup = parse_event(SUBJECT.format(1), wire("1", 1), "fed")
        obj = envelope("2", 3)
        made = EventRecord("va", "2", 1, 3, "move", obj["game"], obj["ts"], obj)
        assert await store.add_events([*first, dup, made]) == 5
        assert await store.add_events([*first, made]) == 0  # all known: a redelivered batch
        assert len(await store.event_keys()) == 5
        async with store.engine.connect() as conn:
            q = sa.select(events.c.body, sa.cast(events.c.body, sa.Text)).where(
                events.c.board == "1", events.c.seq == 2
            )
            body, text = (await conn.execute(q)).one()
        assert text == first[1].body  # byte for byte what the venue sent
        assert body == json.loads(first[1].body)
        assert await store.gaps() == []
    finally:
        await store.close()


@pytest.mark.postgres
async def test_a_lost_database_connection_is_a_store_error_and_the_next_batch_reconnects(
    hub_db: str,
) -> None:
    # The insert bypasses SQLAlchemy: its failure must still be one the hub retries (an
    # SQLAlchemyError, not asyncpg's own), and the dead connection must leave the pool.
    import asyncpg
    from sqlalchemy.exc import SQLAlchemyError
    from support.postgres import PG_ADMIN

    store = await HubStore.open(hub_db)
    try:
        assert await store.add_events([parse_event(SUBJECT.format(1), wire("1", 1), "fed")]) == 1
        admin = await asyncpg.connect(**PG_ADMIN)
        try:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                hub_db.rsplit("/", 1)[1],
            )
        finally:
            await admin.close()
        batch = [parse_event(SUBJECT.format(1), wire("1", 2), "fed")]
        with pytest.raises(SQLAlchemyError):
            await store.add_events(batch)
        assert await store.add_events(batch) == 1  # a fresh connection, not the dead one
    finally:
        await store.close()


async def test_sqlite_store_takes_a_payload_text_too(tmp_path: Path) -> None:
    store = await HubStore.open(f"sqlite:///{tmp_path / 'hub.db'}")
    try:
        rec = parse_event(SUBJECT.format(1), wire("1", 1), "fed")
        assert await store.add_events([rec, rec]) == 1
        async with store.engine.connect() as conn:
            (body,) = (await conn.execute(sa.select(events.c.body))).one()
        assert body == json.loads(rec.body)
    finally:
        await store.close()
