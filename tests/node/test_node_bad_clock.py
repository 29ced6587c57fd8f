"""Issue 13, case 5: a node outlives its worst clock.

A board whose clock refuses the protocol version, or whose URL refuses the connection, is
published with a reason (a ``warning`` and the state's ``clock_fault``), retried every second,
and comes online when its clock does; the other boards never notice.
"""

from __future__ import annotations

import asyncio
import socket

import pytest
from support.node import Probe, node_config, running_node

from clock_service import Side
from firmware_bridge.serial.emulator import ClockEmulator
from firmware_bridge.serial.face import SerialClockFace
from firmware_bridge.serial.frames import PROTOCOL_VERSION

pytestmark = pytest.mark.broker


def faults(probe: Probe, board: str) -> list[dict]:
    return [
        e for e in probe.board_events(board, "warning")
        if e["data"]["reason"] == "clock_fault"
    ]  # fmt: skip


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_clock_refusing_the_version_does_not_stop_the_node(venue_broker, tmp_path):
    async with ClockEmulator() as emu:
        emu.hello_version = PROTOCOL_VERSION + 1
        url = await emu.listen()
        config = node_config(venue_broker, "node-c", ["5", "6"], tmp_path)
        faces = {"6": SerialClockFace(url)}
        async with Probe(venue_broker) as probe, running_node(config, faces) as node:
            await probe.wait_for(lambda: faults(probe, "6"), timeout=8)
            detail = faults(probe, "6")[0]["data"]["detail"]
            assert "version" in detail
            await probe.wait_for(lambda: probe.states.get("6", {}).get("clock_fault"))
            # the healthy board plays on
            reply = await probe.command("5", "set_game", {"game": "g1", "tc": "30m+5s"})
            assert reply["ok"]
            # the clock is repaired (reflashed): the board comes online by itself
            emu.hello_version = PROTOCOL_VERSION
            await probe.wait_for(
                lambda: "6" in probe.states and probe.states["6"].get("clock_fault") is None,
                timeout=8,
            )
            reply = await probe.command("6", "set_game", {"game": "g2", "tc": "30m+5s"})
            assert reply["ok"]
            await probe.command("6", "start")
            await emu.wait_connected()
            await probe.wait_for(lambda: probe.states["6"]["phase"] == "running")
            await emu.press(Side.RED)
            await probe.wait_for(lambda: probe.board_events("6", "move"))
            assert not node.boards["5"].face.closed


async def test_a_url_refusing_the_connection_is_retried_until_the_clock_is_there(
    venue_broker, tmp_path
):
    port = closed_port()
    url = f"socket://127.0.0.1:{port}"
    config = node_config(venue_broker, "node-c", ["7", "8"], tmp_path)
    faces = {"8": SerialClockFace(url)}
    async with Probe(venue_broker) as probe, running_node(config, faces):
        await probe.wait_for(lambda: faults(probe, "8"), timeout=8)
        assert str(port) in faults(probe, "8")[0]["data"]["detail"]
        await asyncio.sleep(2.5)  # retried every second: reported once, not per try
        assert len(faults(probe, "8")) == 1
        async with ClockEmulator() as emu:
            await emu.listen(url)
            await emu.wait_connected(timeout=8)
            await probe.wait_for(
                lambda: probe.states.get("8", {}).get("clock_fault", "x") is None, timeout=8
            )
