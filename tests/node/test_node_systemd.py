"""systemd notification and the outbox alarm."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest
from support.node import node_config, running_node

from board_nodes import sdnotify
from board_nodes.board import Board
from board_nodes.config import BrokerConfig
from board_nodes.journal import Journal
from board_nodes.link import BoardLink
from clock_service import Regulation
from firmware_bridge.simulated import SimulatedFace


def test_without_systemd_nothing_is_sent(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert sdnotify.notify("READY=1") is False
    assert sdnotify.watchdog_interval_s() is None


@pytest.mark.broker
async def test_ready_watchdog_and_stopping_reach_systemd(venue_broker, tmp_path, monkeypatch):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", "200000")  # systemd's WatchdogSec=0.2: ping every 0.1 s
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    got: list[str] = []
    config = node_config(venue_broker, "node-a", ["1"], tmp_path / "data")
    try:
        async with running_node(config, {"1": SimulatedFace(mode="idle")}):
            await asyncio.sleep(0.5)
        loop = asyncio.get_running_loop()
        while True:
            try:
                got.append((await asyncio.wait_for(loop.sock_recv(sock, 64), 0.2)).decode())
            except TimeoutError:
                break
    finally:
        sock.close()
    assert got[0] == "READY=1"
    assert got.count("WATCHDOG=1") >= 3
    assert got[-1] == "STOPPING=1"


def test_the_outbox_alarm_warns_once_before_it_fills(tmp_path, caplog):
    journal = Journal(tmp_path / "j.sqlite3").open()
    board = Board(
        "1", venue="test", node="n", session=1, regulation=Regulation.load("meishan-2016"),
        face=SimulatedFace(mode="idle"), journal=journal,
    )  # fmt: skip
    link = BoardLink(
        board, broker=BrokerConfig(), journal=journal, outbox_capacity=100, outbox_alarm_ratio=0.8
    )
    with caplog.at_level(logging.WARNING, logger="board_nodes.link"):
        for _ in range(79):
            journal.record("1", lambda seq: {"seq": seq})
        assert link.check_outbox() == 79 and not caplog.records
        journal.record("1", lambda seq: {"seq": seq})
        assert link.check_outbox() == 80
        link.check_outbox()
    warnings = [r for r in caplog.records if "outbox holds 80 unsent" in r.getMessage()]
    assert len(warnings) == 1
    journal.close()


@pytest.mark.broker
async def test_the_watchdog_trims_sent_events_beyond_replay_keep(venue_broker, tmp_path):
    config = node_config(venue_broker, "node-a", ["1"], tmp_path / "data")
    config.replay_keep = 100
    with Journal(config.data_dir / "journal.sqlite3") as journal:
        for _ in range(150):
            journal.record("1", lambda seq: {"seq": seq})
        journal.mark_sent([row.id for row in journal.unsent("1", limit=150)])
    async with running_node(config, {"1": SimulatedFace(mode="idle")}) as node:
        # the watchdog's first prune was given to the writer thread as the node started (the
        # link was still connecting); it is on disk once the writer has caught up with it
        await asyncio.wait_for(node.journal.idle(), 5)
        rows = node.journal.events_from("1", 1)
        assert [r.seq for r in rows][:1] == [51] and len(rows) == 100
        assert node.events_dropped == 0
