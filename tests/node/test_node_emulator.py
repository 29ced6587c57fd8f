"""A whole game on a node whose face is the serial clock emulator (the real byte protocol)."""

from __future__ import annotations

import asyncio

import pytest
from support.node import Probe, node_config, running_node

from clock_service import Side
from firmware_bridge.serial.emulator import ClockEmulator
from firmware_bridge.serial.face import SerialClockFace

pytestmark = pytest.mark.broker


async def test_a_game_played_on_the_emulated_serial_clock(venue_broker, tmp_path):
    async with ClockEmulator() as emulator:
        url = await emulator.listen("socket://127.0.0.1:0")
        face = SerialClockFace(url)
        config = node_config(venue_broker, "node-c", ["5"], tmp_path)
        async with Probe(venue_broker) as probe, running_node(config, {"5": face}):
            await emulator.wait_connected()
            await probe.command("5", "set_game", {"game": "r1-b5", "tc": "35m+5s"})
            await probe.command("5", "start")
            await probe.wait_for(lambda: probe.board_events("5", "started"))
            # what the host shows reaches the device
            await emulator.wait_until(
                lambda: emulator.shown is not None and emulator.shown.running is Side.RED
            )
            for _ in range(4):
                await emulator.press(Side.RED)
                await probe.wait_for(lambda: probe.states["5"]["running"] == "black")
                await emulator.press(Side.BLACK)
                await probe.wait_for(lambda: probe.states["5"]["running"] == "red")
            await probe.wait_for(lambda: len(probe.board_events("5", "move")) == 8)
            await emulator.pause_key()
            await probe.wait_for(lambda: probe.board_events("5", "foul"))
            await emulator.power_off()
            await probe.wait_for(lambda: probe.board_events("5", "shutdown"))
            moves = probe.board_events("5", "move")
            assert [(m["data"]["side"], m["data"]["move"]) for m in moves] == [
                (s, n) for n in range(1, 5) for s in ("red", "black")
            ]
            assert all(m["data"]["used_ms"] >= 0 for m in moves)
            state = probe.states["5"]
            assert state["moves"] == {"red": 4, "black": 4} and state["phase"] == "paused"
            # 35 min + 4 increments of 5 s, less what black used on its moves (black is not
            # on move, so nothing else ran for it)
            used_black = sum(m["data"]["used_ms"] for m in moves if m["data"]["side"] == "black")
            assert abs(state["black_ms"] - (35 * 60_000 + 4 * 5_000 - used_black)) <= 1
            await emulator.wait_until(
                lambda: emulator.shown is not None and emulator.shown.text == "OFF"
            )
            await asyncio.sleep(0)
