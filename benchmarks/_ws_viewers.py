"""Public viewers for benchmarks/federation.py: many raw WebSocket NATS subscribers per process.

A nats-py client per viewer costs the benchmark's process more than nats-server's fan-out does
(1,000 of them saturated one Python process first), so a viewer here is the least a browser's
NATS-over-WebSocket client does: the HTTP upgrade, ``CONNECT`` + ``SUB`` + ``PING``, answer the
server's ``PING``, read ``MSG``s — an ``asyncio.Protocol`` with no task, no buffer objects and no
reconnect. Each message's latency is (received wall ms − the publisher's ``ts`` in the payload);
same machine, same clock. :func:`viewer_process` runs ``count`` of them in a child process and
talks to the parent over a ``multiprocessing`` pipe:

    child → ("ready", connected, failed)       every viewer subscribed (or refused)
    parent → "go"                              the measurement window starts
    parent → "stop"                            the measurement window is over
    child → ("done", lat, sent, stats)         array('l') latency ms and array('q') publish ms,
                                               as bytes; counters, CPU and run-queue seconds
"""

from __future__ import annotations

import asyncio
import base64
import os
import resource
import time
from array import array
from pathlib import Path
from typing import Any

__all__ = ["sched_s", "viewer_process"]

CONNECT = (
    b'CONNECT {"verbose":false,"pedantic":false,"protocol":1,"echo":false,'
    b'"headers":false,"no_responders":false,"lang":"bench","version":"0"}\r\n'
)
HANDSHAKES_AT_ONCE = 200  # connections being opened together per process
CONNECT_TIMEOUT_S = 30.0


def sched_s(pid: int | str = "self") -> tuple[float, float]:
    """(seconds on a CPU, seconds runnable but waiting for one) of all a process's threads.

    The second is how long the machine's other work kept this process from running: on a
    shared machine it tells a saturated process from a starved one (/proc/<pid>/schedstat).
    """
    run = wait = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:
            continue  # a thread that ended meanwhile
        run, wait = run + int(fields[0]), wait + int(fields[1])
    return run / 1e9, wait / 1e9


def _frame(payload: bytes) -> bytes:
    """A client→server binary frame: FIN, masked (RFC 6455 requires the client to mask)."""
    key = os.urandom(4)
    n = len(payload)
    head = bytes([0x82, 0x80 | n]) if n < 126 else bytes([0x82, 0x80 | 126]) + n.to_bytes(2)
    mask = (key * (n // 4 + 1))[:n]
    body = (int.from_bytes(payload) ^ int.from_bytes(mask)).to_bytes(n) if n else b""
    return head + key + body


class Viewer(asyncio.Protocol):
    def __init__(self, host: str, port: int, subject: str, sink: Sink) -> None:
        self.host, self.port, self.subject, self.sink = host, port, subject, sink
        self.transport: asyncio.Transport | None = None
        self.upgraded = False
        self.raw = b""  # WebSocket bytes not yet a whole frame
        self.text = b""  # NATS protocol bytes not yet a whole line/message
        self.subscribed: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            (
                f"GET / HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )

    def connection_lost(self, exc: Exception | None) -> None:
        self.sink.lost += 1
        if not self.subscribed.done():
            self.subscribed.set_result(False)

    def data_received(self, data: bytes) -> None:
        raw = self.raw + data if self.raw else data
        if not self.upgraded:
            end = raw.find(b"\r\n\r\n")
            if end < 0:
                self.raw = raw
                return
            if not raw.startswith(b"HTTP/1.1 101"):
                self._fail()
                return
            self.upgraded = True
            raw = raw[end + 4 :]
        pos, size = 0, len(raw)
        while size - pos >= 2:
            b0, b1 = raw[pos], raw[pos + 1]
            n, head = b1 & 0x7F, 2
            if n == 126:
                if size - pos < 4:
                    break
                n, head = int.from_bytes(raw[pos + 2 : pos + 4]), 4
            elif n == 127:
                if size - pos < 10:
                    break
                n, head = int.from_bytes(raw[pos + 2 : pos + 10]), 10
            if size - pos < head + n:
                break
            opcode = b0 & 0x0F
            if opcode in (0, 1, 2):
                self._nats(raw[pos + head : pos + head + n])
            elif opcode == 8:
                self._fail()
                return
            pos += head + n
        self.raw = raw[pos:]

    def _nats(self, data: bytes) -> None:
        buf = self.text + data if self.text else data
        pos = 0
        while True:
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                break
            line = buf[pos:eol]
            if line.startswith(b"MSG "):
                size = int(line.rsplit(b" ", 1)[1])
                if len(buf) < eol + 2 + size + 2:
                    break
                self.sink.got(buf[eol + 2 : eol + 2 + size])
                pos = eol + 2 + size + 2
                continue
            pos = eol + 2
            if line.startswith(b"PING"):
                self._send(b"PONG\r\n")
            elif line.startswith(b"PONG"):
                if not self.subscribed.done():
                    self.subscribed.set_result(True)
            elif line.startswith(b"INFO"):
                self._send(CONNECT + f"SUB {self.subject} 1\r\nPING\r\n".encode())
            elif line.startswith(b"-ERR"):
                self.sink.errors += 1
        self.text = buf[pos:]

    def _send(self, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(_frame(payload))

    def _fail(self) -> None:
        if self.transport is not None:
            self.transport.close()


class Sink:
    """What one process's viewers received: latencies in ms, and what went wrong."""

    def __init__(self) -> None:
        self.lat = array("l")
        self.sent = array("q")  # each update's publish ms, to split the window afterwards
        self.lost = 0
        self.errors = 0
        self.bad = 0
        self.recording = False
        self.last_ms = 0  # wall ms of the last update received

    def got(self, payload: bytes) -> None:
        # The publisher's payload ends with ``"ts": <ms>}`` (benchmarks/federation.py): found
        # by hand, as json.loads per message was most of this process's cost.
        now = time.time_ns() // 1_000_000
        at = payload.rfind(b'"ts": ')
        try:
            ts = int(payload[at + 6 : -1])
        except ValueError:
            self.bad += 1
            return
        if self.recording and at >= 0:
            self.lat.append(now - ts)
            self.sent.append(ts)
            self.last_ms = now


async def _open(host: str, port: int, subject: str, count: int, sink: Sink) -> list[Viewer]:
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(HANDSHAKES_AT_ONCE)
    viewers: list[Viewer] = []

    async def one() -> None:
        async with gate:
            try:
                _, proto = await asyncio.wait_for(
                    loop.create_connection(lambda: Viewer(host, port, subject, sink), host, port),
                    CONNECT_TIMEOUT_S,
                )
                ok = await asyncio.wait_for(proto.subscribed, CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError):
                return
            if ok:
                viewers.append(proto)

    await asyncio.gather(*(one() for _ in range(count)))
    return viewers


async def _serve(conn: Any, host: str, port: int, subject: str, count: int) -> None:
    sink = Sink()
    viewers = await _open(host, port, subject, count, sink)
    lost_at_ready = sink.lost
    conn.send(("ready", len(viewers), count - len(viewers)))
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, conn.recv)  # "go": the parent's window starts
    sink.recording = True
    run0, wait0 = sched_s()
    await loop.run_in_executor(None, conn.recv)  # "stop"
    sink.recording = False
    run1, wait1 = sched_s()
    stats = {
        "lost_during": sink.lost - lost_at_ready,
        "errors": sink.errors,
        "bad": sink.bad,
        "cpu_s": round(run1 - run0, 2),
        "wait_s": round(wait1 - wait0, 2),
        "last_ms": sink.last_ms,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    for v in viewers:
        if v.transport is not None:
            v.transport.close()
    conn.send(("done", sink.lat.tobytes(), sink.sent.tobytes(), stats))


def viewer_process(conn: Any, host: str, port: int, subject: str, count: int) -> None:
    """A child process's body: ``count`` viewers of ``subject`` on ws://host:port."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 64)), hard))
    asyncio.run(_serve(conn, host, port, subject, count))
