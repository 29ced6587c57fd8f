"""Rebuilding is not an attack (issue 28): a fresh station gets a long journal whole.

A real node on a real Mosquitto plays a long game (a few thousand journaled events) while a first
station is gone; a fresh station (its disk lost: an empty database) asks the board for a rebirth
from seq 1. Every journaled event is stored once, the flood gate drops nothing, no ``flood`` or
``gap`` alert is raised, and the time it took is printed (docs/operations.md quotes it).
"""

from __future__ import annotations

import asyncio
import time

import pytest
from support.node import Probe, node_config, running_node
from support.station import station_config

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

pytestmark = pytest.mark.broker

PRESSES = 2400


async def _wait(predicate, timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_a_fresh_station_rebuilds_a_long_journal_without_flood_or_drop(
    broker_factory, start_station, tmp_path
):
    broker = broker_factory()
    face = SimulatedFace(mode="idle")
    config = node_config(broker, "node-a", ["1"], tmp_path / "node")
    first = await start_station(station_config(tmp_path / "a", broker), serve_http=False)
    async with running_node(config, {"1": face}) as node:
        await _wait(lambda: "1" in first.ingest.boards, 10)
        assert (await first.send_command("1", "set_game", {"game": "r1-b1", "tc": "90m+30s"})).ok
        assert (await first.send_command("1", "start")).ok
        await first.stop()  # the station's laptop dies
        for i in range(PRESSES):
            face.press(Side.RED if i % 2 == 0 else Side.BLACK)
            if i % 200 == 0:
                await asyncio.sleep(0)  # let the node journal and publish as it goes
        # every press journaled (the face's queue and the journal's writer may still hold some
        # when the outbox is first empty: a CI run read 2 events), and all of it sent
        await _wait(
            lambda: len(node.journal.events_from("1", 1)) > PRESSES
            and node.journal.unsent_count("1") == 0,
            120,
        )
        journaled = node.journal.events_from("1", 1)
        assert len(journaled) >= PRESSES
        last = journaled[-1].seq
        # what the node handed its MQTT client has left it (the board's state comes last)
        async with Probe(broker) as probe:
            await probe.wait_for(lambda: probe.states.get("1", {}).get("seq") == last, 60)

        began = time.monotonic()
        fresh = await start_station(station_config(tmp_path / "b", broker), serve_http=False)
        link = node.links["1"]
        await _wait(lambda: link._replay is not None and not link._replay.done(), 30)
        # the replay has its own task: a command meanwhile is answered, not kept waiting ~2 s
        asked = time.monotonic()
        assert (await fresh.send_command("1", "pause")).ok
        answered_s = time.monotonic() - asked
        # the proof: answered while the replay still flows (before, the reply came after it)
        assert link._replay is not None and not link._replay.done(), answered_s
        # the pause is journaled after them: by the journal's writer thread, so its event may
        # still be on its way to the disk (held, in no outbox yet) when nothing is unsent
        await _wait(lambda: node.journal.unsent_count("1") == 0 and not node.journal.holds("1"), 30)
        last = node.journal.events_from("1", 1)[-1].seq
        seqs = fresh.ingest.seqs.get("1")
        await _wait(lambda: seqs.watermark == last and not seqs.has_gap, 120)
        await fresh.ingest.flush()
        took = time.monotonic() - began
        print(
            f"rebuilt {len(journaled)} journaled events in {took:.1f} s; a command during "
            f"the replay answered in {answered_s * 1000:.0f} ms"
        )

        stored = await fresh.store.game_events("r1-b1", ("move",))
        moves = [r for r in journaled if '"type":"move"' in r.payload.replace(" ", "")]
        assert len(stored) == len(moves) >= PRESSES - 1  # every move once
        assert fresh.metrics.bad_payloads["flood"] == 0
        assert fresh.ingest.flood.throttled() == []
        kinds = {a["kind"] for a in await fresh.store.alerts()}
        assert "flood" not in kinds and "gap" not in kinds, kinds
        assert fresh.metrics.rebirths_sent <= 2  # asked once, not over and over
        assert took < 30
