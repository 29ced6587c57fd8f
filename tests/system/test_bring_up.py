"""tools/bring_up.py, the part of ``make test`` that gives the run a PostgreSQL: where none
answers at the address asked for, a private cluster from Debian's binaries on a free port,
told to the command through QZ_PG_HOST/QZ_PG_PORT, and gone after the command."""

from __future__ import annotations

import glob
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.parts import needs_part

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import asyncio, os, sys, asyncpg
async def main():
    host, port = os.environ["QZ_PG_HOST"], os.environ["QZ_PG_PORT"]
    conn = await asyncpg.connect(host=host, port=int(port), user="postgres", database="test")
    print("PG", host, port, await conn.fetchval("select 41 + 1"))
    print("DIR", await conn.fetchval("show data_directory"))
    await conn.close()
asyncio.run(main())
sys.exit(7)
"""


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again: nothing answers there


def _bring_up_probe(host: str, port: int) -> subprocess.CompletedProcess[str]:
    """tools/bring_up.py asked for ``host:port``, running the probe above with what it gives."""
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "bring_up.py"), "--", sys.executable, "-c", PROBE],
        env={**os.environ, "QZ_PG_HOST": host, "QZ_PG_PORT": str(port)},
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.postgres
@needs_part(
    not glob.glob("/usr/lib/postgresql/*/bin/initdb"),
    "PostgreSQL's server binaries",
    "apt-get install postgresql",
)
def test_no_server_at_the_address_gives_a_private_cluster_removed_after() -> None:
    dead = _dead_port()
    done = _bring_up_probe("127.0.0.1", dead)
    out = done.stdout
    assert done.returncode == 7, out + done.stderr  # the command's own exit code
    pg = next(line.split() for line in out.splitlines() if line.startswith("PG "))
    assert pg[1] == "127.0.0.1" and int(pg[2]) != dead and pg[3] == "42", out
    data_dir = Path(next(line for line in out.splitlines() if line.startswith("DIR "))[4:])
    assert data_dir.name == "data" and data_dir.parent.name.startswith("qz-pg-"), out
    assert not data_dir.parent.exists(), f"{data_dir.parent} left behind"
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", int(pg[2])), timeout=2):
        pass  # and the private server is stopped


@pytest.mark.postgres
def test_a_server_that_answers_is_used_as_it_is() -> None:
    from support.postgres import PG_HOST, PG_PORT

    done = _bring_up_probe(PG_HOST, PG_PORT)
    assert done.returncode == 7, done.stdout + done.stderr
    assert f"PG {PG_HOST} {PG_PORT} 42" in done.stdout
    assert f"PostgreSQL answers on {PG_HOST}:{PG_PORT}" in done.stdout
