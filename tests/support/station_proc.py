"""A real ``qizhong station`` process for the tests: its config file, the process with its log,
and the HTTP port it says it serves."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["http_port", "start_process", "write_station_toml"]


def write_station_toml(tmp_path: Path, broker: Any) -> Path:
    user, password = broker.credentials("station")
    path = tmp_path / "station.toml"
    path.write_text(
        'venue = "test"\n'
        "rebirth_grace_ms = 1500\n"
        f'data_dir = "{tmp_path / "data"}"\n'
        "[broker]\n"
        f'url = "mqtt://{broker.host}:{broker.port}"\n'
        f'username = "{user}"\n'
        f'password = "{password}"\n'
        f'client_id = "qz-station-proc-{os.getpid()}-{time.monotonic_ns()}"\n'
        "[http]\n"
        'host = "127.0.0.1"\n'
        "port = 0\n",
        encoding="utf-8",
    )
    return path


def start_process(
    config: Path, log: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    out = open(log, "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [sys.executable, "-m", "qizhong", "station", "--config", str(config), "--log-level",
         "INFO"],
        stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
    )  # fmt: skip


def http_port(log: Path, proc: subprocess.Popen[bytes], timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        for line in log.read_text(errors="replace").splitlines():
            if "http port" in line and " up:" in line:
                return int(line.rsplit("http port", 1)[1].strip())
        time.sleep(0.1)
    raise AssertionError(f"the station did not start: {log.read_text()}")
