"""An alert reaches the pages as soon as its fact arrives, before the store has it, and is
never lost: the store is locked or failing (real SQLite: a write lock held by another
connection, a trigger that aborts the insert) and the alert still ends up stored, once,
under the id the pages were shown."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, envelope, station_config, wait_until

from venue_station.domain.station import Station


@pytest.fixture
async def station(tmp_path: Path, start_station) -> Station:
    return await start_station(station_config(tmp_path), connect=False)


def db_file(station: Station) -> str:
    return str(station.config.data_dir / "station.db")


def feed(station: Station, ev: dict[str, Any]) -> None:
    assert station.ingest is not None
    station.ingest.handle(f"qz/v1/test/board/{ev['board']}/event", json.dumps(ev).encode())


def alerts_on(queue: asyncio.Queue[str | None]) -> list[dict[str, Any]]:
    out = []
    while not queue.empty():
        text = queue.get_nowait()
        assert text is not None
        kind, data = text.split("\n")[:2]
        if kind == "event: alert":
            out.append(json.loads(data.removeprefix("data: "))["alert"])
    return out


async def test_the_alert_is_on_the_stream_while_the_store_is_locked(station: Station) -> None:
    assert station.ingest is not None and station.store is not None
    queue = station.hub.subscribe()
    blocker = sqlite3.connect(db_file(station), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the writer cannot commit until this ends
    try:
        feed(station, envelope("1", 1, type="flag", data={"side": "red"}))
        shown = alerts_on(queue)  # no await yet: the writer has not even started the batch
        assert [(a["kind"], a["board"], a["status"]) for a in shown] == [("flag", "1", "open")]
        await asyncio.sleep(0.3)
        assert await station.store.alerts() == [] and await station.store.count_events() == 0
        async with httpx.AsyncClient(base_url=station.http_url) as client:
            login = {"username": ARBITER, "password": ARBITER_PASSWORD}
            assert (await client.post("/api/auth/login", json=login)).status_code == 200
            listed = (await client.get("/api/alerts", params={"status": "active"})).json()
        assert [a["id"] for a in listed["alerts"]] == [shown[0]["id"]]
    finally:
        blocker.execute("COMMIT")
        blocker.close()
    await station.ingest.flush()
    stored = await station.store.alerts()
    assert [(a["id"], a["key"]) for a in stored] == [(shown[0]["id"], shown[0]["key"])]
    assert await station.store.count_events() == 1
    assert not station.ingest.alert_ledger.unstored()


@pytest.mark.allow_error_log
async def test_a_failing_store_loses_no_alert(station: Station) -> None:
    assert station.ingest is not None and station.store is not None
    queue = station.hub.subscribe()
    db = sqlite3.connect(db_file(station), isolation_level=None)
    db.execute(
        "CREATE TRIGGER no_alerts BEFORE INSERT ON alerts "
        "BEGIN SELECT RAISE(ABORT, 'the disk is full (test)'); END"
    )
    try:
        feed(station, envelope("1", 1, type="flag", data={"side": "black"}))
        shown = alerts_on(queue)
        assert len(shown) == 1
        # The writer fails and retries: the event is not stored without its alert.
        await wait_until(lambda: station.ingest is not None and station.ingest.pending() == 0)
        await asyncio.sleep(0.5)
        assert await station.store.count_events() == 0 and await station.store.alerts() == []
        assert station.ingest.alert_ledger.is_unstored(shown[0]["id"])
    finally:
        db.execute("DROP TRIGGER no_alerts")
        db.close()
    await asyncio.wait_for(station.ingest.flush(), 10)
    stored = await station.store.alerts()
    flags = [(a["id"], a["kind"], a["side"]) for a in stored if a["kind"] != "store_failing"]
    assert flags == [(shown[0]["id"], "flag", "black")]
    # the arbiter was told the store failed (issue 28): one alert for the spell, stored after
    assert [a["kind"] for a in stored].count("store_failing") == 1
    assert await station.store.count_events() == 1
    assert station.metrics.alerts_raised == 2


async def test_a_replay_after_a_restart_raises_nothing_and_ids_go_on(
    station: Station, start_station
) -> None:
    assert station.ingest is not None
    flag = envelope("1", 1, type="flag", data={"side": "red"})
    feed(station, flag)
    await station.ingest.flush()
    await station.stop()
    again = await start_station(station.config)
    assert again.ingest is not None and again.store is not None
    queue = again.hub.subscribe()
    feed(again, flag)  # the node replays it after the restart
    feed(again, envelope("2", 1, type="flag", data={"side": "black"}))
    assert [a["board"] for a in alerts_on(queue)] == ["2"]
    await again.ingest.flush()
    stored = await again.store.alerts()
    assert [(a["id"], a["board"]) for a in stored] == [(2, "2"), (1, "1")]


async def test_an_arbiter_can_rule_on_an_alert_not_yet_stored(station: Station) -> None:
    assert station.ingest is not None and station.store is not None
    queue = station.hub.subscribe()
    blocker = sqlite3.connect(db_file(station), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        login = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        csrf = login.json()["csrf"]
        feed(station, envelope("1", 1, type="flag", data={"side": "red"}))
        (shown,) = alerts_on(queue)
        ack = asyncio.create_task(
            client.post(
                f"/api/alerts/{shown['id']}",
                json={"action": "ack"},
                headers={"X-CSRF-Token": csrf},
            )
        )
        await asyncio.sleep(0.3)
        assert not ack.done()  # it waits for the store rather than answer 404
        blocker.execute("COMMIT")
        blocker.close()
        r = await ack
    assert r.status_code == 200, r.text
    assert (r.json()["alert"]["id"], r.json()["alert"]["status"]) == (shown["id"], "acked")
    assert (await station.store.alert(shown["id"]) or {})["status"] == "acked"


async def test_alerts_stored_with_the_stations_ids_keep_the_id_sequence_ahead(store) -> None:
    def row(key: str, **kw: Any) -> dict[str, Any]:
        base = {"key": key, "kind": "flag", "board": "1", "game": None, "side": "red", "seq": 1,
                "ts": 1, "status": "open", "detail": {}, "updated_ms": 1, "by": None}  # fmt: skip
        return {**base, **kw}

    assert await store.insert_events([], alerts=[row("a", id=1), row("b", id=7)]) == set()
    assert await store.insert_events([], alerts=[row("b", id=8)]) == set()  # known key: nothing
    assert await store.alert_index() == ({"a", "b"}, 7)
    assert await store.insert_alert(row("c")) == 8  # the database's own id comes after


FLAG = [envelope("1", 1, type="flag", data={"side": "red"})]
# A confirmed result answering a command this station never sent (its predecessor's disk
# lost): stored as a proposal, and an ``unverified_decision`` alert.
FOREIGN_DECISION = [
    envelope("1", 1, type="started", data={"side_on_move": "red"}),
    envelope(
        "1", 2, type="result", txn="st-of-a-station-gone",
        data={"winner": "red", "reason": "resignation", "status": "confirmed"},
    ),
]  # fmt: skip


@contextlib.contextmanager
def committed_during_its_read(
    station: Station, name: str, events: list[dict[str, Any]] = FLAG
) -> Iterator[dict[str, Any]]:
    """An alert (a flag's, by default) shown while the store is locked (yielded as shown);
    the store's read ``name`` then reads, and before it answers the writer commits the alert
    (the lock lets go): the read answers what was there before the commit."""
    assert station.ingest is not None and station.store is not None
    ingest, read = station.ingest, getattr(station.store, name)
    queue = station.hub.subscribe()
    blocker = sqlite3.connect(db_file(station), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")

    async def racing(*args: Any, **kw: Any) -> Any:
        answer = await read(*args, **kw)
        if blocker.in_transaction:
            blocker.execute("COMMIT")
            await ingest.flush()
            assert not ingest.alert_ledger.unstored()
        return answer

    try:
        for ev in events:
            feed(station, ev)
        (shown,) = alerts_on(queue)
        setattr(station.store, name, racing)
        yield shown
    finally:
        if blocker.in_transaction:
            blocker.execute("COMMIT")
        blocker.close()


async def login(client: httpx.AsyncClient) -> str:
    r = await client.post(
        "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
    )
    assert r.status_code == 200
    return str(r.json()["csrf"])


async def test_an_alert_stored_while_the_list_is_read_is_listed(station: Station) -> None:
    """A page (re)loading its alerts as the writer commits one: the alert is in the store's
    answer or among the unstored, never in neither (an early-draw warning went missing from
    /api/alerts so, under load)."""
    with committed_during_its_read(station, "alerts") as shown:
        async with httpx.AsyncClient(base_url=station.http_url) as client:
            await login(client)
            listed = (await client.get("/api/alerts")).json()["alerts"]
    assert [a["id"] for a in listed] == [shown["id"]]


async def test_an_alert_stored_while_a_ruling_looks_it_up_is_ruled(station: Station) -> None:
    """The arbiter's click as the writer commits the alert: ruled, not 404."""
    with committed_during_its_read(station, "alert") as shown:
        async with httpx.AsyncClient(base_url=station.http_url) as client:
            csrf = await login(client)
            r = await client.post(
                f"/api/alerts/{shown['id']}",
                json={"action": "ack"},
                headers={"X-CSRF-Token": csrf},
            )
    assert r.status_code == 200, r.text
    assert r.json()["alert"]["status"] == "acked"


async def test_an_unverified_decision_stored_while_it_is_counted_counts_once(
    station: Station,
) -> None:
    """The banner's count of decisions stored unverified, taken as the writer commits one:
    counted, once (read the store first and the unstored after, it was in neither)."""
    with committed_during_its_read(station, "open_alert_ids", FOREIGN_DECISION) as shown:
        assert shown["kind"] == "unverified_decision"
        await station.watch._count_unverified()
    assert station.watch.unverified == 1
    await station.watch._count_unverified()  # and once stored, still one
    assert station.watch.unverified == 1
