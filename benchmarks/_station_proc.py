"""A station as the venue runs it: ``qizhong station --config station.toml``, its own process.

The latency benchmarks measure what the arbiter waits for: the station must not share its event
loop with the benchmark's load generator, probe and HTTP client (in one process each of them
delays the others, and the figure is the benchmark's, not the station's).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ARBITER, ARBITER_PASSWORD = "arb", "bench-pw-1"


def station_toml(broker: Any, data_dir: Path, *, venue: str, extra: str = "") -> str:
    from venue_station.auth import hash_password

    user, password = broker.credentials("station")
    return (
        f'venue = "{venue}"\n'
        f'data_dir = "{data_dir}"\n'
        "rebirth_grace_ms = 600000\n"
        f"{extra}"
        "[broker]\n"
        f'url = "mqtt://{broker.host}:{broker.port}"\n'
        f'username = "{user}"\n'
        f'password = "{password}"\n'
        f'client_id = "bench-{uuid.uuid4().hex[:8]}"\n'
        "[http]\n"
        'host = "127.0.0.1"\n'
        "port = 0\n"
        "[[account]]\n"
        f'username = "{ARBITER}"\n'
        f'password_hash = "{hash_password(ARBITER_PASSWORD)}"\n'
        'role = "chief"\n'
    )


@contextlib.contextmanager
def station_process(broker: Any, folder: Path, *, venue: str, extra: str = "") -> Iterator[str]:
    """A station process on ``broker`` with its data in ``folder``; yields its HTTP URL."""
    config = folder / "station.toml"
    config.write_text(station_toml(broker, folder / "data", venue=venue, extra=extra))
    log = folder / "station.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "qizhong", "station", "--config", str(config)],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{_port(log, proc)}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _port(log: Path, proc: subprocess.Popen[bytes], timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the station exited: {log.read_text(errors='replace')[-2000:]}")
        for line in log.read_text(errors="replace").splitlines():
            if "http port" in line and " up:" in line:
                return int(line.rsplit("http port", 1)[1].strip())
        time.sleep(0.05)
    raise RuntimeError(f"the station did not start: {log.read_text(errors='replace')[-2000:]}")


if __name__ == "__main__":
    print("benchmarks/_station_proc.py is a helper of the station benchmarks, not one")
