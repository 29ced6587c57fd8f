"""``qizhong sim``: a fleet of simulated nodes in one process against a real broker."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.broker import mqtt_client

from broker_config import Roster
from qizhong.simulation.sim import SimFleet

pytestmark = pytest.mark.broker


async def test_a_fleet_plays_on_every_board_under_its_own_accounts(broker_factory, tmp_path):
    nodes = {f"sim-{n}": [f"{n}{b}" for b in "abcd"] for n in range(1, 6)}
    broker = broker_factory(Roster.build(venue="load", nodes=nodes))
    fleet = SimFleet(
        Roster.build(venue="load", nodes=nodes), broker.files, tmp_path,
        speed=200.0, mean_move_s=10.0,
    )  # fmt: skip
    moves: dict[str, int] = {}
    async with mqtt_client(broker, "station") as station:
        await station.subscribe("qz/v1/load/board/+/event", qos=1)
        await fleet.start()
        try:
            await fleet.wait_connected(20)
            await fleet.start_games()
            async with asyncio.timeout(20):
                async for message in station.messages:
                    event = json.loads(message.payload)
                    if event["type"] == "move":
                        moves[event["board"]] = moves.get(event["board"], 0) + 1
                    if len(moves) == 20 and min(moves.values()) >= 2:
                        break
        finally:
            await fleet.stop()
    assert fleet.boards == 20 and len(moves) == 20
    stats = fleet.stats()
    assert stats["events_sent"] >= 20 * 4 and stats["boards"] == 20


def test_unknown_nodes_are_refused(tmp_path, venue_broker):
    roster = Roster.build(venue="test", nodes={"node-a": ["1"]})
    with pytest.raises(ValueError, match="nodes not in the roster: ghost"):
        SimFleet(roster, venue_broker.files, tmp_path, nodes=["ghost"])
