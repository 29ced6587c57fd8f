"""Issue 31: the conformance kit a vendor runs against a clock, checked against the emulator.

``qizhong clock-conformance --url socket://…`` must pass against ``qizhong emulate-clock``
(both as the programs a vendor runs) and fail, naming the section of docs/protocol.md,
against an emulator with one rule broken on purpose (``--fault``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
QIZHONG = [sys.executable, "-m", "qizhong"]


@contextmanager
def emulate_clock(*extra: str, where: tuple[str, ...] = ("--listen", "socket://127.0.0.1:0")
                  ) -> Iterator[str]:  # fmt: skip
    """``qizhong emulate-clock`` on a free port (or a pty), pressing a key every 300 ms;
    yields its URL."""
    proc = subprocess.Popen(
        [*QIZHONG, "emulate-clock", *where, "--no-ui", "--auto-press-ms", "300", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("clock emulator: "), (first, proc.stderr and proc.stderr.read())
        yield first.split(": ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def conformance(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*QIZHONG, "clock-conformance", "--url", url, "--event-timeout", "5"],
        capture_output=True, text=True, env=ENV, timeout=90,
    )  # fmt: skip


def verdicts(out: str) -> list[tuple[str, str]]:
    """(PASS|FAIL, section) of every check line."""
    return [tuple(line.split()[:2]) for line in out.splitlines()  # type: ignore[misc]
            if line.startswith(("PASS ", "FAIL "))]  # fmt: skip


def test_the_kit_passes_a_clock_that_keeps_the_protocol() -> None:
    with emulate_clock() as url:
        done = conformance(url)
    lines = verdicts(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert lines and all(verdict == "PASS" for verdict, _ in lines), done.stdout
    # every case ran: handshake, refusals and bounds, resend, re-handshake, proof, refusal
    assert {s for _, s in lines} >= {"§2", "§3", "§4.1", "§4.2", "§4.4", "§5", "§6"}
    assert "0 failed" in done.stdout


def test_the_kit_passes_it_over_a_serial_port_too() -> None:
    # a pty: the clock spoke before the port was opened, so its HELLO comes on the first PING
    with emulate_clock(where=("--pty",)) as path:
        assert path.startswith("/dev/")
        done = conformance(path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 failed" in done.stdout


@pytest.mark.parametrize(
    ("fault", "section", "words"),
    [
        ("rewind-counter", "§4.4", "never moves the receive counter back"),
        ("no-rehandshake", "§5", "a new HELLO after the 9th send"),
        ("ignore-version-refusal", "§4.2", "a refused device sends no events"),
    ],
)
def test_the_kit_fails_a_clock_that_breaks_a_rule_naming_its_section(
    fault: str, section: str, words: str
) -> None:
    with emulate_clock("--fault", fault) as url:
        done = conformance(url)
    assert done.returncode == 1, done.stdout + done.stderr
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL ")]
    assert failed and all(line.split()[1] == section for line in failed), done.stdout
    assert any(words in line for line in failed), done.stdout
    assert f"(sections {section})" in done.stdout


def test_the_kit_says_so_when_the_clock_is_not_there() -> None:
    done = conformance("socket://127.0.0.1:9")  # the discard port: nothing listens
    assert done.returncode == 2, done.stdout + done.stderr
    assert "FAIL §1 the line opens" in done.stdout
