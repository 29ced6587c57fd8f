"""Private nats-server processes for tests and benchmarks, from centre_conf output.

``NatsCentre.start(nodes=1|3, venues={...})`` writes each node's config on free loopback ports
and starts ``nats-server``; ``kill(i)`` / ``restart(i)`` one node (failover); ``close()`` stops
all and removes the directory (idempotent). Never the system server on 4222.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from federation_hub.centre_conf import CentreNode, CentreUsers, render_centre_conf

__all__ = ["HUB_USER", "NatsCentre", "free_port", "venue_users"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


NATS_SERVER = shutil.which("nats-server") or "/usr/sbin/nats-server"
HUB_USER = ("hub", "hub-secret")


def venue_users(venues: list[str]) -> dict[str, tuple[str, str]]:
    return {v: (f"venue-{v}", f"pw-{v}") for v in venues}


@dataclass
class NatsCentre:
    directory: Path
    nodes: list[CentreNode]
    users: CentreUsers
    procs: list[subprocess.Popen[bytes] | None] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        *,
        nodes: int = 1,
        venues: Mapping[str, tuple[str, str]],
        max_file_store_mb: int = 512,
    ) -> NatsCentre:
        directory = Path(tempfile.mkdtemp(prefix="qz-nats-"))
        ports = [[free_port() for _ in range(5)] for _ in range(nodes)]
        specs = []
        for i, (p, m, w, h, c) in enumerate(ports):
            others = [q[4] for j, q in enumerate(ports) if j != i] if nodes > 1 else []
            specs.append(
                CentreNode(
                    name=f"n{i + 1}",
                    host="127.0.0.1",
                    port=p,
                    mqtt_port=m,
                    ws_port=w,
                    http_port=h,
                    cluster_port=c if nodes > 1 else None,
                    routes=others,
                    max_file_store_mb=max_file_store_mb,
                    max_memory_store_mb=64,
                )
            )
        centre = cls(directory, specs, CentreUsers(venues=dict(venues), hub=HUB_USER))
        centre.procs = [None] * nodes
        for i in range(nodes):
            centre._launch(i)
        for i in range(nodes):
            centre.wait_ready(i)
        return centre

    def _launch(self, i: int) -> None:
        node = self.nodes[i]
        conf = self.directory / f"{node.name}.conf"
        conf.write_text(render_centre_conf(node, self.users, self.directory / node.name / "js"))
        log = open(self.directory / f"{node.name}.log", "ab")  # noqa: SIM115 - owned by Popen
        self.procs[i] = subprocess.Popen(
            [NATS_SERVER, "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT
        )

    def wait_ready(self, i: int, timeout: float = 30.0) -> None:
        node = self.nodes[i]
        url = f"http://127.0.0.1:{node.http_port}/healthz"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            proc = self.procs[i]
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"nats-server {node.name} exited: {self.log_tail(i)}")
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    if r.status == 200:
                        for port in (node.mqtt_port, node.ws_port):
                            socket.create_connection(("127.0.0.1", port), 1).close()
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"nats-server {node.name} not ready: {self.log_tail(i)}")

    def log_tail(self, i: int) -> str:
        path = self.directory / f"{self.nodes[i].name}.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    @property
    def urls(self) -> list[str]:
        return [f"nats://127.0.0.1:{n.port}" for n in self.nodes]

    def mqtt_urls(self) -> list[str]:
        return [f"mqtt://127.0.0.1:{n.mqtt_port}" for n in self.nodes]

    def kill(self, i: int) -> None:
        proc = self.procs[i]
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        self.procs[i] = None

    def restart(self, i: int) -> None:
        self.kill(i)
        self._launch(i)
        self.wait_ready(i)

    def close(self) -> None:
        for i in range(len(self.procs)):
            proc = self.procs[i]
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
            self.procs[i] = None
        shutil.rmtree(self.directory, ignore_errors=True)
