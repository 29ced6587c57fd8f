"""Helpers for node tests: a node config for a test broker, and a station-side probe."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiomqtt

from board_nodes.board import Board
from board_nodes.config import NodeConfig
from board_nodes.journal import Journal
from board_nodes.node import Node
from firmware_bridge.face import ClockFace
from support.broker import mqtt_client


def node_config(
    broker: Any,
    node: str,
    boards: list[str],
    data_dir: Path,
    *,
    mode: str = "idle",
    regulation: str = "meishan-2016",
    **simulated: Any,
) -> NodeConfig:
    user, password = broker.credentials(node)
    return NodeConfig.model_validate(
        {
            "venue": "test",
            "node": node,
            "regulation": regulation,
            "data_dir": str(data_dir),
            "broker": {
                "url": broker.url,
                "username": user,
                "password": password,
                "reconnect_min_s": 0.05,
                "reconnect_max_s": 0.5,
            },
            "board": [
                {"id": b, "face": "simulated", "simulated": {"mode": mode, **simulated}}
                for b in boards
            ],
        }
    )


def write_node_toml(config: NodeConfig, path: Path) -> Path:
    b = config.broker
    lines = [
        f'venue = "{config.venue}"',
        f'node = "{config.node}"',
        f'regulation = "{config.regulation}"',
        f'data_dir = "{config.data_dir}"',
        "[broker]",
        f'url = "{b.url}"',
        f'username = "{b.username}"',
        f'password = "{b.password}"',
        f"reconnect_min_s = {b.reconnect_min_s}",
        f"reconnect_max_s = {b.reconnect_max_s}",
    ]
    for board in config.board:
        sim = board.simulated
        lines += [
            "[[board]]",
            f'id = "{board.id}"',
            'face = "simulated"',
            "[board.simulated]",
            f'mode = "{sim.mode}"',
            f"mean_move_s = {sim.mean_move_s}",
            f"speed = {sim.speed}",
        ]
        if sim.seed is not None:
            lines.append(f"seed = {sim.seed}")
    path.write_text("\n".join(lines) + "\n")
    return path


@contextlib.asynccontextmanager
async def running_node(
    config: NodeConfig, faces: dict[str, ClockFace] | None = None, *, journal: Journal | None = None
) -> AsyncIterator[Node]:
    node = Node(config, faces=faces, journal=journal)
    task = asyncio.create_task(node.run(), name="node-under-test")
    try:
        async with asyncio.timeout(10):
            await node.started.wait()
            for link in node.links.values():
                await link.connected.wait()
        yield node
    finally:
        node.stop()
        async with asyncio.timeout(10):
            await task
        await _forget_states(config)


async def _forget_states(config: NodeConfig) -> None:
    """Clear the boards' retained state, so a later test's station on the same shared broker
    does not take this finished test's boards for live ones (their status stays: offline)."""
    b = config.broker
    with contextlib.suppress(aiomqtt.MqttError):
        async with aiomqtt.Client(
            b.host, b.port, username=b.username, password=b.read_password(),
            protocol=aiomqtt.ProtocolVersion.V5,
        ) as client:  # fmt: skip
            for board in config.board:
                topic = f"qz/v1/{config.venue}/board/{board.id}/state"
                await client.publish(topic, b"", qos=1, retain=True)


class Probe:
    """The station's view of a board's topics, through the station's real account."""

    def __init__(self, broker: Any, *, venue: str = "test") -> None:
        self.client = mqtt_client(broker, "station")
        self.root = f"qz/v1/{venue}"
        self.events: list[dict[str, Any]] = []
        self.states: dict[str, dict[str, Any]] = {}
        self.status: dict[str, dict[str, Any]] = {}
        self.replies: dict[str, dict[str, Any]] = {}
        self.board_replies: dict[tuple[str, str], dict[str, Any]] = {}  # (board, txn): a venue cmd
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Probe:
        await self.client.__aenter__()
        await self.client.subscribe(f"{self.root}/#", qos=1)
        self._task = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await self._task
        with contextlib.suppress(aiomqtt.MqttError):
            await self.client.__aexit__(None, None, None)

    async def _read(self) -> None:
        async for message in self.client.messages:
            parts = str(message.topic).split("/")
            if parts[-1] == "cmd":
                continue  # ours, or deliberately malformed ones
            body = json.loads(message.payload) if message.payload else None
            if parts[3] == "board" and body is not None:
                board, leaf = parts[4], parts[5]
                if leaf == "event":
                    self.events.append(body)
                elif leaf == "state":
                    self.states[board] = body
                elif leaf == "status":
                    self.status[board] = body
                elif leaf == "reply":
                    self.replies[body["txn"]] = body
                    self.board_replies[(board, body["txn"])] = body
            async with self._changed:
                self._changed.notify_all()

    async def wait_for(self, predicate: Any, timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(predicate)

    def board_events(self, board: str, type_: str | None = None) -> list[dict[str, Any]]:
        return [
            e for e in self.events if e["board"] == board and (type_ is None or e["type"] == type_)
        ]

    async def command(
        self, board: str, cmd: str, args: dict[str, Any] | None = None, *, txn: str | None = None
    ) -> dict[str, Any]:
        txn = txn or uuid.uuid4().hex[:12]
        # A txn sent again waits for its new answer, not the one already here (a load-slowed
        # node had not yet answered the second clock probe the test asked about).
        self.replies.pop(txn, None)
        payload = json.dumps({"txn": txn, "cmd": cmd, "args": args or {}})
        await self.client.publish(f"{self.root}/board/{board}/cmd", payload, qos=1)
        await self.wait_for(lambda: txn in self.replies)
        return self.replies[txn]

    async def raw_command(self, board: str, payload: bytes | str) -> None:
        await self.client.publish(f"{self.root}/board/{board}/cmd", payload, qos=1)

    async def venue_command(self, cmd: str, args: dict[str, Any] | None = None) -> str:
        txn = uuid.uuid4().hex[:12]
        payload = json.dumps({"txn": txn, "cmd": cmd, "args": args or {}})
        await self.client.publish(f"{self.root}/venue/cmd", payload, qos=1)
        return txn


def journaled_seqs(path: Path, board: str) -> list[int]:
    """The seqs of ``board``'s events in the journal file at ``path``, read as another process
    would (read-only, beside the node's own connections)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT seq FROM outbox WHERE board=? ORDER BY seq", (board,))
        return [r[0] for r in rows]
    finally:
        db.close()


def journaled_events(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """(board, seq) → payload of every event in the journal file at ``path``, read-only."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT board, seq, payload FROM outbox").fetchall()
    finally:
        db.close()
    return {(board, seq): json.loads(payload) for board, seq, payload in rows}


def start_node_process(toml: Path, *, stderr: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """``qizhong node --config toml`` as its own process (systemd's way to run it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "qizhong", "node", "--config", str(toml), "--log-level", "WARNING"],
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )


def black_loses_by_two_fouls(board: Board) -> int:
    """On a ``simulated_board``: a 30m+5s game, red's first move, then two fouls of black's —
    in Meishan the second loses the game at once. Returns the first foul's seq."""
    from board_nodes.commands import apply_command
    from clock_service import Side
    from wire_contract import messages as wire

    def command(name: str, **args: Any) -> None:
        apply_command(board, name, wire.COMMAND_ARGS[name].model_validate(args))

    command("set_game", game="g1", tc="30m+5s")
    assert board.clock is not None
    board.emit_clock_events(board.clock.start())
    board.press(Side.RED)
    command("foul", side="black", reason="disturbing")
    first = board.last_seq
    command("foul", side="black", reason="phone")
    return first


@contextlib.contextmanager
def simulated_board(tmp_path: Path, *, regulation: str = "meishan-2016") -> Iterator[Board]:
    """Board 7 of a node on a journal in ``tmp_path`` (not durable), its face simulated and
    idle: a board's own rules, without a broker."""
    from clock_service import Regulation
    from firmware_bridge.simulated import SimulatedFace

    journal = Journal(tmp_path / "j.sqlite3", durable=False).open()
    board = Board(
        "7", venue="t", node="n", session=1, regulation=Regulation.load(regulation),
        face=SimulatedFace(mode="idle"), journal=journal,
    )  # fmt: skip
    try:
        yield board
    finally:
        board.close()
        journal.close()
