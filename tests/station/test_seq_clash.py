"""A Pi replaced when the broker had lost what it retained (its persistence gone with a disk):
the new Pi cannot take the board over and numbers its events from session 1, seq 1 again —
numbers the station already holds for the dead Pi's events. They were dropped as duplicates,
counted and nothing else: the new Pi's game was lost without a word. Now an event whose key is
stored with another event (another time or type) is kept aside (``/api/set_aside``, nothing
lost), and one alert per board and session says the numbers clash; a true repeat (the same
event sent again: a replay) is still a quiet duplicate.

A real station and broker; the two Pis as ``FakeNode`` s with the board's own account.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.station import FakeNode, envelope, station_config, wait_until

pytestmark = [pytest.mark.broker]


async def test_a_new_pis_events_on_stored_numbers_are_kept_aside_and_alerted(
    broker_factory: Any, tmp_path: Path, start_station: Any
) -> None:
    broker = broker_factory()
    station = await start_station(station_config(tmp_path, broker), serve_http=False)
    store = station.require_store()
    async with FakeNode(broker, "node-a", ["1"]) as dead:
        await dead.emit("1", type="ready", data={"game": "r1-b1", "tc": "30m+5s"})
        first = await dead.emit("1", type="started", data={"side_on_move": "red"})
        await dead.emit("1", type="move", data={"side": "red", "used_ms": 4000, "move": 1})
        await wait_until(lambda: station.metrics.events_stored >= 3, 10, "the dead Pi's events")
        await dead.publish_event(first)  # a true repeat (a replay): a quiet duplicate
    async with FakeNode(broker, "node-a", ["1"]) as new:  # same account, session 1 again
        ready = {"game": "r1-b1", "tc": "30m+5s"}
        await new.emit("1", type="ready", data=ready, ts=first["ts"] + 60_000)
        await new.emit("1", type="started", data={"side_on_move": "red"}, ts=first["ts"] + 61_000)
        for _ in range(100):
            if len(await store.set_aside_rows()) >= 2:
                break
            await asyncio.sleep(0.05)
    await station.ingest.flush()
    aside = await store.set_aside_rows()
    assert len(aside) == 2, aside
    assert all(r["board"] == "1" and "seq clash" in r["reason"] for r in aside)
    kept = sorted((json.loads(r["item"])["event"] for r in aside), key=lambda e: e["seq"])
    assert [(e["seq"], e["type"]) for e in kept] == [(1, "ready"), (2, "started")]
    assert all(e["ts"] >= first["ts"] + 59_000 for e in kept)  # the new Pi's own, a minute on
    clash = [a for a in await store.alerts() if a["kind"] == "seq_clash"]
    assert len(clash) == 1 and clash[0]["board"] == "1", clash
    assert clash[0]["detail"]["session"] == 1 and clash[0]["detail"]["node"] == "node-a"
    # the dead Pi's events stand as they were stored; the repeat raised nothing
    stored = sorted((e["seq"], e["type"]) for e in await store.events(board="1"))
    assert stored == [(1, "ready"), (2, "started"), (3, "move")]


async def test_forged_clashes_fill_nothing_and_raise_one_alert(
    broker_factory: Any, tmp_path: Path, start_station: Any
) -> None:
    """Whoever holds a board's account may send events on its stored numbers again and again,
    under any node name: each clashing event is kept aside once, and one alert a board and
    session says so (a reviewer: the node's name was in the alert's key, and every resend
    was another row)."""
    broker = broker_factory()
    station = await start_station(station_config(tmp_path, broker), serve_http=False)
    store = station.require_store()
    async with FakeNode(broker, "node-a", ["1"]) as node:
        stored = await node.emit("1", type="started", data={"side_on_move": "red"})
        await wait_until(lambda: station.metrics.events_stored >= 1, 10, "the first event")
        forged = {**stored, "type": "move", "data": {"side": "red", "used_ms": 1, "move": 1}}
        for name in ("node-a", "node-x", "node-y", "node-a"):  # resent, and under other names
            await node.publish_event({**forged, "node": name})
        await wait_until(lambda: station.metrics.duplicates_dropped >= 4, 10, "the resends")
    await station.ingest.flush()
    assert len(await store.set_aside_rows()) == 1
    assert [a["kind"] for a in await store.alerts()] == ["seq_clash"]


async def test_two_events_on_one_number_in_one_batch_keep_the_second_aside(
    tmp_path: Path, start_station: Any
) -> None:
    """The dead Pi's event and the new Pi's on the same number arriving together (one write
    batch): the first is stored, the second was dropped as a duplicate inside the batch without
    a word (a reviewer). It is kept aside and alerted as a clash across batches is; the same
    event twice in one batch stays a quiet duplicate."""
    station = await start_station(station_config(tmp_path), connect=False)
    store = station.require_store()
    topic = "qz/v1/test/board/1/event"
    ts = envelope("1", 1)["ts"]
    first = envelope("1", 1, type="started", data={"side_on_move": "red"}, ts=ts)
    other = envelope("1", 1, ts=ts + 60_000)  # a move on the same number, a minute later
    assert station.ingest is not None
    for ev in (first, first, other):
        station.ingest.handle(topic, json.dumps(ev).encode())
    await station.ingest.flush()
    assert [(e["seq"], e["type"]) for e in await store.events(board="1")] == [(1, "started")]
    aside = await store.set_aside_rows()
    assert len(aside) == 1 and "seq clash" in aside[0]["reason"], aside
    assert json.loads(aside[0]["item"])["event"]["type"] == "move"
    assert [a["kind"] for a in await store.alerts()] == ["seq_clash"]
