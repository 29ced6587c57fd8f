"""Federation test fixtures: private nats-server centres (federation_hub.centre_runner), a
cuttable uplink, ``qizhong hub`` subprocesses. Fixture: ``nats_centre`` (one node, venues va, vb).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from broker_config import free_port
from federation_hub.centre_runner import HUB_USER, NatsCentre, venue_users

__all__ = ["HUB_USER", "CuttableLink", "HubProcess", "NatsCentre", "small_plan", "venue_users"]
from federation_hub.streams import StreamPlan


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

    def __init__(
        self, centre: NatsCentre, db: str, name: str, *, replicas: int, extra: tuple[str, ...] = ()
    ) -> None:
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
             "--max-bytes-mb", "128", "--name", name, "--log-level", "WARNING", *extra],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def metrics(self) -> dict[str, object]:
        return self.get("/api/metrics")  # type: ignore[no-any-return]

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=2) as r:
            return json.loads(r.read())

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
