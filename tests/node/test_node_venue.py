"""Venue-wide commands, the station's rebirth, and the regulation at the board."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from support.node import Probe, node_config, running_node

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

pytestmark = pytest.mark.broker


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


async def test_the_round_starts_on_every_board_at_the_announced_time(venue_broker, tmp_path):
    faces = {b: SimulatedFace(mode="idle") for b in ("5", "6", "7")}
    config = node_config(venue_broker, "node-c", list(faces), tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, faces):
        for board in ("5", "6"):  # board 7 has no game this round
            await probe.command(board, "set_game", {"game": f"r1-b{board}", "tc": "30m+5s"})
        at = wall_ms() + 400
        txn = await probe.venue_command("start", {"at": at})
        await asyncio.sleep(0.1)
        assert not probe.board_events("5", "started")  # not before the announced time
        await probe.wait_for(lambda: all(probe.board_events(b, "started") for b in ("5", "6")))
        for board in ("5", "6"):
            started = probe.board_events(board, "started")[0]
            assert started["ts"] >= at
        assert probe.replies[txn]["txn"] == txn
        await probe.venue_command("pause")
        await probe.wait_for(lambda: all(probe.board_events(b, "paused") for b in ("5", "6")))
        assert {probe.board_events(b, "paused")[0]["data"]["by"] for b in ("5", "6")} == {"arbiter"}
        assert not probe.board_events("5", "foul")  # an arbiter's pause is no foul
        faces["5"].pause_key()  # a player cannot undo the arbiter's stop
        await asyncio.sleep(0.2)
        assert not probe.board_events("5", "resumed") and probe.states["5"]["phase"] == "paused"
        await probe.venue_command("resume")
        await probe.wait_for(lambda: all(probe.board_events(b, "resumed") for b in ("5", "6")))
        assert not probe.board_events("7")


async def test_a_side_absent_at_the_late_deadline_gets_a_pending_forfeit(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-c", ["8"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"8": face}):
        await probe.command("8", "set_game", {"game": "g", "tc": "30m+5s"})
        # the round was started 15 minutes (the profile's late minutes) less 0.3 s ago
        await probe.command("8", "start", {"at": wall_ms() - 15 * 60_000 + 300})
        await probe.wait_for(lambda: probe.board_events("8", "forfeit"), timeout=5)
        assert probe.board_events("8", "late")[0]["data"] == {"side": "red"}
        forfeit = probe.board_events("8", "forfeit")[0]["data"]
        assert forfeit == {"side": "red", "reason": "late", "status": "pending"}


async def test_station_online_brings_a_rebirth_and_rebirth_replays(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-c", ["9"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"9": face}):
        await probe.command("9", "set_game", {"game": "g", "tc": "30m+5s"})
        await probe.command("9", "start")
        face.press(Side.RED)
        await probe.wait_for(lambda: probe.board_events("9", "move"))
        status_ts = probe.status["9"]["ts"]
        await asyncio.sleep(0.01)
        station = {"state": "online", "session": 7, "ts": wall_ms()}
        topic = "qz/v1/test/station/status"
        await probe.client.publish(topic, json.dumps(station), qos=1, retain=True)
        try:
            await probe.wait_for(lambda: probe.status["9"]["ts"] > status_ts)
            count = len(probe.board_events("9"))
            reply = await probe.command("9", "rebirth", {"from_seq": 2})
            assert reply["ok"]
            await probe.wait_for(lambda: len(probe.board_events("9")) >= count + 2)
            replayed = probe.board_events("9")[count:]
            assert [e["seq"] for e in replayed] == [2, 3] and all(e["replay"] for e in replayed)
            assert [e["type"] for e in replayed] == ["started", "move"]
        finally:
            await probe.client.publish(topic, b"", qos=1, retain=True)


async def test_move_count_and_the_tiebreak_game(venue_broker, tmp_path):
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-c", ["10"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"10": face}):
        reply = await probe.command(
            "10", "set_game", {"game": "ko-1", "tc": "10m+3s", "tiebreak": True}
        )
        assert reply["ok"], reply
        await probe.command("10", "start")
        assert (await probe.command("10", "move_count", {"limit": 2}))["ok"]
        for side in [Side.RED, Side.BLACK] * 2:
            face.press(side)
            await asyncio.sleep(0.01)
        await probe.wait_for(lambda: len(probe.board_events("10", "move_count")) == 2)
        counts = [e["data"]["status"] for e in probe.board_events("10", "move_count")]
        assert counts == ["started", "reached"]
        await probe.command("10", "result", {"winner": None, "reason": "agreed"})
        await probe.wait_for(lambda: probe.board_events("10", "result"))
        result = probe.board_events("10", "result")[0]["data"]
        assert result["winner"] == "black" and result["reason"] == "draw_black_wins"
