"""Station test fixtures: a store on SQLite or PostgreSQL, station configs, a fake node.

- ``db_url`` (function, parametrised ``sqlite`` / ``postgres``): a fresh database; the
  PostgreSQL one is a new database on the tests' server (support/postgres.py; created from
  ``test``), dropped after.
- ``store``: a migrated :class:`venue_station.store.database.Store` on ``db_url``.
- ``station_config(tmp_path, broker=None, **kw)``: a :class:`StationConfig` for the test venue
  with the arbiter account ``ARBITER`` (password ``ARBITER_PASSWORD``).
- ``start_station``: ``await start_station(config, **kw)`` -> a started station with its web
  beside it (``StationWithWeb``; ``serve_http=False``: the domain ``Station`` alone), stopped
  at teardown.
- ``FakeNode``: speaks for a node with its real broker account: publishes numbered events,
  keeps an outbox, replays it on ``rebirth``, answers every command ``ok``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from support.broker import mqtt_client
from support.postgres import database_url, throwaway_database
from venue_station.auth import hash_password
from venue_station.config import StationConfig
from venue_station.domain.station import Station
from venue_station.store.database import Store
from venue_station.web.web_server import StationWithWeb
from wire_contract.messages import Command, Reply, Topics, encode
from wire_contract.wallclock import wall_ms

__all__ = [
    "ARBITER",
    "ARBITER_PASSWORD",
    "FakeNode",
    "Feeder",
    "arbiter_txn",
    "decision_txn",
    "envelope",
    "station_config",
]

ARBITER = "arb1"
ARBITER_PASSWORD = "青龙-secret-1"
_ARBITER_HASH = hash_password(ARBITER_PASSWORD)
VENUE = "test"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'station.db'}"
        return
    async with throwaway_database("qz_test") as name:
        yield database_url(name, scheme="postgresql+asyncpg")


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    s = await Store.open(db_url)
    try:
        yield s
    finally:
        await s.close()


def station_config(tmp_path: Path, broker: Any = None, **kw: Any) -> StationConfig:
    data: dict[str, Any] = {
        "venue": VENUE,
        "data_dir": str(tmp_path / "station"),
        # Every test client is 127.0.0.1: a roomy login limit so that no test trips it by
        # accident (tests/web/test_web_login_flood.py sets its own).
        "http": {"host": "127.0.0.1", "port": 0, "login_per_address": 1000},
        # The chief arbiter: may do every action but see the accounts (the role tests use
        # an account of each role, tests/web/test_web_roles.py).
        "account": [{"username": ARBITER, "password_hash": _ARBITER_HASH, "role": "chief"}],
        "rebirth_grace_ms": 100,
        "rebirth_retry_ms": 500,
    }
    if broker is not None:
        user, password = broker.credentials("station")
        data["broker"] = {
            "url": f"mqtt://{broker.host}:{broker.port}",
            "username": user,
            "password": password,
            "client_id": f"qz-station-{uuid.uuid4().hex[:8]}",
        }
    for key, value in kw.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return StationConfig.from_dict(data)


@pytest.fixture
async def start_station() -> AsyncIterator[Callable[..., Any]]:
    started: list[Station] = []

    async def start(config: StationConfig, *, serve_http: bool = True, **kw: Any) -> Any:
        # Any: the tests reach both the domain and (served) its web's http_url.
        station = StationWithWeb(config, **kw) if serve_http else Station(config, **kw)
        await station.start()
        started.append(station)
        return station

    try:
        yield start
    finally:
        for station in started:
            if not station._stop.is_set():
                await station.stop()


def envelope(
    board: str,
    seq: int,
    *,
    type: str = "move",
    data: dict[str, Any] | None = None,
    session: int = 1,
    node: str = "node-a",
    game: str | None = "r1-b1",
    ts: int | None = None,
    red_ms: int = 1_800_000,
    black_ms: int = 1_800_000,
    running: str | None = None,
    replay: bool = False,
    txn: str | None = None,
) -> dict[str, Any]:
    if ts is None:
        ts = time.time_ns() // 1_000_000 - seq  # now: a node whose clock agrees with ours
    if data is None:
        data = {
            "side": "red" if seq % 2 else "black",
            "used_ms": 1000 + seq,
            "move": (seq + 1) // 2,
        }
    out = {
        "v": 1,
        "board": board,
        "node": node,
        "game": game,
        "session": session,
        "seq": seq,
        "ts": ts + seq,
        "type": type,
        "replay": replay,
        "clock": {"red_ms": red_ms, "black_ms": black_ms, "running": running},
        "data": data,
    }
    if txn is not None:
        out["txn"] = txn
    return out


def arbiter_txn(station: Station, board: str, cmd: str, **args: Any) -> str:
    """A txn the station counts as its own decision command ``cmd`` to ``board`` asking
    ``args`` (as if its arbiter had sent it): an event carrying it that says what it asked
    decides (a result, a ruling); any other is a proposal (venue_station/intake/asks.py)."""
    assert station.ingest is not None
    txn = f"st-test-{uuid.uuid4().hex[:8]}"
    station.ingest.authority.sent(txn, board, cmd, args)
    return txn


def decision_txn(station: Station, board: str, type_: str, data: dict[str, Any]) -> str:
    """The txn of the arbiter's command that asks exactly this decision: a ``resolve`` of the
    proposal it settles (its ``ref``), else the ``result`` or ``foul`` command it answers."""
    if data.get("ref") is not None:
        status = data.get("status", "confirmed")
        return arbiter_txn(station, board, "resolve", seq=data["ref"], status=status)
    if type_ == "result":
        return arbiter_txn(station, board, "result", winner=data["winner"], reason=data["reason"])
    if type_ == "foul":
        return arbiter_txn(station, board, "foul", side=data["side"], reason=data["reason"])
    raise ValueError(f"no arbiter's command asks a {type_} that settles no proposal")


class Feeder:
    """Board events with each board's seq running on across rounds, fed to a station without a
    broker. Results and rulings come from the arbiter's commands: they carry the station's txn."""

    def __init__(self, station: Station) -> None:
        self.station = station
        self.seq: dict[str, int] = {}

    def __call__(self, board: str, game: str, type: str, data: dict[str, Any]) -> int:
        seq = self.seq[board] = self.seq.get(board, 0) + 1
        decision = type == "result" or data.get("status") in ("confirmed", "dismissed")
        txn = decision_txn(self.station, board, type, data) if decision else None
        ev = envelope(board, seq, game=game, type=type, data=data, txn=txn)
        assert self.station.ingest is not None
        self.station.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())
        return seq

    def result(self, board: str, game: str, winner: str | None) -> None:
        reason = "agreed" if winner is None else "resign"
        self(board, game, "result", {"winner": winner, "reason": reason, "status": "confirmed"})

    async def flush(self) -> None:
        assert self.station.ingest is not None
        await self.station.ingest.flush()


class FakeNode:
    """A node's MQTT side with its own broker account (no clock): enough to test the station."""

    def __init__(
        self,
        broker: Any,
        node: str,
        boards: list[str],
        *,
        session: int = 1,
        answer: bool = True,
        keep_retained: bool = False,
    ) -> None:
        self.broker, self.node, self.boards, self.session = broker, node, boards, session
        self.topics = Topics(VENUE)
        self.outbox: dict[str, list[dict[str, Any]]] = {b: [] for b in boards}
        self.seq = dict.fromkeys(boards, 0)
        self.commands: list[tuple[str, Command]] = []
        self.answer = answer
        self.reply_ok = True
        self._stack = contextlib.AsyncExitStack()
        self.client: aiomqtt.Client | None = None
        self.retained: set[str] = set()  # cleared on exit: the session broker is shared
        self.keep_retained = keep_retained  # a test that means its retained message to outlive us

    async def __aenter__(self) -> FakeNode:
        self.client = await self._stack.enter_async_context(mqtt_client(self.broker, self.node))
        for b in self.boards:
            await self.client.subscribe(self.topics.cmd(b), qos=1)
        await self.client.subscribe(self.topics.venue_cmd, qos=1)
        task = asyncio.create_task(self._serve(), name=f"fake-{self.node}")
        self._stack.push_async_callback(_cancel, task)
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self._clear_retained()
        finally:
            await self._stack.aclose()

    async def _clear_retained(self) -> None:
        """Leave the broker as we found it: a status or state we retained on the session's
        ``venue_broker`` would otherwise greet the next test's station (a board 3 'online' from
        an earlier test made a later one wait forever for exactly two boards online)."""
        if self.client is None or self.keep_retained:
            return
        for topic in sorted(self.retained):
            with contextlib.suppress(aiomqtt.MqttError):
                await self.client.publish(topic, b"", qos=1, retain=True)
        self.retained.clear()

    def next_event(self, board: str, **kw: Any) -> dict[str, Any]:
        self.seq[board] += 1
        kw.setdefault("game", f"r1-b{board}")
        ev = envelope(board, self.seq[board], session=self.session, node=self.node, **kw)
        self.outbox[board].append(ev)
        return ev

    async def publish_event(self, ev: dict[str, Any]) -> None:
        assert self.client is not None
        await self.client.publish(self.topics.event(ev["board"]), json.dumps(ev).encode(), qos=1)

    async def emit(self, board: str, *, publish: bool = True, **kw: Any) -> dict[str, Any]:
        """Make the board's next event; ``publish=False`` keeps it in the outbox only (lost)."""
        ev = self.next_event(board, **kw)
        if publish:
            await self.publish_event(ev)
        return ev

    async def say_online(self) -> None:
        """Each board's retained ``online`` status, as a node's link says it on connecting."""
        for b in self.boards:
            body = {"state": "online", "node": self.node, "session": self.session, "ts": wall_ms()}
            await self.publish(self.topics.status(b), body, retain=True)

    async def publish(self, topic: str, payload: Any, *, retain: bool = False) -> None:
        assert self.client is not None
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        if retain:
            self.retained.add(topic)
        await self.client.publish(topic, body, qos=1, retain=retain)

    async def _serve(self) -> None:
        assert self.client is not None
        async for message in self.client.messages:
            topic = str(message.topic)
            cmd = Command.model_validate_json(message.payload)  # type: ignore[arg-type]
            boards = self.boards if topic == self.topics.venue_cmd else [topic.split("/")[4]]
            for board in boards:
                self.commands.append((board, cmd))
                if cmd.cmd == "rebirth":
                    for ev in self.outbox[board]:
                        await self.publish_event({**ev, "replay": True})
                if self.answer:
                    reply = Reply(
                        txn=cmd.txn, ok=self.reply_ok, error=None if self.reply_ok else "refused"
                    )
                    await self.client.publish(self.topics.reply(board), encode(reply), qos=1)


async def _cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
        await task


async def wait_until(
    predicate: Callable[[], bool], timeout: float = 5.0, what: str = "condition"
) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)
