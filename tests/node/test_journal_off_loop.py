"""The journal writes off the event loop; an event still reaches MQTT only once it is on disk.

A slow disk (each durable commit made slow, or held shut, inside the journal's writer, just
before its COMMIT: where an SD card's fsync spends its 10–100 ms) against a real node with
simulated faces and a real Mosquitto:

- the flag is decided at its deadline, the presses are charged and the loop never stalls,
  however long the disk takes;
- nothing is published (events, nor the state that names their seq) before its commit is
  done, and nothing is on disk before either;
- the events of one board are published in seq order, written in batches (group commit).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import statistics
import threading
import time
from collections.abc import AsyncIterator

import pytest
from support.node import Probe, journaled_seqs, node_config, running_node

from board_nodes.journal import Journal
from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

pytestmark = [pytest.mark.broker, pytest.mark.slow]


class SlowDisk:
    """Called by the journal's writer inside each durable transaction, before its COMMIT."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.commits = 0
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self) -> None:
        self.commits += 1
        if not self.gate.wait(20):
            raise AssertionError("the test left the disk shut")
        time.sleep(self.delay_s)


@contextlib.asynccontextmanager
async def loop_lag() -> AsyncIterator[list[float]]:
    """The lateness (ms) of each tick of a 5 ms ticker on the node's loop while the block runs.

    The test process's garbage collector is held off meanwhile: a full collection of a pytest
    worker that has run hundreds of tests walks millions of objects (a pause of its own, not
    the node's, whose heap is small)."""
    lateness: list[float] = []

    async def tick() -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + 0.005
            await asyncio.sleep(0.005)
            lateness.append((loop.time() - due) * 1000)

    collecting = gc.isenabled()
    gc.disable()
    task = asyncio.create_task(tick())
    try:
        yield lateness
    finally:
        task.cancel()
        if collecting:
            gc.enable()


async def test_a_slow_disk_delays_neither_the_flag_nor_the_clock(venue_broker, tmp_path):
    disk = SlowDisk(0.1)  # 100 ms a commit: a slow SD card
    faces = {b: SimulatedFace(mode="idle") for b in ("1", "2")}
    config = node_config(venue_broker, "node-a", ["1", "2"], tmp_path)
    journal = Journal(config.data_dir / "journal.sqlite3", before_commit=disk)
    async with Probe(venue_broker) as probe, running_node(config, faces, journal=journal) as node:
        assert (await probe.command("1", "set_game", {"game": "g1", "tc": "1500ms"}))["ok"]
        assert (await probe.command("2", "set_game", {"game": "g2", "tc": "30m"}))["ok"]
        assert (await probe.command("2", "start"))["ok"]
        assert (await probe.command("1", "start"))["ok"]
        await probe.wait_for(lambda: len(probe.board_events("1", "started")) == 1)
        commits_before = disk.commits
        board2 = node.boards["2"]
        presses = 0
        async with loop_lag() as lag:
            # Board 2 is played fast, each press an event: the disk is never idle.
            while not probe.board_events("1", "flag"):
                side = Side.RED if presses % 2 == 0 else Side.BLACK
                faces["2"].press(side)
                presses += 1
                await asyncio.sleep(0.02)
                assert presses < 400, "no flag on board 1"
                assert board2.clock is not None
                # the press is charged at once, not after the disk
                assert board2.clock.moves(Side.RED) + board2.clock.moves(Side.BLACK) == presses
        flag = probe.board_events("1", "flag")[0]
        # decided at its deadline, although each of the commits around it took 100 ms
        assert flag["data"]["stood_after_ms"] < 30, flag
        commits = disk.commits - commits_before
        assert commits >= 5  # the disk was really busy meanwhile
        # A loop that waited on the disk would stall at every commit (>= 100 ms each, >= 5
        # of them); one pause of a loaded machine (the scheduler) is not that.
        stalls = [round(ms) for ms in lag if ms >= 90]
        assert len(stalls) <= 1, f"the loop stalled {stalls} ms over {commits} commits"
        median = statistics.median(lag)
        assert median < 20, f"the ticker ran late: median {median:.0f} ms"
        # published only after its commit: what was received is on disk, in seq order
        await probe.wait_for(lambda: len(probe.board_events("2", "move")) == presses, timeout=10)
        for board in ("1", "2"):
            seqs = [e["seq"] for e in probe.board_events(board)]
            assert seqs == list(range(1, len(seqs) + 1))
            assert journaled_seqs(config.data_dir / "journal.sqlite3", board)[: len(seqs)] == seqs
        # the disk held many events per commit (group commit), not one commit each
        assert disk.commits - commits_before < presses


async def test_an_event_is_published_only_once_its_commit_is_done(venue_broker, tmp_path):
    disk = SlowDisk(0.0)
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-b", ["3"], tmp_path)
    path = config.data_dir / "journal.sqlite3"
    journal = Journal(path, before_commit=disk)
    async with Probe(venue_broker) as probe, running_node(config, {"3": face}, journal=journal):
        assert (await probe.command("3", "set_game", {"game": "g", "tc": "30m+5s"}))["ok"]
        assert (await probe.command("3", "start"))["ok"]
        await probe.wait_for(lambda: probe.states.get("3", {}).get("phase") == "running")
        await probe.wait_for(lambda: probe.board_events("3", "started"))
        before = max(e["seq"] for e in probe.board_events("3"))
        state_seq = probe.states["3"]["seq"]
        assert state_seq == before
        board = journal  # the node's own journal
        disk.gate.clear()  # the next commit does not end until the gate opens
        try:
            for side in (Side.RED, Side.BLACK, Side.RED):
                face.press(side)
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.5)
            # nothing of it is on disk, and nothing reached MQTT: no event, no state naming it
            assert max(e["seq"] for e in probe.board_events("3")) == before
            assert probe.states["3"]["seq"] == state_seq
            assert max(journaled_seqs(path, "3")) == before
            assert board.held == 3
        finally:
            disk.gate.set()
        await probe.wait_for(lambda: len(probe.board_events("3", "move")) == 3, timeout=5)
        await probe.wait_for(lambda: probe.states["3"]["seq"] == before + 3, timeout=5)
        seqs = [e["seq"] for e in probe.board_events("3")]
        assert seqs == list(range(1, before + 4))
        assert journaled_seqs(path, "3") == seqs
        assert board.held == 0


async def test_the_writer_batches_what_queued_behind_a_slow_commit(tmp_path):
    """Journal level: records given while a commit is held are written together, in order."""
    disk = SlowDisk(0.0)
    journal = Journal(tmp_path / "j.sqlite3", before_commit=disk).open()
    journal.start_writer()
    try:
        disk.gate.clear()
        first = journal.record("1", lambda seq: {"seq": seq})
        while disk.commits < 1:
            await asyncio.sleep(0.001)
        payloads = [journal.record("1", lambda seq: {"seq": seq}) for _ in range(49)]
        assert [p["seq"] for p in [first, *payloads]] == list(range(1, 51))
        assert journal.held == 50
        assert journal.unsent("1") == []  # not on disk yet: not to be sent
        disk.gate.set()
        await journal.idle()
        assert journal.held == 0
        assert [r.seq for r in journal.unsent("1")] == list(range(1, 51))
        assert disk.commits == 2  # the first, then the 49 that waited behind it in one
    finally:
        disk.gate.set()
        journal.close()
    with Journal(tmp_path / "j.sqlite3") as again:
        assert again.board("1").last_seq == 50


async def test_a_checkpoint_queued_before_an_event_never_overwrites_the_events_own(tmp_path):
    """The board's periodic checkpoint taken just before a press, then the press's event
    with its own (newer) checkpoint, in one group commit: the newer one is what a restart
    restores (chaos: a clock restored 1 s off, the press before the power cut undone)."""
    disk = SlowDisk(0.0)
    journal = Journal(tmp_path / "j.sqlite3", before_commit=disk).open()
    journal.start_writer()
    try:
        disk.gate.clear()
        journal.record("9", lambda seq: {"seq": seq})  # holds the writer in its commit
        while disk.commits < 1:
            await asyncio.sleep(0.001)
        journal.checkpoints([("1", {"red_ms": 26041}), ("2", {"red_ms": 5})], 1000)
        journal.record("1", lambda seq: {"seq": seq}, checkpoint={"red_ms": 27042}, wall_ms=1001)
        journal.checkpoints([("2", {"red_ms": 4})], 1002)
        disk.gate.set()
        await journal.idle()
        assert disk.commits == 2  # the three queued behind the first went in one commit
        assert journal.board("1").checkpoint == {"red_ms": 27042}
        assert journal.board("1").checkpoint_wall_ms == 1001
        assert journal.board("2").checkpoint == {"red_ms": 4}  # the later periodic one
    finally:
        disk.gate.set()
        journal.close()
