"""A node that ends on an error says ``lost`` itself (issue 28).

Its MQTT library closes the connection politely on the way out (a clean DISCONNECT), so the
broker drops the will: the station used to show its boards online and running for as long as
anyone watched (40 s+ measured). A real node on a real Mosquitto whose checkpoint task fails
(what a full SD card did before the journal held its writes): every board's retained status
says ``lost`` within a second of the failure, carrying its connection's ``conn``; a clean
stop still says ``offline`` and nothing after it.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from support.node import Probe, node_config

from board_nodes.node import Node

pytestmark = [pytest.mark.broker]


async def test_a_node_ending_on_an_error_says_lost_before_its_clean_disconnect(
    venue_broker, tmp_path
):
    config = node_config(venue_broker, "node-a", ["1", "2"], tmp_path / "node")
    async with Probe(venue_broker) as probe:
        node = Node(config)
        task = asyncio.create_task(node.run())
        await probe.wait_for(
            lambda: all(probe.status.get(b, {}).get("state") == "online" for b in ("1", "2"))
        )
        conns = {b: probe.status[b]["conn"] for b in ("1", "2")}

        def broken(*args: object) -> None:
            raise RuntimeError("injected: the checkpoint write failed")

        node.journal.checkpoints = broken  # type: ignore[method-assign]
        failed = asyncio.get_running_loop().time()
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(10):
                await task
        assert task.done()
        await probe.wait_for(
            lambda: all(probe.status[b]["state"] == "lost" for b in ("1", "2")), timeout=3
        )
        assert asyncio.get_running_loop().time() - failed < config.checkpoint_s + 1.5
        assert {b: probe.status[b]["conn"] for b in ("1", "2")} == conns


async def test_a_clean_stop_says_offline_and_nothing_after(venue_broker, tmp_path):
    config = node_config(venue_broker, "node-b", ["3"], tmp_path / "node")
    async with Probe(venue_broker) as probe:
        node = Node(config)
        task = asyncio.create_task(node.run())
        await probe.wait_for(lambda: probe.status.get("3", {}).get("state") == "online")
        seen: list[str] = []
        node.stop()
        async with asyncio.timeout(10):
            await task
        await probe.wait_for(lambda: probe.status["3"]["state"] == "offline")
        await asyncio.sleep(0.5)
        seen.append(probe.status["3"]["state"])
        assert seen == ["offline"]
