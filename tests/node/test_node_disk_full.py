"""A Pi's SD card fills in the middle of a game: the clocks never stop (issue 28).

A real full filesystem (a small tmpfs holding the node's journal, filled to the last byte by
another file), a real node with simulated faces, a real Mosquitto. What the players and the
arbiter see, checked against the node's journal read directly once space returns:

- every press while the card is full is charged: the clocks run on, the face says DISK;
- the board's status says ``journal: failing`` within seconds (the station alerts on it);
- nothing reaches MQTT that is not on disk: no event of the full period is published before
  it is journaled (a restart could forget it);
- once space returns, every held event is journaled and published once, in seq order, and a
  ``warning journal_failed`` says how long the card refused.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

import pytest
from support.full_disk import fill, small_disk
from support.node import Probe, node_config, running_node

from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.allow_error_log]


def journaled_seqs(journal: Path, board: str) -> list[int]:
    db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        return [
            r[0] for r in db.execute("SELECT seq FROM outbox WHERE board=? ORDER BY seq", (board,))
        ]
    finally:
        db.close()


async def test_a_full_card_stops_no_clock_and_loses_no_press(venue_broker, tmp_path):
    with small_disk(tmp_path / "card") as card:
        faces = {b: SimulatedFace(mode="idle") for b in ("1", "2")}
        config = node_config(venue_broker, "node-a", ["1", "2"], card / "data")
        async with Probe(venue_broker) as probe, running_node(config, faces) as node:
            await probe.wait_for(lambda: probe.status.get("2", {}).get("state") == "online")
            for b in ("1", "2"):
                assert (await probe.command(b, "set_game", {"game": f"r1-b{b}", "tc": "30m+5s"}))[
                    "ok"
                ]
                assert (await probe.command(b, "start"))["ok"]
            for side in (Side.RED, Side.BLACK):
                faces["1"].press(side)
                await asyncio.sleep(0.02)
            await probe.wait_for(lambda: len(probe.board_events("1", "move")) == 2)
            before = max(e["seq"] for e in probe.board_events("1"))

            filler = fill(card)
            full_at = asyncio.get_running_loop().time()
            presses = [Side.RED, Side.BLACK, Side.RED, Side.BLACK]
            for side in presses:
                faces["1"].press(side)
                await asyncio.sleep(0.05)
            # the clock ran on: the core counted every press, black is on move after 3 each
            board = node.boards["1"]
            assert board.clock is not None
            assert (board.clock.moves(Side.RED), board.clock.moves(Side.BLACK)) == (3, 3)
            assert board.clock.running is Side.RED
            # the arbiter is told within 5 s: the status says the journal fails
            await probe.wait_for(
                lambda: probe.status.get("1", {}).get("journal") == "failing", timeout=5
            )
            assert asyncio.get_running_loop().time() - full_at < 5
            assert board.view().text == "DISK"
            # nothing of the full period reached MQTT: the last published seq is from before
            await asyncio.sleep(1.0)
            assert max(e["seq"] for e in probe.board_events("1")) == before
            assert node.journal.held >= len(presses)
            # the node is alive and board 2's clock runs too
            assert node.boards["2"].clock is not None and node.boards["2"].clock.running is Side.RED

            os.unlink(filler)  # the technician frees the card
            await probe.wait_for(lambda: len(probe.board_events("1", "move")) == 6, timeout=5)
            await probe.wait_for(
                lambda: any(
                    e["data"].get("reason") == "journal_failed"
                    for e in probe.board_events("1", "warning")
                ),
                timeout=5,
            )
            await probe.wait_for(lambda: "journal" not in probe.status.get("1", {}), timeout=5)
            events = probe.board_events("1")
            seqs = [e["seq"] for e in events]
            assert seqs == sorted(set(seqs)) == list(range(1, len(seqs) + 1))
            assert journaled_seqs(config.data_dir / "journal.sqlite3", "1") == seqs
            # the state naming the last seq follows the events (the recovery's warning had
            # its own commit): waited for, not read at the instant the status cleared
            await probe.wait_for(
                lambda: probe.states["1"]["moves"] == {"red": 3, "black": 3}, timeout=5
            )
