"""Issue 18's acceptance: two venues (two Mosquittos, two stations, simulated boards) and two
hubs against a 3-node NATS cluster; venue A's uplink is cut, a NATS node is killed, a hub is
killed — and the hub's archive holds every event of every board once, and every result equals
the venue's. What a killed NATS node took with it after acknowledging it to a bridge comes back
by the hub's mending (docs/federation.md "Mending"; before it, 1–296 events were lost one run
in three under load).

The truth is each node's own journal (every event it numbered) and each venue's station (what
the venue itself stored). The default run cuts the uplink for a few seconds;
``--federation-long`` runs the 60 s cut of the issue.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.nats import CuttableLink, HubProcess, NatsCentre, venue_users
from support.station import station_config

from broker_config import MosquittoProcess, Roster
from federation_hub.store import HubStore
from qizhong.simulation.sim import SimFleet
from venue_station.domain.station import Station

pytestmark = [pytest.mark.postgres, pytest.mark.broker, pytest.mark.slow]
Factory = Callable[..., MosquittoProcess]
NODES = {"n1": ["1", "2"], "n2": ["3", "4"]}


def truth(data_dir: Path, venue: str) -> tuple[set[tuple[str, str, int, int]], dict[Any, Any]]:
    keys: set[tuple[str, str, int, int]] = set()
    results: dict[tuple[str, str | None], dict[str, Any]] = {}
    for journal in sorted(data_dir.glob("*/journal.sqlite3")):
        db = sqlite3.connect(journal)
        rows = db.execute("SELECT payload FROM outbox ORDER BY board, seq").fetchall()
        db.close()
        for (payload,) in rows:
            ev = json.loads(payload)
            keys.add((venue, ev["board"], ev["session"], ev["seq"]))
            if ev["type"] == "result":
                results[(ev["board"], ev["game"])] = {
                    "board": ev["board"],
                    "game": ev["game"],
                    "seq": ev["seq"],
                    **ev["data"],
                }
    return keys, results


def facts(result: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(result.get(k) for k in ("board", "game", "seq", "winner", "reason", "status"))


async def station_truth(station: Station, venue: str) -> tuple[set[Any], dict[Any, Any]]:
    assert station.store is not None
    rows = await station.store.events(limit=10**7)
    keys = {(venue, r["board"], r["session"], r["seq"]) for r in rows}
    results = {
        (r["board"], r["game"]): {"board": r["board"], "game": r["game"], "seq": r["seq"],
                                  **r["data"]}
        for r in sorted(rows, key=lambda r: (r["board"], r["seq"]))
        if r["type"] == "result"
    }  # fmt: skip
    return keys, results


def cut_seconds(request: pytest.FixtureRequest) -> float:
    return 60.0 if request.config.getoption("--federation-long") else 6.0


async def test_two_venues_two_hubs_three_nodes_nothing_lost_or_doubled(
    broker_factory: Factory,
    hub_db: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    start_station: Callable[..., Any],
) -> None:
    centre = NatsCentre.start(nodes=3, venues=venue_users(["va", "vb"]))
    hubs: list[HubProcess] = []
    fleets: list[SimFleet] = []
    link = CuttableLink([n.mqtt_port for n in centre.nodes])
    try:
        hubs = [HubProcess(centre, hub_db, f"hub-{i}", replicas=3) for i in (1, 2)]
        for h in hubs:
            h.wait_ready()
        await link.restore()
        rosters = {
            "va": Roster.build(venue="va", nodes=NODES, federation={
                "urls": [f"mqtt://127.0.0.1:{link.port}"], "username": "venue-va",
                "password": "pw-va"}),
            "vb": Roster.build(venue="vb", nodes=NODES, federation={
                "urls": centre.mqtt_urls(), "username": "venue-vb", "password": "pw-vb"}),
        }  # fmt: skip
        stations: dict[str, Station] = {}
        for venue, roster in rosters.items():
            broker = broker_factory(roster)
            stations[venue] = await start_station(
                station_config(tmp_path / f"station-{venue}", broker, venue=venue)
            )
            fleet = SimFleet(roster, broker.files, tmp_path / venue, speed=40.0, mean_move_s=6.0)
            await fleet.start()
            await fleet.wait_connected(20)
            await fleet.start_games(tc="6s")  # flags within the run: results to compare
            fleets.append(fleet)

        await asyncio.sleep(4)
        await link.cut()  # venue A's uplink down: its broker queues the bridge's messages
        await asyncio.sleep(cut_seconds(request))
        await link.restore()
        await asyncio.sleep(3)
        centre.kill(0)  # venue B's bridge was on node 1: it moves to another node
        await asyncio.sleep(4)
        dying = int(hubs[0].metrics()["stored"])  # what hub 1 has stored when it dies
        hubs[0].kill()  # hub 1 dies with whatever it fetched and had not acked
        await asyncio.sleep(6)
        for fleet in fleets:
            await fleet.stop()

        store = await HubStore.open(hub_db)
        try:
            want = set()
            for venue in rosters:
                keys, _ = truth(tmp_path / venue, venue)
                want |= keys
            deadline = time.monotonic() + 90
            got: list[tuple[str, str, int, int]] = []
            while time.monotonic() < deadline:
                got = await store.event_keys()
                if set(got) >= want:
                    break
                await asyncio.sleep(1)
            assert len(got) == len(set(got))  # never doubled (the key holds it)
            missing = sorted(want - set(got))
            if missing:  # where were they lost: before the venue's station, or beyond it?
                at_station: set[Any] = set()
                for venue in rosters:
                    at_station |= (await station_truth(stations[venue], venue))[0]
                seen = len(set(missing) & at_station)
                boards = sorted({m[:2] for m in missing})
                mending = {k: v for k, v in hubs[1].metrics().items() if "mend" in k}
                raise AssertionError(
                    f"{len(missing)} events lost at the hub ({seen} of them stored by their "
                    f"venue's station), boards {boards}, e.g. {missing[:5]}; the surviving "
                    f"hub's mending: {mending}"
                )
            assert set(got) == want  # nothing the venues did not number
            assert len(want) > 100
            assert await store.gaps() == []
            results_seen = 0
            for venue in rosters:
                _, results = truth(tmp_path / venue, venue)
                results_seen += len(results)
                hub_results = {(r["board"], r["game"]): r for r in await store.results(venue)}
                assert hub_results == results
                # The venue's own station: it stored the same events and the same results.
                station = stations[venue]
                assert station.ingest is not None
                async with asyncio.timeout(60):
                    while (await station_truth(station, venue))[0] < truth(tmp_path / venue, venue)[
                        0
                    ]:
                        await asyncio.sleep(0.5)
                at_venue, venue_results = await station_truth(station, venue)
                assert {k for k in got if k[0] == venue} == at_venue
                # The node's facts; the station adds its own verdicts (``unverified``: these
                # games were set by the simulator, not paired by the station).
                differ = {
                    k: (v, venue_results.get(k))
                    for k, v in hub_results.items()
                    if facts(v) != facts(venue_results.get(k) or {})
                }
                assert hub_results.keys() == venue_results.keys() and not differ, differ
            assert results_seen > 0  # games did end (flags), so results were compared
            # The survivor stored the rest: whatever the archive holds beyond what hub 1 can
            # have stored (its count read just before the kill, and up to two batches of 200
            # committed in that moment). When the games had all ended before the kill there is
            # no rest (a CI run: every game flagged, hub 1 had stored all): nothing to ask.
            survivor = hubs[1].metrics()
            if len(set(got)) > dying + 2 * 200:
                assert survivor["stored"] > 0, (len(set(got)), dying, survivor)
        finally:
            await store.close()
    finally:
        for fleet in fleets:
            if fleet._tasks:
                await fleet.stop()
        await link.cut()
        for h in hubs:
            h.close()
        centre.close()
