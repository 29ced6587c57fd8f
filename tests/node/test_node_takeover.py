"""A Pi replaced by a new one (a fresh SD card, the same node.toml) mid-round: the new node
goes on from the board's life as the broker retained it — the next seq, a later session — so
the station stores every event of both once and shows the new Pi's board, not the dead one's
(an outsider technician found the new Pi's events dropped as duplicates and the dead Pi's
clock running on the pages: the new journal started at seq 1, session 1 again)."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import pytest
from support.node import journaled_events, node_config, start_node_process, write_node_toml
from support.station import station_config

pytestmark = [pytest.mark.broker, pytest.mark.slow]


async def until(what: str, predicate: Any, timeout: float = 15.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)


async def test_a_new_pi_goes_on_from_the_dead_ones_board(
    broker_factory, tmp_path, start_station
) -> None:
    broker = broker_factory()
    station = await start_station(station_config(tmp_path, broker), serve_http=False)

    def view() -> dict[str, Any]:
        found = [v for v in station.board_views() if v["board"] == "1"]
        return found[0] if found else {"status": None, "state": None}

    def status() -> dict[str, Any]:
        return view()["status"] or {}

    def state() -> dict[str, Any]:
        return view()["state"] or {}

    old = node_config(broker, "node-a", ["1"], tmp_path / "old")
    new = node_config(broker, "node-a", ["1"], tmp_path / "new")
    proc = start_node_process(write_node_toml(old, tmp_path / "old.toml"))
    try:
        await until("online", lambda: status().get("state") == "online")
        for cmd, args in (("set_game", {"game": "r1-b1", "tc": "30m+5s"}), ("start", {}),
                          ("pause", {})):  # fmt: skip
            assert (await station.send_command("1", cmd, args)).ok
        await until("paused", lambda: state().get("phase") == "paused")
        last_seq, session = state()["seq"], state()["session"]
        assert last_seq >= 3
        os.kill(proc.pid, signal.SIGKILL)  # the old Pi dies
        proc.wait(10)
        await until("lost", lambda: status().get("state") == "lost")

        # its replacement, on an empty card
        proc = start_node_process(write_node_toml(new, tmp_path / "new.toml"))
        await until("back", lambda: status().get("state") == "online")
        assert status()["session"] > session
        await until("new state", lambda: state().get("session", 0) > session)
        # nothing new yet (not seq 0), and the new Pi holds no game: the dead clock is gone
        assert (state()["seq"], state()["game"], state()["phase"]) == (last_seq, None, "idle")
        assert (await station.send_command("1", "set_game", {"game": "r1-b1", "tc": "30m+5s"})).ok
        await until("ready", lambda: state().get("seq") == last_seq + 1)
        assert state()["phase"] == "ready"
    finally:
        proc.kill()
        proc.wait(10)

    # the station: both Pis' events, each once
    stored: list[int] = []
    for _ in range(200):
        stored = sorted(e["seq"] for e in await station.store.events(board="1"))
        if stored == list(range(1, last_seq + 2)):
            break
        await asyncio.sleep(0.05)
    assert stored == list(range(1, last_seq + 2))
    assert station.metrics.duplicates_dropped == 0
    # and the new card holds only its own events, numbered on from the old one's
    journal = journaled_events(tmp_path / "new" / "journal.sqlite3")
    assert [seq for (_, seq) in journal] == [last_seq + 1]
    (ready,) = journal.values()
    assert ready["type"] == "ready" and ready["session"] > session


async def test_a_new_pi_goes_on_from_a_board_that_never_played(
    broker_factory, tmp_path, start_station
) -> None:
    """The dead Pi had started four times during the setting up (session 4) and never had an
    event: its retained state says seq 0. Its replacement still goes on in a later session —
    from session 1 the station took its statuses for old news and kept the board lost (a
    reviewer)."""
    import json

    from support.broker import mqtt_client

    broker = broker_factory()
    station = await start_station(station_config(tmp_path, broker), serve_http=False)
    now = int(__import__("time").time() * 1000)
    state = {
        "v": 1, "board": "1", "node": "node-a", "session": 4, "seq": 0, "ts": now, "game": None,
        "tc": None, "phase": "idle", "running": None, "red_ms": 0, "black_ms": 0,
        "moves": {"red": 0, "black": 0}, "flag": None, "fouls": {"red": 0, "black": 0},
        "result": None,
    }  # fmt: skip
    status = {"state": "lost", "node": "node-a", "session": 4, "ts": now, "conn": now}
    async with mqtt_client(broker, "node-a") as old:  # what the dead Pi left retained
        await old.publish("qz/v1/test/board/1/state", json.dumps(state), qos=1, retain=True)
        await old.publish("qz/v1/test/board/1/status", json.dumps(status), qos=1, retain=True)

    def view() -> dict[str, Any]:
        found = [v for v in station.board_views() if v["board"] == "1"]
        return found[0] if found else {"status": None, "state": None}

    new = node_config(broker, "node-a", ["1"], tmp_path / "new")
    proc = start_node_process(write_node_toml(new, tmp_path / "new.toml"))
    try:
        await until("online", lambda: (view()["status"] or {}).get("state") == "online")
        assert view()["status"]["session"] == 5
    finally:
        proc.kill()
        proc.wait(10)
