"""A clean stop sends what the node journaled before it says ``offline``.

``systemctl stop`` (SIGTERM) on a node whose boards are being played: every event in its
journal reaches the broker before the node ends, so the station holds the whole game without
waiting for the node's next start (a node put away after the round may never start again that
day). Found by the station-faults chaos check in CI: a move journaled in the node's last
moments stayed unsent in the journal, and the store never held it.

A real ``qizhong node`` process, four boards played fast by simulated players (a press every
~20 ms a board), stopped with SIGTERM three times mid-play: each time it ends with code 0,
every event its journal holds was published (a subscriber has each, the same payload), each
board's last retained state names the board's last journaled seq, and its status is
``offline``; the events it journals after a restart go on from there.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess

import pytest
from support.node import (
    Probe,
    journaled_events,
    node_config,
    start_node_process,
    write_node_toml,
)

pytestmark = [pytest.mark.broker, pytest.mark.slow]

BOARDS = ["9", "10", "11", "12"]


async def test_a_clean_stop_mid_play_publishes_every_journaled_event(broker_factory, tmp_path):
    broker = broker_factory()
    config = node_config(
        broker, "node-c", BOARDS, tmp_path / "data", mode="random", mean_move_s=0.02, seed=11
    )
    toml = write_node_toml(config, tmp_path / "node.toml")
    path = config.data_dir / "journal.sqlite3"
    proc = start_node_process(toml, stderr=subprocess.PIPE)
    try:
        async with Probe(broker) as probe:
            await probe.wait_for(
                lambda: all(probe.status.get(b, {}).get("state") == "online" for b in BOARDS), 15
            )
            for b in BOARDS:
                assert (await probe.command(b, "set_game", {"game": f"g{b}", "tc": "30m+5s"}))["ok"]
                assert (await probe.command(b, "start"))["ok"]
            for stop in range(3):
                seen = len(probe.events)
                await probe.wait_for(lambda seen=seen: len(probe.events) >= seen + 60, 20)
                proc.send_signal(signal.SIGTERM)  # mid-play: presses keep coming until it ends
                _, err = await asyncio.to_thread(proc.communicate, None, 15)
                assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
                await probe.wait_for(
                    lambda: all(probe.status[b]["state"] == "offline" for b in BOARDS), 5
                )
                journaled = journaled_events(path)
                published = {(e["board"], e["seq"]): e for e in probe.events}
                unsent = sorted(set(journaled) - set(published))
                assert not unsent, f"stop {stop}: journaled, never published: {unsent[:10]}"
                for key, event in published.items():
                    assert {**event, "replay": None} == {**journaled[key], "replay": None}, key
                for b in BOARDS:
                    last = max(seq for board, seq in journaled if board == b)
                    assert probe.states[b]["seq"] == last, (stop, b, probe.states[b], last)
                proc = start_node_process(toml, stderr=subprocess.PIPE)
                await probe.wait_for(
                    lambda: all(probe.status[b]["state"] == "online" for b in BOARDS), 15
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
