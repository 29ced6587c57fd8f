"""``MosquittoProcess``: a private Mosquitto started from a broker-config directory.

For tests, the demo and benchmarks. The ports live in the written mosquitto.conf, so
:meth:`MosquittoProcess.from_roster` picks free loopback ports first and writes the
directory with them; :meth:`restart` keeps the same ports and the same persistence.
Every process still running when the interpreter exits is killed (``atexit``).
"""

from __future__ import annotations

import atexit
import os
import pwd
import signal
import socket
import stat
import subprocess
import time
import weakref
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from broker_config.errors import MosquittoError
from broker_config.files import BrokerFiles, Listener, write_broker_config
from broker_config.passwords import MOSQUITTO_GROUP, find_tool
from broker_config.roster import Roster

__all__ = ["MosquittoProcess", "free_port", "reap_orphans"]

_LIVE: weakref.WeakSet[MosquittoProcess] = weakref.WeakSet()
REBIND_WITHIN_S = 10.0  # how long a restart waits for its old ports to be free again


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the kernel's pick)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _check_reachable(directory: Path) -> None:
    # Started as root, mosquitto becomes the mosquitto user before reading its files: every
    # folder above DIR must let that user through (pytest's 0700 tmp folders do not).
    if os.geteuid() != 0:
        return
    try:
        user = pwd.getpwnam(MOSQUITTO_GROUP)
    except KeyError:
        return
    gids = set(os.getgrouplist(user.pw_name, user.pw_gid))
    for folder in [*reversed(directory.parents), directory]:
        st = os.stat(folder)
        bit = (
            stat.S_IXUSR
            if st.st_uid == user.pw_uid
            else stat.S_IXGRP
            if st.st_gid in gids
            else stat.S_IXOTH
        )
        if not st.st_mode & bit:
            raise MosquittoError(
                f"the {MOSQUITTO_GROUP} user cannot enter {folder} (mode "
                f"{stat.filemode(st.st_mode)}); mosquitto drops to that user when started "
                f"as root: put the broker directory where it can reach it (e.g. under /tmp)"
            )


class MosquittoProcess:
    """One mosquitto process over one broker directory."""

    def __init__(
        self,
        directory: str | Path | BrokerFiles,
        *,
        mosquitto: str | None = None,
        start_timeout: float = 10.0,
    ) -> None:
        self.files = (
            directory if isinstance(directory, BrokerFiles) else BrokerFiles.load(directory)
        )
        self._exe = find_tool("mosquitto", mosquitto)
        self._start_timeout = start_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._console = self.files.dir / "log" / "console.log"
        self._owner_file = self.files.dir / "log" / "runner.pid"

    @classmethod
    def from_roster(
        cls,
        roster: Roster,
        directory: str | Path,
        *,
        free_ports: bool = True,
        start: bool = True,
        mosquitto: str | None = None,
    ) -> MosquittoProcess:
        """Write ``directory`` for ``roster`` (on free loopback ports unless told not to), start."""
        if free_ports:
            ls = roster.listeners
            roster = roster.with_ports(
                port=free_port(ls.host),
                ws_port=free_port(ls.websockets.host) if ls.websockets else None,
                tls_port=free_port(ls.tls.host or ls.host) if ls.tls else None,
            )
        proc = cls(write_broker_config(roster, directory), mosquitto=mosquitto)
        return proc.start() if start else proc

    # -- addresses ------------------------------------------------------------------------
    def _listener(self, kind: str) -> Listener:
        found = next((x for x in self.files.listeners if x.kind == kind), None)
        if found is None:
            raise MosquittoError(f"{self.files.dir}: no {kind} listener in this configuration")
        return found

    @property
    def dir(self) -> Path:
        return self.files.dir

    @property
    def host(self) -> str:
        return self._listener("mqtt").host

    @property
    def port(self) -> int:
        return self._listener("mqtt").port

    @property
    def url(self) -> str:
        return self._listener("mqtt").url

    @property
    def ws_port(self) -> int:
        return self._listener("websockets").port

    @property
    def ws_host(self) -> str:
        return self._listener("websockets").host

    @property
    def tls_port(self) -> int:
        return self._listener("mqtts").port

    def credentials(self, username: str) -> tuple[str, str]:
        c = self.files.credentials(username)
        return c.username, c.password

    # -- life -----------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> MosquittoProcess:
        if self.running:
            return self
        _check_reachable(self.files.dir)
        log_offset = self._log_size()
        with open(self._console, "ab") as console:
            self._proc = subprocess.Popen(
                [self._exe, "-c", str(self.files.conf)],
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a ^C in the terminal is for pytest, not for it
            )
        _LIVE.add(self)
        # Who started it: lets a later run reap it if this interpreter dies without atexit.
        self._owner_file.write_text(f"{self._proc.pid} {os.getpid()}\n")
        self._wait_ready(log_offset)
        return self

    def _log_size(self) -> int:
        try:
            return int(self.files.log_file.stat().st_size)
        except OSError:
            return 0

    def _wait_ready(self, log_offset: int) -> None:
        deadline = time.monotonic() + self._start_timeout
        pending = list(self.files.listeners)
        logged = False
        while True:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise MosquittoError(
                    f"mosquitto exited with {self._proc.returncode} at start:\n{self.log_tail()}"
                )
            pending = [x for x in pending if not _accepts(x)]
            logged = logged or _says_running(self.files.log_file, log_offset)
            if not pending and logged:
                return
            if time.monotonic() > deadline:
                self.kill()
                waiting = ", ".join(x.url for x in pending) or "the 'running' log line"
                raise MosquittoError(
                    f"mosquitto not ready after {self._start_timeout} s "
                    f"(waiting for {waiting}):\n{self.log_tail()}"
                )
            time.sleep(0.02)

    def kill(self) -> None:
        """SIGKILL: no goodbye, no final save (only what autosave wrote survives)."""
        self._stop(signal.SIGKILL, timeout=10.0)

    def terminate(self, timeout: float = 10.0) -> None:
        """SIGTERM: mosquitto saves its persistence file and exits; SIGKILL after ``timeout``."""
        self._stop(signal.SIGTERM, timeout=timeout)

    def _stop(self, sig: signal.Signals, timeout: float) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def restart(self, *, kill: bool = False) -> MosquittoProcess:
        """Stop (SIGKILL if ``kill`` else SIGTERM) and start again on the same ports and data."""
        if kill:
            self.kill()
        else:
            self.terminate()
        # The old listeners' ports may not be free again at once (a websockets listener's
        # socket lingers, or a client's ephemeral port lands on it meanwhile): mosquitto then
        # exits "Unable to create ... listener". Try again for a while, never on other errors.
        deadline = time.monotonic() + REBIND_WITHIN_S
        while True:
            log_offset = self._log_size()
            try:
                return self.start()
            except MosquittoError:
                if time.monotonic() > deadline or not self._bind_failed(log_offset):
                    raise
                time.sleep(0.25)

    def _bind_failed(self, log_offset: int) -> bool:
        try:
            with open(self.files.log_file, "rb") as f:
                f.seek(log_offset)
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return False
        return "Unable to create" in text or "Address already in use" in text

    def close(self) -> None:
        self.terminate()
        _LIVE.discard(self)

    def log_tail(self, lines: int = 30) -> str:
        out = []
        for path in (self._console, self.files.log_file):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if text.strip():
                out.append(f"--- {path}\n" + "\n".join(text.splitlines()[-lines:]))
        return "\n".join(out) or "(mosquitto logged nothing)"

    def __enter__(self) -> MosquittoProcess:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = f"pid={self.pid}" if self.running else "stopped"
        return f"<MosquittoProcess {self.files.dir} {self.url} {state}>"


def _accepts(listener: Listener) -> bool:
    family = socket.AF_INET6 if ":" in listener.host else socket.AF_INET
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(listener.host, listener.host)
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((host, listener.port)) == 0


def _says_running(log_file: Path, offset: int) -> bool:
    try:
        with open(log_file, "rb") as f:
            f.seek(offset)
            return b" running" in f.read()
    except OSError:
        return True  # no log to read (not root, other log_dest): the listeners must do


def _is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_orphans(directories: Iterable[Path]) -> list[int]:
    """SIGKILL the mosquittos started from ``directories`` whose starting process is gone.

    For a test session that died without running ``atexit`` (e.g. ``os._exit`` on a
    timeout); a broker whose starter still runs (another session) is left alone.
    """
    killed = []
    for directory in directories:
        try:
            pid, owner = map(int, (directory / "log" / "runner.pid").read_text().split())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if str(directory).encode() in cmdline and b"mosquitto" in cmdline and not _is_alive(owner):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


@atexit.register
def _kill_leftovers() -> None:
    for proc in list(_LIVE):
        proc.kill()
