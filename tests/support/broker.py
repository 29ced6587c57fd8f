"""Private Mosquitto fixtures, started from ``write_broker_config`` output (never a mock).

- ``venue_broker`` (session): the standard test roster (:data:`STANDARD_NODES`, arbiter
  ``arb``, display ``hall``, websockets on), a :class:`MosquittoProcess` with ``host``,
  ``port``, ``ws_port``, ``url``, ``dir``, ``files`` and ``credentials(username)``. Do not
  kill or restart it: ask ``broker_factory`` for a broker of your own.
- ``broker_factory`` (function): ``broker_factory(roster=None)`` -> a running
  MosquittoProcess on free ports; every one is stopped and its directory removed at teardown.
- ``mqtt_client(broker, username, **kw)``: an ``aiomqtt.Client`` (MQTT 5) for that account.
- ``collect(client, count=None, within=...)``: the messages that arrive within a bounded wait.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import aiomqtt
import pytest

from broker_config import MosquittoProcess, Roster
from broker_config.runner import reap_orphans
from wire_contract.broker import CancellableClient

__all__ = [
    "STANDARD_NODES",
    "collect",
    "mqtt_client",
    "new_broker_dir",
    "standard_roster",
]

VENUE = "test"
DIR_PREFIX = "qz-broker-"
STANDARD_NODES: dict[str, list[str]] = {
    "node-a": ["1", "2"],
    "node-b": ["3", "4"],
    "node-c": [str(b) for b in range(5, 13)],
}


def standard_roster(**broker: Any) -> Roster:
    """The standard test roster; keyword arguments go to its ``[broker]`` table."""
    return Roster.build(
        venue=VENUE,
        nodes=STANDARD_NODES,
        arbiters=["arb"],
        displays=["hall"],
        websockets=("127.0.0.1", 9001),  # ports are replaced by free ones at start
        broker=broker,
    )


def new_broker_dir() -> Path:
    # Not tmp_path: pytest's 0700 folders stop the mosquitto user that a root-started
    # mosquitto becomes; /tmp lets it through.
    return Path(tempfile.mkdtemp(prefix=DIR_PREFIX))


def _reap_earlier_sessions() -> None:
    # A session killed hard (no teardown, no atexit) leaves its brokers: end those whose
    # session is gone, never a live session's.
    root = Path(tempfile.gettempdir())
    dirs = list(root.glob(f"{DIR_PREFIX}*"))
    reap_orphans(dirs)
    for d in dirs:
        try:
            owner = (d / "log" / "runner.pid").read_text().split()[1]
        except (OSError, IndexError):
            continue  # never started, or not ours to judge
        if not Path(f"/proc/{owner}").exists():
            shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def venue_broker() -> Iterator[MosquittoProcess]:
    _reap_earlier_sessions()
    directory = new_broker_dir()
    broker = MosquittoProcess.from_roster(standard_roster(), directory)
    try:
        yield broker
    finally:
        broker.close()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def broker_factory() -> Iterator[Callable[..., MosquittoProcess]]:
    started: list[tuple[MosquittoProcess, Path]] = []

    def make(roster: Roster | None = None) -> MosquittoProcess:
        directory = new_broker_dir()
        broker = MosquittoProcess.from_roster(roster or standard_roster(), directory, start=False)
        started.append((broker, directory))
        return broker.start()

    try:
        yield make
    finally:
        for broker, directory in started:
            broker.close()
            shutil.rmtree(directory, ignore_errors=True)


def mqtt_client(
    broker: MosquittoProcess,
    username: str | None,
    *,
    password: str | None = None,
    transport: Literal["tcp", "websockets"] = "tcp",
    **kw: Any,
) -> aiomqtt.Client:
    """An MQTT 5 client for ``username`` (None: anonymous) with its generated password.

    The client id defaults to a unique one; pass ``identifier=`` to choose it.
    """
    if username is not None and password is None:
        password = broker.credentials(username)[1]
    if transport == "websockets":
        host, port = broker.ws_host, broker.ws_port
    else:
        host, port = broker.host, broker.port
    kw.setdefault("identifier", f"{username or 'anon'}-{uuid.uuid4().hex[:10]}")
    kw.setdefault("timeout", 5)
    # CancellableClient, as node and station: a plain aiomqtt client's waits (asyncio.wait_for)
    # can swallow a cancellation on 3.11, and a FakeNode's replay loop then outlived its test —
    # a stray replay reached the next test's station, a teardown waited for it 300 s.
    return CancellableClient(
        host,
        port,
        username=username,
        password=password,
        protocol=aiomqtt.ProtocolVersion.V5,
        transport=transport,
        **kw,
    )


async def collect(
    client: aiomqtt.Client, count: int | None = None, *, within: float = 1.0
) -> list[aiomqtt.Message]:
    """Messages received within ``within`` seconds (sooner once ``count`` have arrived)."""
    got: list[aiomqtt.Message] = []
    try:
        async with asyncio.timeout(within):
            async for message in client.messages:
                got.append(message)
                if count is not None and len(got) >= count:
                    break
    except TimeoutError:
        pass
    return got
