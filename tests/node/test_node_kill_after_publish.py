"""A real `qizhong node` killed right after a publish: whatever reached MQTT is in its journal.

The journal writes off the event loop (a writer thread, batched commits), and the link sends
only what the writer has committed. Four boards played fast by simulated players; the node is
SIGKILLed the moment the subscriber holds an event, three times over. After each kill the
journal (read directly) holds every event the subscriber received, with the same payload, and
the restarted node goes on after the last of them: no published seq is given out again.
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from support.node import (
    Probe,
    journaled_events,
    node_config,
    start_node_process,
    write_node_toml,
)

pytestmark = [pytest.mark.broker, pytest.mark.slow]

BOARDS = ["5", "6", "7", "8"]


def _same(published: dict, journaled: dict) -> bool:
    return {**published, "replay": None} == {**journaled, "replay": None}


async def test_a_node_killed_after_a_publish_has_the_event_in_its_journal(broker_factory, tmp_path):
    broker = broker_factory()
    config = node_config(
        broker, "node-c", BOARDS, tmp_path / "data", mode="random", mean_move_s=0.15, seed=7
    )
    toml = write_node_toml(config, tmp_path / "node.toml")
    path = config.data_dir / "journal.sqlite3"
    proc = start_node_process(toml)
    try:
        async with Probe(broker) as probe:
            await probe.wait_for(
                lambda: all(probe.status.get(b, {}).get("state") == "online" for b in BOARDS), 15
            )
            for b in BOARDS:
                assert (await probe.command(b, "set_game", {"game": f"g{b}", "tc": "30m+5s"}))["ok"]
                assert (await probe.command(b, "start"))["ok"]
            for kill in range(3):
                seen = len(probe.events)
                await probe.wait_for(lambda seen=seen: len(probe.events) >= seen + 25, 20)
                os.kill(proc.pid, signal.SIGKILL)  # right after the latest publish arrived
                proc.wait(10)
                await asyncio.sleep(0.5)  # whatever was still on its way arrives
                journaled = journaled_events(path)
                missing = [
                    (e["board"], e["seq"])
                    for e in probe.events
                    if (e["board"], e["seq"]) not in journaled
                    or not _same(e, journaled[(e["board"], e["seq"])])
                ]
                assert not missing, f"kill {kill}: published but not in the journal: {missing}"
                last = {b: max(e["seq"] for e in probe.board_events(b)) for b in BOARDS}
                proc = start_node_process(toml)
                # the restarted node goes on after what it published: a shutdown, then on
                await probe.wait_for(
                    lambda last=last: all(
                        any(
                            (e["type"] == "shutdown" and e["seq"] == last[b] + 1)
                            or e["seq"] > last[b] + 1
                            for e in probe.board_events(b)
                        )
                        for b in BOARDS
                    ),
                    15,
                )
                for b in BOARDS:
                    assert (await probe.command(b, "resume"))["ok"]
            for b in BOARDS:
                seqs = sorted({e["seq"] for e in probe.board_events(b)})
                assert seqs == list(range(1, len(seqs) + 1)), f"board {b}: a gap or a reuse"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
