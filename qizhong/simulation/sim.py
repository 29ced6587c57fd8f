"""``qizhong sim``: many simulated boards in one process, against any broker and station.

For load: every node of a roster (or the ones named) runs in this one process with simulated
faces, each board on its own MQTT connection exactly as a real node does. The accounts come
from ``broker-config`` output (``--broker-dir``), so the broker's ACL applies as in a venue.
The station pairs and starts the games as usual; ``--start`` sets and starts a game on every
board itself, for a broker-only load run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import resource
import signal
import time
import uuid
from pathlib import Path
from typing import Any

from board_nodes.config import NodeConfig
from board_nodes.node import Node
from broker_config import BrokerFiles, Roster
from wire_contract import messages as wire

__all__ = ["SimFleet", "add_arguments", "run"]


def raise_fd_limit() -> int:
    """Thousands of boards are thousands of sockets and journals: lift the soft fd limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


class SimFleet:
    """The nodes of a roster, run in one process."""

    def __init__(
        self,
        roster: Roster,
        files: BrokerFiles,
        data_dir: Path,
        *,
        nodes: list[str] | None = None,
        speed: float = 10.0,
        mean_move_s: float = 20.0,
        durable: bool = False,
        regulation: str = "meishan-2016",
        seed: int = 1,
    ) -> None:
        wanted = set(nodes) if nodes else {n.id for n in roster.node}
        unknown = wanted - {n.id for n in roster.node}
        if unknown:
            raise ValueError(f"nodes not in the roster: {', '.join(sorted(unknown))}")
        listener = files.listener("mqtt")
        if listener is None:
            raise ValueError(f"{files.dir}: the broker has no plain mqtt listener")
        url = listener.url
        self.nodes: list[Node] = []
        board_index = 0  # over the whole roster, so no two boards replay the same players
        for entry in roster.node:
            if entry.id not in wanted:
                continue
            creds = files.credentials(entry.account)
            config = NodeConfig.model_validate(
                {
                    "venue": roster.venue,
                    "node": entry.id,
                    "regulation": regulation,
                    "data_dir": str(data_dir / entry.id),
                    "journal_durable": durable,
                    "broker": {"url": url, "username": creds.username, "password": creds.password},
                    "board": [
                        {
                            "id": board,
                            "face": "simulated",
                            "simulated": {
                                "mode": "random",
                                "mean_move_s": mean_move_s,
                                "speed": speed,
                                "seed": seed * 100_000 + board_index + i,
                            },
                        }
                        for i, board in enumerate(entry.boards)
                    ],
                }
            )
            self.nodes.append(Node(config))
            board_index += len(entry.boards)
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def boards(self) -> int:
        return sum(len(n.config.board) for n in self.nodes)

    async def start(self) -> None:
        for node in self.nodes:
            node.setup()
            self._tasks.append(asyncio.create_task(node.run(), name=f"node-{node.config.node}"))
        await asyncio.gather(*(n.started.wait() for n in self.nodes))

    async def wait_connected(self, timeout_s: float = 60.0) -> None:
        links = [link for n in self.nodes for link in n.links.values()]
        async with asyncio.timeout(timeout_s):
            await asyncio.gather(*(link.connected.wait() for link in links))

    async def start_games(self, tc: str = "30m+5s") -> None:
        """Set and start a game on every board from inside (no station needed)."""
        from board_nodes.commands import apply_command

        for node in self.nodes:
            for board in node.boards.values():
                args = wire.SetGameArgs(game=f"sim-{board.id}-{uuid.uuid4().hex[:6]}", tc=tc)
                apply_command(board, "set_game", args)
                apply_command(board, "start", wire.StartArgs())

    def stats(self) -> dict[str, Any]:
        links = [link for n in self.nodes for link in n.links.values()]
        return {
            "boards": self.boards,
            "connected": sum(link.connected.is_set() for link in links),
            "events_sent": sum(link.counters["events_sent"] for link in links),
            "backlog": sum(n.journal.unsent_count() for n in self.nodes if n.journal._db),
            "events_journaled": sum(b.last_seq for n in self.nodes for b in n.boards.values()),
        }

    async def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        for task in self._tasks:
            with contextlib.suppress(Exception):
                await task


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--roster", type=Path, required=True, help="the venue roster TOML")
    parser.add_argument(
        "--broker-dir", type=Path, required=True, help="`qizhong broker-config` output"
    )
    parser.add_argument("--data-dir", type=Path, default=Path("sim-data"))
    parser.add_argument("--nodes", default="", help="comma-separated node ids (default: all)")
    parser.add_argument("--speed", type=float, default=10.0)
    parser.add_argument("--mean-move-s", type=float, default=20.0)
    parser.add_argument("--duration", type=float, default=None, help="stop after S seconds")
    parser.add_argument("--start", action="store_true", help="set and start games by itself")
    parser.add_argument("--durable", action="store_true", help="fsync every event, as a Pi does")
    parser.add_argument("--log-level", default="WARNING")


async def _run(args: argparse.Namespace) -> int:
    roster = Roster.load(args.roster)
    fleet = SimFleet(
        roster,
        BrokerFiles.load(args.broker_dir),
        args.data_dir,
        nodes=[n for n in args.nodes.split(",") if n] or None,
        speed=args.speed,
        mean_move_s=args.mean_move_s,
        durable=args.durable,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await fleet.start()
    await fleet.wait_connected()
    if args.start:
        await fleet.start_games()
    started = time.monotonic()
    while not stop.is_set():
        if args.duration is not None and time.monotonic() - started >= args.duration:
            break
        print(json.dumps(fleet.stats()), flush=True)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5.0):  # not wait_for: it can swallow a cancellation
                await stop.wait()
    await fleet.stop()
    print(json.dumps(fleet.stats()), flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    limit = raise_fd_limit()
    nodes = args.nodes.split(",") if args.nodes else []
    print(f"qizhong sim: fd limit {limit}, nodes {','.join(nodes) or 'all'}", flush=True)
    return asyncio.run(_run(args))
