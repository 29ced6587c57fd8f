"""``qizhong demo`` ended with SIGTERM (``kill``, a terminal closed, a supervisor) stops its
venue as Ctrl-C does: an outsider found the tournament demo's station, nodes and broker still
running after ``kill <demo>``, holding their ports for the next try."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (its broker among them: the broker's folder is not the
    demo's)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = (Path("/proc") / entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _left_running(work: Path) -> list[str]:
    """Processes whose command line names the demo's folder (its station, nodes, broker)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = (Path("/proc") / pid / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if str(work).encode() in cmdline and int(pid) != os.getpid():
            found.append(f"{pid}: {cmdline.decode(errors='replace')[:200]}")
    return found


@pytest.mark.parametrize("mode", [["--tournament", "meishan"], ["--duration", "300"]])
def test_sigterm_stops_the_whole_demo(tmp_path: Path, mode: list[str]) -> None:
    work = tmp_path / "demo"
    cmd = [sys.executable, "-m", "qizhong", "demo", *mode, "--boards", "4", "--speed", "30",
           "--dir", str(work)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            if len([p for p in _left_running(work) if " node " in p]) >= 1:
                break  # the broker, the station and a node are up
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[0].decode()
        time.sleep(1.0)
        children = _children(proc.pid)
        assert len(children) >= 3  # the broker, the station, a node at least
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10
    while _left_running(work) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _left_running(work) + [f"{pid}: a child" for pid in children if _alive(pid)]
    for line in left:  # (do not leave them to the next test)
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(line.split(":")[0]), signal.SIGKILL)
    assert not left, out.decode()[-2000:]


def test_a_demo_whose_station_dies_stops_its_venue(tmp_path: Path) -> None:
    """The station killed under ``qizhong demo``: the demo said a traceback and left its node
    processes running (an outsider). It says what happened and stops the rest."""
    work = tmp_path / "demo"
    cmd = [sys.executable, "-m", "qizhong", "demo", "--duration", "300", "--boards", "4",
           "--speed", "30", "--dir", str(work)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            if any(" node " in p for p in _left_running(work)):
                break
            time.sleep(0.2)
        time.sleep(2.0)
        children = _children(proc.pid)
        (station,) = [int(p.split(":")[0]) for p in _left_running(work) if " station " in p]
        os.kill(station, signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 10
    while [p for p in children if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [p for p in children if _alive(p)]
    for pid in left:  # (never left to the next test, whatever is asserted below)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 2, out.decode()[-2000:]
    assert "stopping the venue" in out.decode()
    assert not left, out.decode()[-2000:]

