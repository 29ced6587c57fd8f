"""A whole venue on this machine: roster → broker → station → nodes, as real processes.

Used by ``qizhong demo``, the chaos suite and the scale run. Every part is the production
one: the broker is Mosquitto from ``broker-config`` output, the station and every node run as
``qizhong station`` / ``qizhong node`` processes with their own config files, and the only
stand-ins are the simulated clock faces.
"""

from __future__ import annotations

import json
import math
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker_config import MosquittoProcess, Roster, free_port
from qizhong.errors import QizhongError
from venue_station.auth import hash_password

__all__ = ["LocalVenue", "VenueError", "ensure_mosquitto"]

BOARDS_PER_NODE = 4
DISPLAY_ACCOUNT = "hall"
ARBITER = "arbiter"


class VenueError(QizhongError, RuntimeError):
    """A part of the local venue could not be set up or started; the message says which."""


def ensure_mosquitto() -> str:
    """The mosquitto binary, installed through apt when absent (with sudo when not root)."""
    found = shutil.which("mosquitto") or next(
        (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if os.path.exists(p)),
        None,
    )
    if found and shutil.which("mosquitto_passwd"):
        return found
    apt = shutil.which("apt-get")
    if apt is None:
        raise VenueError("mosquitto is not installed and there is no apt-get: install Mosquitto 2")
    prefix: list[str] = []
    if os.geteuid() != 0:
        sudo = shutil.which("sudo")
        if sudo is None:
            raise VenueError(
                "mosquitto is not installed; run as root or install it: "
                "sudo apt-get install mosquitto mosquitto-clients"
            )
        prefix = [sudo]
    print("installing mosquitto through apt…", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["update", "-qq"], ["install", "-y", "-qq", "mosquitto", "mosquitto-clients"]):
        if subprocess.run([*prefix, apt, *cmd], env=env, check=False).returncode != 0:
            raise VenueError("apt-get could not install mosquitto; install it by hand")
    return ensure_mosquitto()


@dataclass
class BoardPlan:
    board: str
    mean_move_s: float
    moves: int  # full moves after which the arbiter bot enters a result
    pause_probability: float = 0.0
    power_off_after_s: float | None = None


@dataclass
class LocalVenue:
    """``start()`` brings the venue up in ``work``; ``stop()`` takes it down cleanly."""

    work: Path
    boards: int = 40
    speed: float = 1.0
    seed: int = 2016
    venue: str = "demo"
    regulation: str = "meishan-2016"
    broker: MosquittoProcess | None = None
    station_proc: subprocess.Popen[bytes] | None = None
    nodes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    node_boards: dict[str, list[str]] = field(default_factory=dict)
    plans: dict[str, BoardPlan] = field(default_factory=dict)
    http_port: int = 0
    arbiter_password: str = ""
    _broker_dir: Path = field(default_factory=Path)

    def __post_init__(self) -> None:
        if self.boards < 1 or self.speed <= 0:
            raise VenueError("boards must be at least 1 and speed positive")
        rng = random.Random(self.seed)
        ids = [str(b) for b in range(1, self.boards + 1)]
        for n in range(math.ceil(self.boards / BOARDS_PER_NODE)):
            chunk = ids[n * BOARDS_PER_NODE : (n + 1) * BOARDS_PER_NODE]
            self.node_boards[f"pi-{n + 1:02d}"] = chunk
        for board in ids:
            # Xiangqi rapid: most players average 15–25 s a move; a few are slow and flag.
            mean = rng.uniform(15, 25)
            self.plans[board] = BoardPlan(board, mean, moves=rng.randint(25, 60))
        for board in rng.sample(ids, min(len(ids), max(1, self.boards // 15))):
            self.plans[board].mean_move_s = 75.0  # time trouble: a flag before the game ends
        for board in rng.sample(ids, min(len(ids), max(1, self.boards // 8))):
            self.plans[board].pause_probability = 0.01
        self.plans[ids[-1]].power_off_after_s = 240.0  # one clock switched off mid-game

    # -- files -------------------------------------------------------------------------------
    @property
    def roster(self) -> Roster:
        return Roster.build(
            venue=self.venue,
            nodes=self.node_boards,
            arbiters=[ARBITER],
            displays=[DISPLAY_ACCOUNT],
            websockets=("127.0.0.1", 9001),
        )

    def _station_toml(self) -> Path:
        assert self.broker is not None
        creds = self.broker.dir / "credentials" / "station.json"
        path = self.work / "station.toml"
        path.write_text(
            f'venue = "{self.venue}"\n'
            f'regulation = "{self.regulation}"\n'
            f'data_dir = "{self.work / "station"}"\n'
            f'roster = "{self.work / "roster.toml"}"\n'
            "[broker]\n"
            f'url = "{self.broker.url}"\n'
            'username = "station"\n'
            f'credentials_file = "{creds}"\n'
            "[http]\n"
            'host = "127.0.0.1"\n'
            f"port = {self.http_port}\n"
            "[[account]]\n"
            f'username = "{ARBITER}"\n'
            f'password_hash = "{hash_password(self.arbiter_password)}"\n'
            'role = "chief"\n',
            encoding="utf-8",
        )
        return path

    def _roster_toml(self) -> Path:
        path = self.work / "roster.toml"
        lines = [f'venue = "{self.venue}"']
        for node, boards in self.node_boards.items():
            lines += ["[[node]]", f'id = "{node}"', f"boards = {json.dumps(boards)}"]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def _node_toml(self, node: str) -> Path:
        assert self.broker is not None
        user, password = self.broker.credentials(node)
        pw_file = self.work / "nodes" / f"{node}.password"
        pw_file.parent.mkdir(parents=True, exist_ok=True)
        pw_file.write_text(password)
        pw_file.chmod(0o600)
        lines = [
            f'venue = "{self.venue}"',
            f'node = "{node}"',
            f'regulation = "{self.regulation}"',
            f'data_dir = "{self.work / "nodes" / node}"',
            "[broker]",
            f'url = "{self.broker.url}"',
            f'username = "{user}"',
            f'password_file = "{pw_file}"',
        ]
        for board in self.node_boards[node]:
            plan = self.plans[board]
            lines += [
                "[[board]]",
                f'id = "{board}"',
                'face = "simulated"',
                "[board.simulated]",
                'mode = "random"',
                f"mean_move_s = {plan.mean_move_s:.2f}",
                f"speed = {self.speed}",
                f"pause_probability = {plan.pause_probability}",
                f"seed = {self.seed * 1000 + int(board)}",
            ]
            if plan.power_off_after_s is not None:
                lines.append(f"power_off_after_s = {plan.power_off_after_s}")
        path = self.work / "nodes" / f"{node}.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    # -- life --------------------------------------------------------------------------------
    def start(self) -> None:
        ensure_mosquitto()
        self.work.mkdir(parents=True, exist_ok=True)
        os.chmod(self.work, 0o755)  # a root-started mosquitto drops to the mosquitto user
        self.arbiter_password = self.arbiter_password or f"qz-{secrets.randbelow(10**6):06d}"
        self.http_port = self.http_port or free_port()
        # The broker's folder must be reachable by the mosquitto user a root-started broker
        # becomes, whatever the work folder's parents allow: its own folder under /tmp.
        self._broker_dir = Path(tempfile.mkdtemp(prefix="qizhong-broker-"))
        os.chmod(self._broker_dir, 0o755)
        self.broker = MosquittoProcess.from_roster(self.roster, self._broker_dir / "broker")
        self._roster_toml()
        self.station_proc = self._spawn("station", "--config", str(self._station_toml()))
        self._wait_http("/healthz", 30)
        for node in self.node_boards:
            self.start_node(node)

    def _spawn(self, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.work / f"{args[0]}-{len(self.nodes)}.log", "ab")  # noqa: SIM115
        return subprocess.Popen(
            [sys.executable, "-m", "qizhong", *args, "--log-level", "WARNING"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the demo only; it stops the parts in order
        )

    def start_node(self, node: str) -> None:
        self.nodes[node] = self._spawn("node", "--config", str(self._node_toml(node)))

    def kill_node(self, node: str) -> None:
        """A power cut: SIGKILL, no goodbye."""
        proc = self.nodes[node]
        proc.kill()
        proc.wait(10)

    def _wait_http(self, path: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.station_proc is not None and self.station_proc.poll() is not None:
                raise VenueError(f"the station exited: see {self.work}/station-0.log")
            try:
                with urllib.request.urlopen(self.url + path, timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise VenueError(f"the station did not answer {path} within {timeout_s:.0f} s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def info(self) -> dict[str, Any]:
        assert self.broker is not None
        user, password = self.broker.credentials(DISPLAY_ACCOUNT)
        return {
            "venue": self.venue,
            "broker": {"url": self.broker.url, "websockets_port": self.broker.ws_port},
            "read_only": {"username": user, "password": password},
            "station": {
                "url": self.url,
                "display": self.url + "/",
                "arbiter": self.url + "/arbiter",
            },
            "arbiter": {"username": ARBITER, "password": self.arbiter_password},
            "boards": self.boards,
            "nodes": list(self.node_boards),
            "work": str(self.work),
        }

    def stop_nodes(self) -> None:
        """Every node ends as systemd ends it (SIGTERM; killed after 10 s), each saying
        offline; the station and the broker stay up."""
        procs = [p for p in self.nodes.values() if p.poll() is None]
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()

    def stop(self) -> None:
        """Nodes first (each says offline), then the station, then the broker."""
        self.stop_nodes()
        if self.station_proc is not None and self.station_proc.poll() is None:
            self.station_proc.send_signal(signal.SIGTERM)
            try:
                self.station_proc.wait(15)
            except subprocess.TimeoutExpired:
                self.station_proc.kill()
        if self.broker is not None:
            self.broker.close()
            shutil.rmtree(self._broker_dir, ignore_errors=True)
