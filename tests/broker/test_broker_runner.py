"""MosquittoProcess: start, ready, kill, terminate, restart, close; and the fixtures."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.broker import mqtt_client, new_broker_dir, standard_roster

from broker_config import BrokerConfigError, MosquittoProcess, free_port

pytestmark = pytest.mark.broker


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text()


def test_context_manager_starts_and_stops_and_close_is_idempotent() -> None:
    directory = new_broker_dir()
    try:
        broker = MosquittoProcess.from_roster(standard_roster(), directory, start=False)
        assert not broker.running and "stopped" in repr(broker)
        with broker:
            pid = broker.pid
            assert pid is not None and broker.running and _alive(pid)
            assert broker.url == f"mqtt://127.0.0.1:{broker.port}"
        assert not broker.running and not _alive(pid)
        broker.close()
        broker.close()
        broker.kill()  # nothing to kill: no error
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_restart_keeps_ports_and_kill_is_immediate(
    broker_factory: Callable[..., MosquittoProcess],
) -> None:
    broker = broker_factory()
    ports, first = (broker.port, broker.ws_port), broker.pid
    broker.restart(kill=True)
    assert (broker.port, broker.ws_port) == ports and broker.pid != first and broker.running
    broker.kill()
    assert not broker.running
    broker.start()
    assert broker.running


def test_a_directory_without_broker_json_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BrokerConfigError, match="not a broker-config directory"):
        MosquittoProcess(tmp_path)


def test_a_port_in_use_fails_with_the_log_tail(tmp_path: Path) -> None:
    import socket

    directory = new_broker_dir()
    port = free_port()
    roster = standard_roster().with_ports(port=port, ws_port=free_port())
    try:
        with socket.socket() as blocker:
            blocker.bind(("127.0.0.1", port))
            blocker.listen()
            broker = MosquittoProcess.from_roster(roster, directory, free_ports=False, start=False)
            from broker_config import MosquittoError

            with pytest.raises(MosquittoError, match="Address already in use"):
                broker.start()
            assert not broker.running
    finally:
        shutil.rmtree(directory, ignore_errors=True)


async def test_venue_broker_fixture_attributes(venue_broker: MosquittoProcess) -> None:
    assert venue_broker.host == "127.0.0.1"
    assert venue_broker.url == f"mqtt://127.0.0.1:{venue_broker.port}"
    assert venue_broker.ws_port != venue_broker.port
    assert venue_broker.dir.is_dir()
    user, password = venue_broker.credentials("node-c")
    assert user == "node-c" and len(password) >= 24
    assert set(venue_broker.files.accounts) == {
        "station",
        "node-a",
        "node-b",
        "node-c",
        "arb",
        "hall",
    }
    async with mqtt_client(venue_broker, "node-c") as client:
        await client.publish("qz/v1/test/board/12/status", "x", qos=1)


def test_a_broker_left_by_a_dead_session_is_reaped() -> None:
    import subprocess
    import sys

    from broker_config.runner import reap_orphans

    directory = new_broker_dir()
    script = (
        "import os, sys; sys.path.insert(0, 'tests')\n"
        "from support.broker import standard_roster\n"
        "from broker_config import MosquittoProcess\n"
        f"b = MosquittoProcess.from_roster(standard_roster(), {str(directory)!r})\n"
        "print(b.pid, flush=True)\n"
        "os._exit(0)  # no teardown, no atexit: what a hard timeout does\n"
    )
    try:
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
        )
        pid = int(out.stdout.split()[-1])
        assert _alive(pid)  # the orphan exists...
        assert reap_orphans([Path("/nonexistent"), directory]) == [pid]
        for _ in range(100):
            if not _alive(pid):
                break
            time.sleep(0.05)
        assert not _alive(pid)  # ...and is gone
        assert reap_orphans([directory]) == []
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_reap_leaves_a_live_sessions_broker_alone(
    broker_factory: Callable[..., MosquittoProcess],
) -> None:
    from broker_config.runner import reap_orphans

    broker = broker_factory()
    assert reap_orphans([broker.dir]) == []
    assert broker.running
