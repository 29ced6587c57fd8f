"""A node whose board is a GPIO clock face on gpiozero's MockFactory pins."""

from __future__ import annotations

import asyncio

import pytest
from support.node import Probe, node_config, running_node

from board_nodes.config import BoardConfig
from board_nodes.faces import make_face
from firmware_bridge.gpio_face import GpioClockFace
from firmware_bridge.selftest import DEMO_WIRING

pytestmark = pytest.mark.broker


async def _tap(pin, hold_s: float = 0.03) -> None:
    pin.drive_low()  # pressed: buttons pull the line low
    await asyncio.sleep(hold_s)
    pin.drive_high()
    await asyncio.sleep(hold_s)


async def test_presses_on_the_pins_are_moves_and_the_leds_follow(
    venue_broker, tmp_path, mock_factory
):
    wiring = {**DEMO_WIRING, "display": {"driver": "none"}}
    face = make_face(BoardConfig(id="11", face="gpio", gpio=wiring), pin_factory=mock_factory)
    assert isinstance(face, GpioClockFace)
    config = node_config(venue_broker, "node-c", ["11"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"11": face}) as node:
        # claiming the sense pin reads it off; the clock face is then switched on
        mock_factory.pin(wiring["power_sense"]).drive_high()
        await asyncio.sleep(0.2)
        assert node.boards["11"].power_off_ns is None
        await probe.command("11", "set_game", {"game": "g", "tc": "30m+5s"})
        await probe.command("11", "start")
        await probe.wait_for(lambda: probe.states.get("11", {}).get("running") == "red")
        await asyncio.sleep(0.1)
        if wiring.get("red_led") is not None:
            assert mock_factory.pin(wiring["red_led"]).state
        await _tap(mock_factory.pin(wiring["red_button"]))
        await probe.wait_for(lambda: probe.board_events("11", "move"))
        await _tap(mock_factory.pin(wiring["black_button"]))
        await probe.wait_for(lambda: len(probe.board_events("11", "move")) == 2)
        assert [m["data"]["side"] for m in probe.board_events("11", "move")] == ["red", "black"]
        await _tap(mock_factory.pin(wiring["pause_key"]))
        await probe.wait_for(lambda: probe.board_events("11", "foul"))
        assert probe.board_events("11", "paused")[0]["data"]["by"] == "board"
        mock_factory.pin(wiring["power_sense"]).drive_low()  # switched off mid-game
        await probe.wait_for(lambda: probe.board_events("11", "shutdown"), timeout=5)
        assert probe.board_events("11", "shutdown")[0]["data"]["cause"] == "power_switch"
