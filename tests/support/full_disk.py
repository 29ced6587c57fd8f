"""A real full filesystem for tests (issue 28): a small tmpfs (root), filled to the last byte.

- ``small_disk(path, size_kb)``: a context mounting a tmpfs of ``size_kb`` at ``path``.
- ``fill(disk)``: fill it with one file and return that file (delete it: the space is back).
- ``journal_keys(journal)``: every (board, session, seq) a node's journal holds, read directly.
"""

from __future__ import annotations

import contextlib
import errno
import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["fill", "journal_keys", "small_disk"]


@contextlib.contextmanager
def small_disk(path: Path, size_kb: int = 16384) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path)],
        capture_output=True, text=True,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.fail(f"a real full disk needs a tmpfs mount (root): {proc.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(disk: Path) -> Path:
    """Fill ``disk`` to the last byte with one file; returns it (delete it to free the space)."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        chunk = b"\0" * 4096
        try:
            while True:
                f.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        with contextlib.suppress(OSError):
            while True:  # the last partial block
                f.write(b"\0")
    return filler


def journal_keys(journal: Path) -> set[tuple[str, int, int]]:
    db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT payload FROM outbox").fetchall()
    finally:
        db.close()
    out = set()
    for (payload,) in rows:
        ev = json.loads(payload)
        out.add((ev["board"], ev["session"], ev["seq"]))
    return out
