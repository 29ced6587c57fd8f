"""Bring up what the tests need, run a command with it, take down what was started for it.

``python tools/bring_up.py -- pytest …`` (the Makefile's ``unit`` target; ``.ci/run`` wraps its
whole run in it):

1. Installs through apt what the machine lacks (as root; not root: says what is missing and the
   ``apt-get install`` line, and goes on — the tests of a missing part then skip, and under
   ``CI=true`` such a skip fails the run, tests/support/parts.py): chromium and the CJK font of
   the browser tests, Mosquitto and its clients, nats-server, openssl, iproute2, iptables,
   systemd (``systemd-analyze``), and PostgreSQL's binaries when there are none.
2. Gives the run a PostgreSQL (trust for ``postgres``, a database ``test`` to create others
   from), the first of: the one already answering at ``QZ_PG_HOST:QZ_PG_PORT`` (default
   127.0.0.1:5432); the machine's own cluster, started (``pg_ctlcluster``); a private cluster
   from Debian's binaries (``/usr/lib/postgresql/*/bin``) in a temporary folder on a free port,
   stopped and removed after the command. The command sees the address in ``QZ_PG_HOST`` and
   ``QZ_PG_PORT`` (tests/support/postgres.py reads them).

Exits with the command's exit code. Standard library only: it runs before the venv exists.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5432


@dataclass(frozen=True, kw_only=True)
class Part:
    """One apt package and how to tell it is already there."""

    package: str
    present: tuple[str, ...]  # any one of these paths (or programs on PATH) is enough

    def is_present(self) -> bool:
        return any(Path(p).exists() if p.startswith("/") else shutil.which(p) for p in self.present)


PARTS = (
    Part(package="chromium", present=("/usr/bin/chromium",)),
    Part(package="fonts-wqy-microhei", present=("/usr/share/fonts/truetype/wqy",)),
    Part(package="mosquitto", present=("/usr/sbin/mosquitto", "mosquitto")),
    Part(package="mosquitto-clients", present=("mosquitto_passwd", "/usr/bin/mosquitto_passwd")),
    Part(package="nats-server", present=("nats-server", "/usr/sbin/nats-server")),
    Part(package="openssl", present=("openssl",)),
    Part(package="iproute2", present=("ip", "/usr/sbin/ip", "/sbin/ip")),
    Part(package="iptables", present=("iptables", "/usr/sbin/iptables")),
    Part(package="systemd", present=("systemd-analyze",)),
    # the xiangqi tests' independent referee (a separate process; GPL-3, never linked)
    Part(package="fairy-stockfish", present=("/usr/games/fairy-stockfish",)),
)


def say(message: str) -> None:
    print(f"bring-up: {message}", flush=True)


def pg_bins() -> Path | None:
    """The newest of Debian's PostgreSQL server binary folders, or None."""
    found = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0,
    )
    return found[-1] if found else None


def missing_packages() -> list[str]:
    missing = [p.package for p in PARTS if not p.is_present()]
    if pg_bins() is None:
        missing.append("postgresql")
    return missing


def install(packages: list[str]) -> None:
    if not packages:
        return
    argv = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages]
    line = f"apt-get install --no-install-recommends {' '.join(packages)}"
    if os.geteuid() != 0:
        say(f"missing {', '.join(packages)}; not root, so not installing them: run `sudo {line}`")
        return
    if shutil.which("apt-get") is None:
        say(f"missing {', '.join(packages)} and there is no apt-get: install them by hand")
        return
    say(f"installing {' '.join(packages)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(argv, check=True, env=env)


def answers(host: str, port: int, bins: Path | None) -> bool:
    """PostgreSQL at host:port lets ``postgres`` into ``test`` without a password."""
    if bins is None:
        try:
            with socket.create_connection((host, port), timeout=2):
                return True
        except OSError:
            return False
    probe = [str(bins / "psql"), "-h", host, "-p", str(port), "-U", "postgres", "-d", "test"]
    env = {**os.environ, "PGCONNECT_TIMEOUT": "3", "PGPASSWORD": ""}
    try:
        done = subprocess.run(
            [*probe, "-w", "-tAc", "select 1"], capture_output=True, text=True, env=env, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == "1"


def start_machine_clusters() -> None:
    """Start the machine's own clusters (Debian's ``pg_ctlcluster``), if it has any."""
    if shutil.which("pg_ctlcluster") is None:
        return
    for conf in sorted(glob.glob("/etc/postgresql/*/*/postgresql.conf")):
        version, name = Path(conf).parts[-3:-1]
        say(f"starting the machine's cluster {version}/{name} (if it is stopped)")
        subprocess.run(
            ["pg_ctlcluster", "--skip-systemctl-redirect", version, name, "start"],
            capture_output=True,
            check=False,
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind((DEFAULT_HOST, 0))
        return int(s.getsockname()[1])


def _as_postgres(argv: list[str]) -> list[str]:
    """initdb and the server refuse root: run them as the ``postgres`` user when we are root."""
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextlib.contextmanager
def private_cluster(bins: Path) -> Iterator[int]:
    """A throwaway cluster in a temporary folder on a free port; stopped and removed after."""
    top = Path(tempfile.mkdtemp(prefix="qz-pg-"))
    data = top / "data"
    if os.geteuid() == 0:
        shutil.chown(top, user="postgres")
    port = free_port()
    ctl = [str(bins / "pg_ctl"), "-D", str(data)]
    try:
        subprocess.run(
            _as_postgres([str(bins / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]),
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -c listen_addresses={DEFAULT_HOST} -k {top} -c fsync=off"
        start = [*ctl, "-l", str(top / "log"), "-w", "-o", options, "start"]
        subprocess.run(_as_postgres(start), check=True, capture_output=True)
        create = [str(bins / "createdb"), "-h", DEFAULT_HOST, "-p", str(port), "-U", "postgres"]
        subprocess.run([*create, "test"], check=True)
        say(f"a private PostgreSQL on {DEFAULT_HOST}:{port} in {top}")
        yield port
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(_as_postgres([*ctl, "-m", "fast", "-w", "stop"]), capture_output=True)
        shutil.rmtree(top, ignore_errors=True)
        say(f"the private PostgreSQL is stopped and {top} removed")


@contextlib.contextmanager
def postgres() -> Iterator[tuple[str, int]]:
    host = os.environ.get("QZ_PG_HOST", DEFAULT_HOST)
    port = int(os.environ.get("QZ_PG_PORT", str(DEFAULT_PORT)))
    bins = pg_bins()
    if answers(host, port, bins):
        say(f"PostgreSQL answers on {host}:{port}")
        yield host, port
        return
    start_machine_clusters()
    if answers(host, port, bins):
        say(f"PostgreSQL answers on {host}:{port}")
        yield host, port
        return
    if bins is None:
        say("no PostgreSQL and no binaries to start one: the postgres tests will fail")
        yield host, port
        return
    with private_cluster(bins) as private_port:
        yield DEFAULT_HOST, private_port


def _stop_on_term(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through private_cluster's clean-up


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _stop_on_term)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="+", help="what to run with the parts up (after --)")
    args = parser.parse_args(argv)
    install(missing_packages())
    with postgres() as (host, port):
        env = {**os.environ, "QZ_PG_HOST": host, "QZ_PG_PORT": str(port)}
        return subprocess.run(args.command, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
