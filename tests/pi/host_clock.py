"""``qizhong emulate-clock`` on the host, for tests/pi: the program itself (not the class), its
keys typed as a person would, on a pty that is its stdin (its keyboard UI needs a terminal)."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

# The emulator's keyboard (firmware_bridge.serial.emulator_cli.KEYS) for what the serial self-test
# asks (firmware_bridge.selftest_steps.KEY_STEPS, English): the power switch toggles, so "o" twice.
KEY_FOR_ASK = {
    "press RED's button": "a",
    "press BLACK's button": "l",
    "press the PAUSE key": "p",
    "press the ARBITER key": "r",
    "switch the clock OFF": "o",
    "switch the clock ON": "o",
}


class HostClock:
    """A running ``qizhong emulate-clock --listen socket://127.0.0.1:0``; ``close()`` stops it
    with SIGTERM (it stops cleanly on that) and is idempotent."""

    def __init__(self, *, log: Path, start_s: float = 60.0) -> None:
        self.log = log
        self._master, slave = pty.openpty()
        qizhong = Path(sys.executable).with_name("qizhong")
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [str(qizhong), "emulate-clock", "--listen", "socket://127.0.0.1:0"],
                stdin=slave, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        os.close(slave)
        self.returncode: int | None = None
        self.url = self._wait_url(start_s)

    def _wait_url(self, start_s: float) -> str:
        deadline = time.monotonic() + start_s
        while time.monotonic() < deadline:
            first = self.log.read_text(errors="replace").split("\n", 1)
            if len(first) == 2 and first[0].startswith("clock emulator: "):
                return first[0].removeprefix("clock emulator: ").strip()
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.close()
        raise AssertionError(f"emulate-clock gave no url: {self.output()[-2000:]!r}")

    def type(self, key: str) -> None:
        os.write(self._master, key.encode())

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def close(self) -> int:
        if self.returncode is None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.returncode = self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.returncode = self.proc.wait()
            os.close(self._master)
        return self.returncode
