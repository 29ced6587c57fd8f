"""The chaos suite's parts: the plan, a TCP proxy that cuts nodes off, and the venue.

- ``--chaos-long`` (pytest option): run the long form (``chaos_long`` marker).
- :class:`ChaosPlan`: how many boards and which faults; :data:`SHORT` (CI) and :data:`LONG`.
- :class:`TcpProxy`: an asyncio TCP proxy between some nodes and the broker; ``cut(s)`` closes
  every proxied connection and refuses new ones for ``s`` seconds.
- :class:`ChaosVenue`: a :class:`qizhong.simulation.venue.LocalVenue` whose first nodes are
  ``qizhong node`` processes (durable journals: they get power-cut) and whose other nodes run
  in one ``qizhong sim`` process (non-durable journals: they only carry load); the proxied
  nodes get the proxy's port in their node.toml. The round itself is driven by
  :mod:`support.chaos_round`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from qizhong.simulation.venue import LocalVenue

__all__ = ["LONG", "SHORT", "ChaosPlan", "ChaosVenue", "TcpProxy"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--chaos-long",
        action="store_true",
        default=False,
        help="run the long form of the chaos suite (full fault counts, 30 s cut-offs)",
    )


@dataclass(frozen=True)
class ChaosPlan:
    """A round of ``boards`` boards and the faults injected during ``play_s`` seconds of it."""

    name: str
    boards: int = 100
    broker_kills: int = 1
    station_kills: int = 1
    power_cuts: int = 3  # distinct nodes, each SIGKILLed once and restarted
    cutoffs: int = 2  # nodes behind the proxy, cut off together once
    cutoff_s: float = 5.0
    play_s: float = 40.0  # the faults are spread over this much of the round
    down_s: float = 1.0  # how long a killed part stays dead before it is restarted
    speed: float = 10.0  # players think this many times faster than real players
    mean_move_s: float = 20.0
    slow_move_s: float = 300.0  # the proxied nodes' players: they flag during the round
    time_control: str = "30s+1s"
    seed: int = 7

    @property
    def process_nodes(self) -> int:
        return self.power_cuts + self.cutoffs


SHORT = ChaosPlan("short")
LONG = ChaosPlan(
    "long",
    broker_kills=3,
    station_kills=2,
    power_cuts=10,
    cutoffs=5,
    cutoff_s=30.0,
    play_s=240.0,
    down_s=2.0,
    time_control="3m+2s",
    slow_move_s=900.0,
)


class TcpProxy:
    """A byte pipe from ``127.0.0.1:port`` to ``target()``, which can be cut for a while."""

    def __init__(self, target: Callable[[], tuple[str, int]]) -> None:
        self._target = target
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._healing: asyncio.Task[None] | None = None
        self.port = 0
        self.accepted = 0
        self.cut_connections = 0

    async def start(self) -> TcpProxy:
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def connections(self) -> int:
        """Proxied connections open now."""
        return len(self._open) // 2

    @property
    def is_cut(self) -> bool:
        return self._healing is not None and not self._healing.done()

    def cut(self, seconds: float) -> None:
        """Drop every proxied connection now and refuse new ones (nothing listens on the
        port: a connect is refused, as when the link is down) for ``seconds``."""
        assert self._server is not None and not self.is_cut
        self._server.close()
        self._server = None
        self.cut_connections += self.connections
        for writer in list(self._open):
            writer.transport.abort()
        self._healing = asyncio.get_running_loop().create_task(self._heal(seconds))

    async def _heal(self, seconds: float) -> None:
        await asyncio.sleep(seconds)  # the length of the cut is the fault itself
        await self.start()

    async def wait_healed(self) -> None:
        if self._healing is not None:
            await self._healing

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target())
        except OSError:
            writer.transport.abort()  # the broker is down: the node sees what it would see
            return
        self.accepted += 1
        for w in (writer, up_writer):
            sock = w.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._open.add(w)
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            self._open.difference_update((writer, up_writer))

    async def close(self) -> None:
        if self._healing is not None:
            self._healing.cancel()
        if self._server is not None:
            self._server.close()
            for writer in list(self._open):
                writer.transport.abort()
            await self._server.wait_closed()
            self._server = None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.transport.abort()  # one side gone: the other goes too, as with a dead link


@dataclass
class ChaosVenue(LocalVenue):
    """The venue of the chaos round: node processes for the faulty nodes, one sim for the rest."""

    plan: ChaosPlan = SHORT
    proxy_port: int = 0
    sim_proc: subprocess.Popen[bytes] | None = None
    proxied: list[str] = field(default_factory=list)
    power_cut: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.boards, self.speed, self.seed = self.plan.boards, self.plan.speed, self.plan.seed
        self.regulation = str(self._regulation_file())
        super().__post_init__()
        nodes = list(self.node_boards)
        self.power_cut = nodes[: self.plan.power_cuts]
        self.proxied = nodes[self.plan.power_cuts : self.plan.process_nodes]
        for node in self.process_nodes:
            for board in self.node_boards[node]:
                plan = self.plans[board]
                plan.mean_move_s = self.plan.mean_move_s
                plan.power_off_after_s = None  # the faults here are the suite's, not the demo's
                plan.pause_probability = 0.0 if node in self.power_cut else plan.pause_probability
                if node in self.proxied:
                    plan.mean_move_s = self.plan.slow_move_s

    @property
    def process_nodes(self) -> list[str]:
        return self.power_cut + self.proxied

    @property
    def sim_nodes(self) -> list[str]:
        return [n for n in self.node_boards if n not in self.process_nodes]

    def _regulation_file(self) -> Path:
        # Meishan 2016 with a short time control, so that games flag within the round.
        text = (
            importlib.resources.files("clock_service.profiles") / "meishan-2016.toml"
        ).read_text(encoding="utf-8")
        text = re.sub(
            r'^time_control = "[^"]*"',
            f'time_control = "{self.plan.time_control}"',
            text,
            count=1,
            flags=re.M,
        )
        self.work.mkdir(parents=True, exist_ok=True)
        path = self.work / "chaos-regulation.toml"
        path.write_text(text.replace('name = "meishan-2016"', 'name = "chaos"'), encoding="utf-8")
        return path

    def start_node(self, node: str) -> None:
        if node in self.sim_nodes:
            return  # run by the sim process (start_sim)
        super().start_node(node)

    def _node_toml(self, node: str) -> Path:
        path = super()._node_toml(node)
        if node in self.proxied:
            assert self.broker is not None and self.proxy_port
            text = path.read_text(encoding="utf-8")
            path.write_text(
                text.replace(self.broker.url, f"mqtt://127.0.0.1:{self.proxy_port}"),
                encoding="utf-8",
            )
        return path

    def start_sim(self) -> None:
        assert self.broker is not None
        log = open(self.work / "sim.log", "ab")  # noqa: SIM115 — the process owns it
        self.sim_proc = subprocess.Popen(
            [
                sys.executable, "-m", "qizhong", "sim",
                "--roster", str(self.work / "roster.toml"),
                "--broker-dir", str(self.broker.dir),
                "--data-dir", str(self.work / "sim"),
                "--nodes", ",".join(self.sim_nodes),
                "--speed", str(self.plan.speed),
                "--mean-move-s", str(self.plan.mean_move_s),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip

    def check_alive(self) -> None:
        """Fail at once, naming the part, when a process that should run has exited."""
        if self.sim_proc is not None and self.sim_proc.poll() is not None:
            raise AssertionError(f"the sim process exited: see {self.work}/sim.log")
        for node in self.process_nodes:
            proc = self.nodes.get(node)
            if proc is not None and proc.poll() not in (None, -signal.SIGKILL):
                raise AssertionError(f"node {node} exited with {proc.returncode}")

    def restart_station(self, *, down_s: float, timeout_s: float = 60.0) -> None:
        """kill -9 the station, leave it dead ``down_s``, start it, wait until it answers."""
        assert self.station_proc is not None
        self.station_proc.kill()
        self.station_proc.wait(10)
        time.sleep(down_s)
        self.station_proc = self._spawn("station", "--config", str(self.work / "station.toml"))
        self._wait_http("/healthz", timeout_s)

    def restart_broker(self, *, down_s: float) -> None:
        assert self.broker is not None
        self.broker.kill()
        time.sleep(down_s)
        self.broker.start()

    def journals(self) -> dict[str, Path]:
        """Every node's journal file."""
        out = {n: self.work / "nodes" / n / "journal.sqlite3" for n in self.process_nodes}
        out.update({n: self.work / "sim" / n / "journal.sqlite3" for n in self.sim_nodes})
        return out

    def stop(self) -> None:
        if self.sim_proc is not None and self.sim_proc.poll() is None:
            self.sim_proc.send_signal(signal.SIGTERM)
            try:
                self.sim_proc.wait(30)
            except subprocess.TimeoutExpired:
                self.sim_proc.kill()
                self.sim_proc.wait(10)
        with contextlib.suppress(ProcessLookupError):
            super().stop()
