"""``qizhong station`` runs on uvloop's event loop where it is installed (issue 30: a cheaper
turn of the loop for every message and stream), on asyncio's own with QZ_EVENT_LOOP=asyncio;
on either it serves, stores and stops (the rest of the suite runs the station in asyncio's
loop, and as this process on uvloop)."""

from __future__ import annotations

import json
import signal
import urllib.request
from pathlib import Path

import pytest
from support.station_proc import http_port, start_process, write_station_toml

pytestmark = pytest.mark.broker


@pytest.mark.parametrize(
    ("env", "loop"), [({}, "uvloop"), ({"QZ_EVENT_LOOP": "asyncio"}, "asyncio")]
)
def test_the_station_process_runs_on_the_loop_it_says(
    broker_factory, tmp_path: Path, env: dict[str, str], loop: str
) -> None:
    broker = broker_factory()
    log = tmp_path / "station.log"
    proc = start_process(write_station_toml(tmp_path, broker), log, env)
    try:
        port = http_port(log, proc)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
            assert json.loads(r.read())["ok"] is True
        assert f"event loop: {loop}" in log.read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
    assert proc.returncode == 0, log.read_text()[-2000:]
