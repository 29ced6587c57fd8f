"""A node started on a full SD card serves its boards (issue 28, docs/node.md).

A real ``qizhong node`` process whose ``data_dir`` is on a small tmpfs filled to the last byte
before it starts, a real Mosquitto, board 1 on the serial clock emulator (the test presses it
and notes each instant), board 2 a simulated face playing by itself. Two cards:

- ``fresh``: the node has never run on it (SQLite cannot even make the journal's schema);
- ``used``: a game was played and the node stopped cleanly (its WAL and index removed, so
  the journal cannot be opened for writing either); the board comes back paused, its seqs go
  on from the journal's.

The node stays up with status ``journal: "failing"``, its commands are answered, the clock runs
(the face shows the presses, and ``DISK``), nothing of the full period is published; once the
filler is removed every seq is journaled and published exactly once, the times as a
``GameClock`` fed the same press instants says (within 100 ms).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.clock_residual import Press, residuals
from support.full_disk import fill, small_disk
from support.node import Probe

from board_nodes.journal import Journal, JournalError
from clock_service import Side
from firmware_bridge.serial.emulator import ClockEmulator

pytestmark = [pytest.mark.broker, pytest.mark.slow]

TC = "10m+5s"


def node_toml(broker: Any, path: Path, data_dir: Path, emulator_url: str) -> Path:
    user, password = broker.credentials("node-a")
    path.write_text(
        "\n".join([
            'venue = "test"', 'node = "node-a"', 'regulation = "meishan-2016"',
            f'data_dir = "{data_dir}"',
            "[broker]", f'url = "{broker.url}"', f'username = "{user}"',
            f'password = "{password}"', "reconnect_min_s = 0.05", "reconnect_max_s = 0.5",
            "[[board]]", 'id = "1"', 'face = "serial"', f'url = "{emulator_url}"',
            "[[board]]", 'id = "2"', 'face = "simulated"', "[board.simulated]",
            'mode = "random"', "mean_move_s = 0.4", "seed = 5",
        ]) + "\n"
    )  # fmt: skip
    return path


def start_node(toml: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "qizhong", "node", "--config", str(toml), "--log-level", "INFO"],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip


def stop_node(proc: subprocess.Popen[bytes]) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    return proc.returncode


def journaled(path: Path) -> dict[tuple[str, int, int], str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT board, json_extract(payload, '$.session'), seq, payload FROM outbox"
        ).fetchall()
    finally:
        db.close()
    return {(b, int(s), int(q)): p for b, s, q, p in rows}


async def press(emu: ClockEmulator, side: Side, presses: list[Press]) -> None:
    """Press ``side``'s key and wait until the face shows the other side running."""
    presses.append(Press(side, time.time_ns()))
    await emu.press(side)
    await emu.wait_until(lambda: emu.shown is not None and emu.shown.running is side.other)


async def play_before(probe: Probe, emu: ClockEmulator, toml: Path, log: Path) -> None:
    """The card's past: a game started and four moves, then the node stopped cleanly."""
    proc = start_node(toml, log)
    try:
        await probe.wait_for(lambda: probe.status.get("1", {}).get("state") == "online", 15)
        assert (await probe.command("1", "set_game", {"game": "g1", "tc": TC}))["ok"]
        assert (await probe.command("1", "start"))["ok"]
        await emu.wait_until(lambda: emu.shown is not None and emu.shown.running is Side.RED)
        for side in (Side.RED, Side.BLACK, Side.RED, Side.BLACK):
            await press(emu, side, [])
            await asyncio.sleep(0.1)
        await probe.wait_for(lambda: len(probe.board_events("1", "move")) == 4, 10)
    except BaseException:
        stop_node(proc)
        print(log.read_text())
        raise
    finally:
        assert stop_node(proc) == 0, log.read_text()


@pytest.mark.parametrize("card", ["fresh", "used"])
async def test_a_node_started_on_a_full_card_keeps_its_clocks(
    broker_factory: Any, tmp_path: Path, card: str
) -> None:
    broker = broker_factory()
    log = tmp_path / "node.log"
    with small_disk(tmp_path / "card", size_kb=4096) as disk:
        journal = disk / "data" / "journal.sqlite3"
        async with ClockEmulator() as emu, Probe(broker) as probe:
            toml = node_toml(broker, tmp_path / "node.toml", disk / "data", await emu.listen())
            if card == "used":
                await play_before(probe, emu, toml, log)
                assert not Path(f"{journal}-wal").exists()  # the hard case: no index to reuse
            before = journaled(journal) if card == "used" else {}
            published_before = len(probe.events)
            filler = fill(disk)
            proc = start_node(toml, log)
            try:
                # up, and saying its journal fails
                await probe.wait_for(
                    lambda: all(
                        probe.status.get(b, {}).get("journal") == "failing"
                        and probe.status[b].get("state") == "online"
                        for b in ("1", "2")
                    ),
                    15,
                )
                session = probe.status["1"]["session"]
                assert session == (2 if card == "used" else 1)
                # its commands are answered, its clocks run
                if card == "fresh":
                    assert (await probe.command("1", "set_game", {"game": "g1", "tc": TC}))["ok"]
                    assert (await probe.command("1", "start"))["ok"]
                else:  # restored paused by the restart: the arbiter resumes it
                    assert (await probe.command("1", "resume"))["ok"]
                assert (await probe.command("2", "set_game", {"game": "g2", "tc": TC}))["ok"]
                assert (await probe.command("2", "start"))["ok"]
                await emu.wait_until(
                    lambda: emu.shown is not None and emu.shown.running is Side.RED
                )
                presses: list[Press] = []
                side = Side.RED
                for _ in range(8):
                    await asyncio.sleep(0.25)
                    await press(emu, side, presses)
                    side = side.other
                assert emu.shown is not None and emu.shown.text == "DISK"
                await asyncio.sleep(1.0)
                assert proc.poll() is None, log.read_text()
                # nothing of this session reached MQTT while the card is full
                assert [e for e in probe.events if e["session"] == session] == []
                assert probe.status["1"].get("journal") == "failing"

                os.unlink(filler)  # the technician frees the card
                freed = time.monotonic()
                await probe.wait_for(lambda: len(probe.board_events("1", "move")) >= 8, 10)
                await probe.wait_for(
                    lambda: all("journal" not in probe.status.get(b, {}) for b in ("1", "2")), 10
                )
                back_s = time.monotonic() - freed
                await probe.wait_for(
                    lambda: any(
                        e["data"].get("reason") == "journal_failed" and e["session"] == session
                        for e in probe.board_events("1", "warning")
                    ),
                    5,
                )
                await asyncio.sleep(1.0)  # board 2 plays on: its latest events arrive
            finally:
                assert stop_node(proc) == 0, log.read_text()
            await asyncio.sleep(0.5)

            # every seq journaled once, in order from the card's past, and published once
            after = journaled(journal)
            assert set(before) <= set(after)
            for board in ("1", "2"):
                seqs = sorted(q for (b, _, q) in after if b == board)
                assert seqs == list(range(1, len(seqs) + 1)), (board, seqs)
            published = [(e["board"], e["session"], e["seq"]) for e in probe.events]
            assert len(published) == len(set(published)), "an event published twice"
            assert set(published) == set(after), (
                sorted(set(after) - set(published))[:5],
                sorted(set(published) - set(after))[:5],
            )
            assert len(published) > published_before
            # the clock ran through the full period as the presses say
            events = [e for e in probe.board_events("1") if e["session"] == session]
            anchor = next(e for e in events if e["type"] in ("started", "resumed"))
            moves = [e for e in events if e["type"] == "move"]
            if card == "used":
                restart = [e for e in events if e["type"] == "shutdown"]
                assert [e["data"]["cause"] for e in restart] == ["node_restart"]
                last_before = max(q for (b, _, q) in before if b == "1")
                assert min(e["seq"] for e in events) == last_before + 1  # no seq given twice
            worst = max(r.ms for r in residuals(TC, anchor, presses, moves))
            print(f"\n{card} card: {len(moves)} presses while full, residual {worst} ms, "
                  f"published {back_s:.2f} s after the space came back")  # fmt: skip
            assert worst <= 100


def test_a_file_that_is_not_a_journal_still_stops_the_start(tmp_path: Path) -> None:
    """Only a disk that refuses is run past: a corrupt journal is not read as an empty one."""
    path = tmp_path / "journal.sqlite3"
    path.write_bytes(b"not a journal, " * 400)
    with pytest.raises(JournalError, match="cannot open the journal"):
        Journal(path).open()
