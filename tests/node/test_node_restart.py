"""The node as a real process: SIGKILL mid-game and restart, clean stop, the will."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest
from support.node import Probe, node_config, write_node_toml

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _start(toml) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "qizhong", "node", "--config", str(toml), "--log-level", "WARNING"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _remaining_now(state: dict, side: str) -> int:
    """What a display shows for ``side`` now, extrapolated from the retained state."""
    ms = state[f"{side}_ms"]
    if state["running"] == side:
        ms -= time.time_ns() // 1_000_000 - state["ts"]
    return ms


async def test_sigkill_mid_game_restores_times_and_reports_the_outage(broker_factory, tmp_path):
    broker = broker_factory()
    config = node_config(broker, "node-a", ["1"], tmp_path / "data", mode="idle")
    toml = write_node_toml(config, tmp_path / "node.toml")
    proc = _start(toml)
    try:
        async with Probe(broker) as probe:
            await probe.wait_for(lambda: probe.status.get("1", {}).get("state") == "online", 15)
            await probe.command("1", "set_game", {"game": "g", "tc": "30m+5s"})
            await probe.command("1", "start")
            await probe.wait_for(lambda: probe.states.get("1", {}).get("phase") == "running")
            await asyncio.sleep(1.5)  # red's time runs; checkpoints are written each second
            red_at_kill = _remaining_now(probe.states["1"], "red")
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            await probe.wait_for(lambda: probe.status["1"]["state"] == "lost", 10)
            last_seq = max(e["seq"] for e in probe.board_events("1"))
            session = probe.status["1"]["session"]
            await asyncio.sleep(0.5)
            proc = _start(toml)
            await probe.wait_for(lambda: probe.board_events("1", "shutdown"), 15)
            await probe.wait_for(lambda: probe.states["1"]["session"] == session + 1)
            shutdown = probe.board_events("1", "shutdown")[0]
            assert shutdown["seq"] == last_seq + 1
            assert shutdown["session"] == session + 1
            assert shutdown["data"]["cause"] == "node_restart"
            assert 500 <= shutdown["data"]["duration_ms"] < 10_000
            state = probe.states["1"]
            assert state["phase"] == "paused" and state["running"] is None
            # times as of the last checkpoint: at most 1 s of red's time is given back
            assert 0 <= state["red_ms"] - red_at_kill <= 1_000
            assert state["black_ms"] == 30 * 60_000
            assert (await probe.command("1", "resume"))["ok"]
            await probe.wait_for(lambda: probe.board_events("1", "resumed"))
            assert probe.board_events("1", "resumed")[0]["seq"] == last_seq + 2
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
    async with Probe(broker) as probe:
        await probe.wait_for(lambda: "1" in probe.status)
        assert probe.status["1"]["state"] == "offline"
    assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else ""


async def test_a_flag_pending_at_a_power_cut_is_ruled_after_the_restart(broker_factory, tmp_path):
    """Red's flag falls, the arbiter has not ruled yet, the Pi loses power: once it is back the
    arbiter's 确认 of that flag still decides the game (the proposal's seq was not in the
    checkpoint journaled with it, so the restarted node no longer knew it: not_a_proposal)."""
    broker = broker_factory()
    config = node_config(broker, "node-a", ["1"], tmp_path / "data", mode="idle")
    toml = write_node_toml(config, tmp_path / "node.toml")
    proc = _start(toml)
    try:
        async with Probe(broker) as probe:
            await probe.wait_for(lambda: probe.status.get("1", {}).get("state") == "online", 15)
            await probe.command("1", "set_game", {"game": "g", "tc": "2s+0s"})
            await probe.command("1", "start")

            def proposed() -> list[dict]:
                return [e for e in probe.board_events("1", "result") if "ref" not in e["data"]]

            await probe.wait_for(lambda: proposed(), 15)
            proposal = proposed()[0]
            assert proposal["data"]["status"] == "pending"
            assert proposal["data"]["winner"] == "black"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
            await probe.wait_for(lambda: probe.status["1"]["state"] == "lost", 10)
            session = probe.status["1"]["session"]
            proc = _start(toml)
            await probe.wait_for(lambda: probe.states["1"]["session"] == session + 1, 15)
            pending = probe.states["1"]["pending"]
            assert [p["seq"] for p in pending] == [proposal["seq"]]

            reply = await probe.command(
                "1", "resolve", {"seq": proposal["seq"], "status": "confirmed"}
            )
            assert reply["ok"], reply
            await probe.wait_for(
                lambda: any(e["data"].get("ref") == proposal["seq"]
                            for e in probe.board_events("1", "result")), 10,
            )  # fmt: skip
            ruled = [e for e in probe.board_events("1", "result") if e["data"].get("ref")]
            assert [e["data"]["status"] for e in ruled] == ["confirmed"]
            await probe.wait_for(lambda: probe.states["1"]["result"] is not None, 10)
            assert probe.states["1"]["result"]["winner"] == "black"
    finally:
        proc.kill()
        proc.wait(10)
