"""The hub mends its archive: events the centre lost come back from the venue's station.

A NATS node killed with a bridge's acknowledged messages in flight loses them for the centre,
and the bridge never sends them again (the acceptance test lost 1–296 events so, one run in
three under load). Here the loss is made on purpose: a real venue Mosquitto from
``broker-config`` bridged to a real nats-server, a real station, a hub on PostgreSQL; the
station has stored every event of a board, the centre gets all but seven (two holes between
events and the tail its state names: what the dying node took). The hub finds the holes, asks
the venue on ``station/resend`` through the bridge, the station answers with its stored copies,
and the archive is whole again — each event once, as valid wire events. What nobody asked for
is never sent: a node's account cannot put an ask on the station's topic, a copy past the
board's own seq is refused by the hub, and a bad ask from the centre is refused and counted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from support.broker import STANDARD_NODES, mqtt_client
from support.nats import HUB_USER, NatsCentre, small_plan
from support.station import envelope, station_config

from broker_config import MosquittoProcess, Roster
from federation_hub.consumer import HubConsumer
from federation_hub.store import HubStore, events
from wire_contract.messages import EventEnvelope

pytestmark = [pytest.mark.postgres, pytest.mark.broker, pytest.mark.slow]
Factory = Callable[..., MosquittoProcess]
R = "qz/v1/va"
GAME = "r1-b1"


async def until(predicate: Callable[[], Any], timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not await predicate():
            await asyncio.sleep(0.1)


async def _counted(n: int) -> bool:
    return n > 0


async def test_events_the_centre_lost_come_back_from_the_venue(
    broker_factory: Factory, tmp_path: Path, hub_db: str, start_station: Any
) -> None:
    centre = NatsCentre.start(nodes=1, venues={"va": ("venue-va", "pw-va")})
    store = await HubStore.open(hub_db)
    hub = HubConsumer(
        servers=centre.urls, user=HUB_USER[0], password=HUB_USER[1], store=store,
        plan=small_plan(), batch=50, mend_every_s=0.5,
    )  # fmt: skip
    hub_task = asyncio.create_task(hub.run())
    try:
        await asyncio.wait_for(hub.ready.wait(), 20)
        user, password = centre.users.venues["va"]
        roster = Roster.build(
            venue="va",
            nodes=STANDARD_NODES,
            federation={"urls": centre.mqtt_urls(), "username": user, "password": password},
        )
        venue = broker_factory(roster)
        station = await start_station(station_config(tmp_path, venue, venue="va"))
        await station.import_pairings("round,board,red,black\n1,1,张三,李四\n", send=False)
        sent: dict[int, dict[str, Any]] = {}
        ready = {"game": GAME, "tc": "30m+5s", "red": "张三", "black": "李四"}
        sent[1] = envelope("1", 1, type="ready", data=ready, game=GAME)
        for seq in range(2, 31):
            sent[seq] = envelope("1", seq, game=GAME)
        # What a dying centre node took with it: the venue's station stored these (here they
        # reach its intake as a message from the broker does), the centre never sees them.
        lost = {3, 4, 5, 17, 22, 23, 30}  # two holes between stored events, and the tail
        for seq in sorted(lost):
            station.ingest.handle(f"{R}/board/1/event", json.dumps(sent[seq]).encode())

        async def hub_has(seqs: set[int]) -> bool:
            keys = await store.event_keys()
            return {k[3] for k in keys if k[:2] == ("va", "1")} >= seqs

        async def station_has(seqs: set[int]) -> bool:
            rows = await station.require_store().board_events("1", 1, 30)
            return {r["seq"] for r in rows} >= seqs

        await until(lambda: station_has(lost))
        async with mqtt_client(venue, "node-a") as node:
            for seq, ev in sent.items():
                if seq not in lost:
                    await node.publish(f"{R}/board/1/event", json.dumps(ev).encode(), qos=1)
            state = {
                "v": 1, "board": "1", "node": "node-a", "session": 1, "seq": 30,
                "ts": sent[30]["ts"], "game": GAME, "tc": "30m+5s", "phase": "running",
                "running": "red", "red_ms": 1_800_000, "black_ms": 1_800_000,
                "moves": {"red": 15, "black": 14}, "flag": None, "fouls": {"red": 0, "black": 0},
            }  # fmt: skip
            await node.publish(f"{R}/board/1/state", json.dumps(state).encode(), qos=1)
            # A node's account cannot ask the station for anything (the broker's ACL).
            forged = {"v": 1, "board": "1", "from_seq": 1, "to_seq": 30, "ts": 1}
            await node.publish(f"{R}/station/resend", json.dumps(forged).encode(), qos=1)

            await until(lambda: hub_has(set(sent) - lost))
            await until(lambda: hub_has(set(sent)), timeout=30)

        # The station's copies fill holes only: one past what the board numbered (its state
        # says 30) is refused by the hub, though the station's account may send it.
        future = envelope("1", 31, game=GAME, replay=True)
        async with mqtt_client(venue, "station") as as_station:
            await as_station.publish(
                f"{R}/resent/board/1/event", json.dumps(future).encode(), qos=1
            )
        await until(lambda: _counted(hub.counters.bad.get("resent_unnumbered", 0)), timeout=15)

        keys = await store.event_keys()
        assert len(keys) == len(set(keys)) == len(sent)  # each once
        assert await store.gaps() == []
        assert hub.counters.mend_asks >= 3 and hub.counters.mended == len(lost)
        resender = station.resender
        assert resender is not None
        # The station sent again only what the holes held (never all 30: the node's forged
        # ask, for seqs 1-30, never reached it), each hole's copies once or twice.
        assert resender.asks >= 2 and len(lost) <= resender.sent <= 2 * len(lost)
        async with store.engine.connect() as conn:
            rows = (
                await conn.execute(
                    sa.select(events.c.seq, events.c.body).where(events.c.seq.in_(lost))
                )
            ).all()
        assert len(rows) == len(lost)
        for seq, body in rows:  # the station's copy: a valid wire event, the node's facts
            copy = EventEnvelope.model_validate(body)
            assert copy.replay and copy.seq == seq and copy.data == sent[seq]["data"]
            assert (copy.ts, copy.clock.red_ms) == (sent[seq]["ts"], sent[seq]["clock"]["red_ms"])
    finally:
        hub_task.cancel()
        await asyncio.gather(hub_task, return_exceptions=True)
        await store.close()
        centre.close()


async def test_a_bad_ask_from_the_centre_is_refused_and_counted(
    broker_factory: Factory, tmp_path: Path, start_station: Any
) -> None:
    roster = Roster.build(venue="va", nodes=STANDARD_NODES)
    venue = broker_factory(roster)
    station = await start_station(station_config(tmp_path, venue, venue="va"))
    resender = station.resender
    assert resender is not None
    # The station account reads the topic as the bridge would deliver it; a hand-made
    # message on it (the station's own, here) stands for what the centre sent.
    for bad in (b"not json", b'{"v":1,"board":"1","from_seq":9,"to_seq":3,"ts":1}',
                b'{"v":1,"board":"1","from_seq":1,"to_seq":5000,"ts":1}'):  # fmt: skip
        station.ingest.handle(f"{R}/station/resend", bad)
    assert resender.refused == {"bad": 3} and resender.asks == 0
