"""A flag's way to the arbiter: decided at its instant, on disk and on the wire in the turn
of the loop that decides it, and never at the cost of a stalled loop or a reordered journal.

- the flag's timer runs at its instant, never before it (it wakes early and goes round the
  loop until then: ``TimerSlot.call_exactly_at``);
- an urgent event (the flag) is written on the loop at once only while the disk has shown
  itself fast and nothing is queued before it; otherwise it waits its turn in the writer
  thread as every event does; a refusal holds it and the thread tries again on its own;
- once on disk it is published in the same call (the broker has it while the loop is still
  busy with that turn), acknowledged and marked sent by the drain afterwards.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import pytest
from support.broker import VENUE
from support.node import Probe, journaled_seqs, node_config, running_node

from board_nodes import journal_writer
from board_nodes.journal import Journal
from board_nodes.timer_slot import SPIN_S, TimerSlot
from clock_service import Side
from firmware_bridge.simulated import SimulatedFace


# -- the timer -------------------------------------------------------------------------------
async def test_an_exact_timer_never_runs_before_its_instant() -> None:
    """It wakes ``SPIN_S`` early: what it then does must not run the callback early. (How
    soon after the instant it runs is measured by benchmarks/flag_latency.py, *decided*.)"""
    loop = asyncio.get_running_loop()
    ran: list[tuple[float, float]] = []
    slots = []
    for i in range(20):
        target = loop.time() + 0.005 + i * 0.0007
        slot = TimerSlot()
        slot.call_exactly_at(target, lambda t=target: ran.append((t, loop.time())))
        slots.append(slot)
    await asyncio.sleep(0.005 + 20 * 0.0007 + SPIN_S + 0.05)
    assert len(ran) == 20
    assert all(at >= target for target, at in ran), [at - t for t, at in ran if at < t]
    assert not any(slot.pending for slot in slots)


async def test_an_exact_timer_cancelled_while_it_spins_never_runs() -> None:
    loop = asyncio.get_running_loop()
    ran: list[float] = []
    slot = TimerSlot()
    slot.call_exactly_at(loop.time() + SPIN_S / 2, lambda: ran.append(loop.time()))
    await asyncio.sleep(0)  # armed in the past of its early wake: it spins from the next turn
    await asyncio.sleep(0)
    assert slot.pending
    slot.cancel()
    await asyncio.sleep(SPIN_S * 2)
    assert ran == [] and not slot.pending


# -- the journal -----------------------------------------------------------------------------
class Disk:
    """Inside each durable transaction, before its COMMIT: slow, shut, or refusing."""

    def __init__(self) -> None:
        self.delay_s = 0.0
        self.refuse = 0  # refuse this many commits
        self.gate = threading.Event()
        self.gate.set()
        self.threads: list[str] = []

    def __call__(self) -> None:
        self.threads.append(threading.current_thread().name)
        if not self.gate.wait(20):
            raise AssertionError("the test left the disk shut")
        if self.refuse:
            self.refuse -= 1
            raise sqlite3.OperationalError("database or disk is full")
        time.sleep(self.delay_s)


async def warmed(journal: Journal, n: int = journal_writer.FAST_COMMITS) -> None:
    """``n`` events written by the writer thread, one commit each: the disk's record."""
    for _ in range(n):
        journal.record("w", lambda seq: {"seq": seq})
        await journal.idle()


# Whether the disk counts as fast is judged on real commits: generous here, so a loaded CI
# machine's commits still count as fast, and a "slow" commit is slower than that.
FAST_S = 0.25
SLOW_S = 0.3


@pytest.fixture
async def journal(tmp_path, monkeypatch):
    monkeypatch.setattr(journal_writer, "FAST_COMMIT_S", FAST_S)
    disk = Disk()
    journal = Journal(tmp_path / "j.sqlite3", before_commit=disk).open()
    journal.disk = disk  # type: ignore[attr-defined]
    journal.start_writer()
    try:
        yield journal
    finally:
        disk.gate.set()
        journal.close()


async def test_on_a_fast_disk_an_urgent_event_is_on_disk_when_record_returns(journal, tmp_path):
    told: list[frozenset[str]] = []
    journal.on_written = told.append
    await warmed(journal)
    told.clear()
    journal.record("1", lambda seq: {"seq": seq, "type": "flag"}, urgent=True)
    assert journal.held == 0 and journal.on_disk("1", 1)
    assert told == [frozenset({"1"})]  # the link heard before record returned
    assert journaled_seqs(tmp_path / "j.sqlite3", "1") == [1]
    assert journal.disk.threads[-1] == threading.current_thread().name  # written on the loop


async def test_a_disk_not_known_fast_takes_an_urgent_event_in_the_writer_thread(journal):
    journal.disk.delay_s = SLOW_S  # a card's fsync
    await warmed(journal, 1)  # one slow commit is enough
    loop_thread = threading.current_thread().name
    journal.record("1", lambda seq: {"seq": seq, "type": "flag"}, urgent=True)
    assert journal.held == 1  # the loop did not wait for the disk
    await journal.idle()
    assert journal.on_disk("1", 1)
    assert journal.disk.threads[-1] != loop_thread


async def test_one_slow_commit_on_the_loop_sends_the_next_urgent_events_to_the_thread(journal):
    await warmed(journal)
    journal.disk.delay_s = SLOW_S  # the card turns slow
    journal.record("1", lambda seq: {"seq": seq, "type": "flag"}, urgent=True)
    assert journal.on_disk("1", 1)  # that one stalled the loop (once, bounded)
    journal.record("2", lambda seq: {"seq": seq, "type": "flag"}, urgent=True)
    assert journal.held == 1  # the next waits its turn in the thread
    await journal.idle()
    assert journal.on_disk("2", 1)


async def test_an_urgent_event_never_passes_an_event_queued_before_it(journal, tmp_path):
    await warmed(journal)
    journal.disk.gate.clear()  # the thread's next commit waits
    journal.record("1", lambda seq: {"seq": seq, "type": "move"})
    while len(journal.disk.threads) < journal_writer.FAST_COMMITS + 1:
        await asyncio.sleep(0.001)  # the thread is in its commit
    journal.record("1", lambda seq: {"seq": seq, "type": "flag"}, urgent=True)
    assert journal.held == 2
    assert journaled_seqs(tmp_path / "j.sqlite3", "1") == []
    journal.disk.gate.set()
    await journal.idle()
    assert journal.held == 0
    assert journaled_seqs(tmp_path / "j.sqlite3", "1") == [1, 2]


async def test_an_urgent_event_waits_for_a_writer_thread_that_is_writing(journal, tmp_path):
    """The thread in its ``write`` (here: its turn taken by another thread) with nothing
    queued: the urgent event does not wait for it on the loop, it queues behind it."""
    await warmed(journal)
    writer = journal._w
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with writer._turn:
            taken.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(5)
        journal.record("1", lambda seq: {"seq": seq, "type": "flag"}, urgent=True)
        assert journal.held == 1
        assert journaled_seqs(tmp_path / "j.sqlite3", "1") == []
    finally:
        release.set()
        holder.join()
    await journal.idle()
    assert journaled_seqs(tmp_path / "j.sqlite3", "1") == [1]


@pytest.mark.allow_error_log  # the journal says the disk refuses: that is the case
async def test_a_refused_urgent_write_is_held_and_the_thread_tries_again(journal, tmp_path):
    told: list[frozenset[str]] = []
    await warmed(journal)
    journal.on_written = told.append
    journal.disk.refuse = 1
    journal.record("1", lambda seq: {"seq": seq, "type": "flag"}, urgent=True)
    assert journal.held == 1
    assert journal.failing_since is None  # told a turn later, as the thread's news, not
    await asyncio.sleep(0)  # inside the board's emit that recorded the flag
    assert journal.failing_since is not None
    journal.record("1", lambda seq: {"seq": seq, "type": "result"})
    async with asyncio.timeout(journal_writer.RETRY_S * 6):
        while journal.held:
            await asyncio.sleep(0.01)
    assert journal.failing_since is None
    assert journaled_seqs(tmp_path / "j.sqlite3", "1") == [1, 2]
    assert frozenset({"1"}) in told


# -- the wire --------------------------------------------------------------------------------
@pytest.mark.broker
async def test_a_flag_is_at_the_broker_before_the_loop_turns_again(
    venue_broker, tmp_path, monkeypatch
):
    """The node's loop is held right after the flag's turn; a subscriber on a thread of its
    own must have the flag meanwhile. Woken instead, the drain would publish it only after."""
    import paho.mqtt.client as paho

    # This test is about the wire: the disk counts as fast whatever the machine's load.
    monkeypatch.setattr(journal_writer, "FAST_COMMIT_S", 1.0)
    # An arbiter's account (the probe is the station's: one connection per account).
    user, password = venue_broker.credentials("arb")
    heard: list[float] = []
    subscribed = threading.Event()
    sub = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=user)
    sub.username_pw_set(user, password)

    def on_message(client, userdata, message) -> None:
        if b'"type":"flag"' in message.payload:
            heard.append(time.monotonic())

    sub.on_message = on_message
    sub.on_subscribe = lambda *a: subscribed.set()
    sub.connect(venue_broker.host, venue_broker.port)
    sub.subscribe(f"qz/v1/{VENUE}/board/+/event", qos=1)
    sub.loop_start()
    try:
        assert subscribed.wait(10)
        face = SimulatedFace(mode="idle")
        config = node_config(venue_broker, "node-a", ["1"], tmp_path)
        async with Probe(venue_broker) as probe, running_node(config, {"1": face}) as node:
            board = node.boards["1"]
            turn_ended: list[float] = []
            inner = board.on_event

            def on_event(payload) -> None:
                inner(payload)
                if payload["type"] == "flag":
                    time.sleep(0.5)  # the rest of the flag's turn, made long
                    turn_ended.append(time.monotonic())

            board.on_event = on_event
            assert (await probe.command("1", "set_game", {"game": "g1", "tc": "1500ms"}))["ok"]
            assert (await probe.command("1", "start"))["ok"]
            await probe.wait_for(lambda: probe.board_events("1", "started"))
            for i in range(journal_writer.FAST_COMMITS):  # moves: the disk's record
                face.press(Side.RED if i % 2 == 0 else Side.BLACK)
                await asyncio.sleep(0.02)
            await probe.wait_for(lambda: probe.board_events("1", "flag"), timeout=10)
            async with asyncio.timeout(5):
                while not heard:
                    await asyncio.sleep(0.01)
            assert turn_ended, "the flag's turn was not seen"
            assert heard[0] < turn_ended[0], "the flag left only after its turn of the loop"
            # and the drain saw it acknowledged and marked it sent, as its own
            async with asyncio.timeout(5):
                while node.journal.unsent_count("1"):
                    await asyncio.sleep(0.01)
            flag = probe.board_events("1", "flag")[0]
            assert flag["replay"] is False
            seqs = [e["seq"] for e in probe.board_events("1")]
            assert seqs == list(range(1, len(seqs) + 1))
    finally:
        sub.loop_stop()
        sub.disconnect()
