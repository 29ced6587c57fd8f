"""Private nats-server processes (never the system one on 4222), from a generated config.

``NatsCentre.start(nodes=1|3, venues={...})`` writes federation_hub.centre_conf output for each
node on free loopback ports and starts ``/usr/sbin/nats-server``; ``kill(i)`` / ``restart(i)``
one node for failover tests; ``close()`` stops all (idempotent). Fixture: ``nats_centre``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from broker_config import free_port
from federation_hub.centre_conf import CentreNode, CentreUsers, render_centre_conf
from federation_hub.streams import StreamPlan

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
    def start(cls, *, nodes: int = 1, venues: Mapping[str, tuple[str, str]]) -> NatsCentre:
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
                    max_file_store_mb=512,
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


@pytest.fixture
def nats_centre() -> Iterator[NatsCentre]:
    centre = NatsCentre.start(nodes=1, venues=venue_users(["va", "vb"]))
    try:
        yield centre
    finally:
        centre.close()


def small_plan(**kw: object) -> StreamPlan:
    """Streams sized to the private servers' 512 MB file store."""
    kw.setdefault("max_bytes", 128 * 1024**2)
    return StreamPlan(**kw)  # type: ignore[arg-type]


class CuttableLink:
    """A TCP relay the test can cut and restore: a venue's uplink to the centre.

    Each connection goes to the first upstream port that accepts (the venue's ISP route to
    whichever centre node is alive). ``cut()`` drops every connection and refuses new ones;
    ``restore()`` listens again on the same port.
    """

    def __init__(self, upstream: list[int]) -> None:
        self.upstream = upstream
        self.port = free_port()
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def restore(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for w in list(self._writers):
            w.transport.abort()
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for port in self.upstream:
            try:
                up_r, up_w = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                continue
        else:
            writer.transport.abort()
            return
        self._writers.update((writer, up_w))

        async def pump(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                while chunk := await r.read(65536):
                    w.write(chunk)
                    await w.drain()
            except OSError:
                pass
            finally:
                w.transport.abort()

        try:
            await asyncio.gather(pump(reader, up_w), pump(up_r, writer))
        except asyncio.CancelledError:
            # The loop is closing with the link up: asyncio's server callback would log the
            # cancelled task as an error.
            writer.transport.abort()
            up_w.transport.abort()
            return
        self._writers.discard(writer)
        self._writers.discard(up_w)


class HubProcess:
    """A ``qizhong hub`` subprocess on a free HTTP port (killed with SIGKILL by ``kill``)."""

    def __init__(self, centre: NatsCentre, db: str, name: str, *, replicas: int) -> None:
        self.http_port = free_port()
        self.name = name
        pw = centre.directory / f"{name}.pw"
        pw.write_text(HUB_USER[1])
        self.log_path = centre.directory / f"{name}.log"
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by Popen
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "qizhong"), "hub", "--nats", ",".join(centre.urls),
             "--user", HUB_USER[0], "--password-file", str(pw), "--db", db,
             "--http", f"127.0.0.1:{self.http_port}", "--replicas", str(replicas),
             "--max-bytes-mb", "128", "--name", name, "--log-level", "WARNING"],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def metrics(self) -> dict[str, object]:
        url = f"http://127.0.0.1:{self.http_port}/api/metrics"
        with urllib.request.urlopen(url, timeout=2) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"hub {self.name} exited: {self.log_path.read_text()[-2000:]}")
            try:
                self.metrics()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"hub {self.name} not ready: {self.log_path.read_text()[-2000:]}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--federation-long",
        action="store_true",
        default=False,
        help="the federation acceptance with the issue's 60 s uplink cut (default: 6 s)",
    )
