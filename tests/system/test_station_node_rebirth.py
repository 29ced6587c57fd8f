"""A real node and a real station: events lost on the way are found and replayed.

The station's second life uses a new MQTT session (as after a broker that lost its
persistence), so the events the node sent meanwhile never reach it; nothing after them shows
a seq gap — only the retained state's ``seq`` does. The station asks for a ``rebirth`` from the
first missing seq and the node replays from its journal.
"""

from __future__ import annotations

import asyncio

import pytest
from support.node import Probe, node_config, running_node
from support.station import station_config

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

pytestmark = pytest.mark.broker


async def _wait(predicate, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def test_trailing_events_lost_by_the_station_are_replayed(
    broker_factory, start_station, tmp_path
):
    broker = broker_factory()
    face = SimulatedFace(mode="idle")
    config = node_config(broker, "node-a", ["1"], tmp_path / "node")
    first = await start_station(station_config(tmp_path, broker))
    async with running_node(config, {"1": face}) as node:
        await _wait(lambda: "1" in first.ingest.boards)
        assert (await first.send_command("1", "set_game", {"game": "r1-b1", "tc": "30m+5s"})).ok
        assert (await first.send_command("1", "start")).ok
        face.press(Side.RED)
        face.press(Side.BLACK)
        await _wait(lambda: first.ingest.seqs.get("1").watermark == 4)
        await first.stop()
        face.press(Side.RED)
        face.press(Side.BLACK)
        await _wait(lambda: node.journal.unsent_count("1") == 0)
        # The station's account (one client id per account: only while no station runs); its
        # clean start also ends the station's queue, so the trailing events are truly lost.
        async with Probe(broker) as probe:
            await probe.wait_for(lambda: probe.states.get("1", {}).get("seq") == 6)

        second = await start_station(station_config(tmp_path, broker))
        seqs = second.ingest.seqs.get("1")
        await _wait(lambda: seqs.watermark == 6 and not seqs.has_gap)
        assert second.metrics.rebirths_sent >= 1
        assert node.links["1"].counters["events_replayed"] >= 2
        stored = await second.store.game_events("r1-b1", ("move",))
        assert len(stored) == 4
