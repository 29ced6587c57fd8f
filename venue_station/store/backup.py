"""The station's SQLite store, copied whole while it runs, and put back (issue 28).

- :func:`take_backup`: SQLite's online backup API (``sqlite3.Connection.backup``) into a temp
  file beside the destination, fsync, rename: a backup on disk is always whole. Blocking: the
  station runs it on a thread (:class:`BackupLoop`).
- :class:`BackupLoop`: every ``every_s`` and at every round's end (the moment every game of
  a round has its result), keeping the last ``keep`` of this store's series. A failure is
  kept as an alarm (``backup_failing``) and never stops the station; the next tick tries again.
- :func:`restore`: a checked backup file (an SQLite qizhong store of a schema this code knows)
  becomes the station's database, refused while a station runs on it (:func:`running_lock`).

A store's backups are named ``station-<store id>-<UTC stamp>.db``: a fresh, empty station
writing to the same folder starts a series of its own and never prunes its predecessor's.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from venue_station.errors import StoreError
from wire_contract.wallclock import wall_ms

# sqlite3 is imported where it is used, not when the station imports this module: with it
# imported at the station's start, tests/station/test_attack_writer.py's SIGTERM-while-locked
# case hung in aiosqlite's close (a timing effect, not understood; docs/operations.md notes).
if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "BackupLoop",
    "RestoreReport",
    "check_backup",
    "known_revisions",
    "restore",
    "running_lock",
    "sqlite_path",
    "take_backup",
]

log = logging.getLogger(__name__)
PREFIX = "station-"
ROUND_CHECK_S = 5.0  # how often a finished round is looked for
SQLITE_MAGIC = b"SQLite format 3\x00"


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL (any driver), None for another database."""
    scheme, sep, rest = url.partition(":///")
    if not sep or not scheme.startswith("sqlite"):
        return None
    return Path(rest)


def _lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


def running_lock(db: Path) -> int:
    """A shared lock a running station holds on its database (released when its process
    ends, however it ends); :func:`restore` needs it exclusively. Returns the fd to close."""
    fd = os.open(_lock_path(db), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_whole(src: sqlite3.Connection, dest: Path) -> None:
    """``src`` into ``dest`` through a temp file, fsynced, renamed: never half a file."""
    import sqlite3

    tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        out = sqlite3.connect(tmp)
        try:
            src.backup(out)
            out.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no WAL beside
        finally:
            out.close()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, dest)
        _fsync_dir(dest.parent)
    finally:
        tmp.unlink(missing_ok=True)


def _stamp(now_ms: int) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(now_ms / 1000)) + f"-{now_ms % 1000:03d}"


def take_backup(
    db: Path, folder: Path, *, series: str, keep: int, own_disk: bool = False
) -> Path:
    """One backup of ``db`` into ``folder``; the last ``keep`` of the series are kept.
    Raises ``OSError``/``sqlite3.Error`` (the caller alarms).

    A missing ``folder`` is made only off the station's own disk (``own_disk``: the standby's
    copy, which belongs there): a USB stick not mounted leaves its mount point an empty folder
    of the station's disk, and a backup made there is no backup (an outsider's "backed up"
    went to the disk it should survive)."""
    import sqlite3

    if not folder.is_dir() and not own_disk and _same_disk(folder, db):
        raise FileNotFoundError(
            errno.ENOENT,
            "no such folder, and making it would put the backup on the station's own disk "
            "(is the USB stick mounted?)",
            str(folder),
        )
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / f"{PREFIX}{series}-{_stamp(wall_ms())}.db"
    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
    try:
        _copy_whole(src, dest)
    finally:
        src.close()
    mine = sorted(folder.glob(f"{PREFIX}{series}-*.db"))
    for old in mine[:-keep]:
        old.unlink(missing_ok=True)
    return dest


def _same_disk(folder: Path, db: Path) -> bool:
    """Whether ``folder`` (its nearest existing ancestor) is on the file system of ``db``."""
    here = folder.absolute()
    while not here.exists() and here != here.parent:
        here = here.parent
    return os.stat(here).st_dev == os.stat(db.absolute().parent).st_dev


def _finished_rounds(db: Path) -> frozenset[int]:
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)
    try:
        rows = con.execute(
            "SELECT round FROM games GROUP BY round HAVING COUNT(*) = COUNT(result)"
        ).fetchall()
    finally:
        con.close()
    return frozenset(int(r[0]) for r in rows)


class BackupLoop:
    """The station's continuous backup (``[backup]`` in station.toml). ``series``: the
    store's id (meta ``store_id``), so a restored store goes on with its own series."""

    def __init__(self, db: Path, folder: Path, *, series: str, every_s: float, keep: int) -> None:
        self.db, self.folder, self.series = db, folder, series
        self.every_s, self.keep = every_s, keep
        self.last_ok_ms = 0
        self.last_path: Path | None = None
        self.failing_since_ms: int | None = None
        self.last_error: str | None = None
        self.taken = 0

    async def backup_now(self) -> bool:
        """One backup, off the event loop; True if it was written."""
        import sqlite3

        try:
            path = await asyncio.to_thread(
                take_backup, self.db, self.folder, series=self.series, keep=self.keep
            )
        except (OSError, sqlite3.Error) as exc:
            if self.failing_since_ms is None:
                self.failing_since_ms = wall_ms()
                log.error("backup to %s failed: %s (the station goes on)", self.folder, exc)
            self.last_error = f"{type(exc).__name__}: {exc}"
            return False
        self.last_ok_ms, self.last_path = wall_ms(), path
        self.taken += 1
        if self.failing_since_ms is not None:
            log.warning("backup to %s works again", self.folder)
        self.failing_since_ms, self.last_error = None, None
        return True

    async def _finished(self) -> frozenset[int] | None:
        import sqlite3

        with contextlib.suppress(OSError, sqlite3.Error):
            return await asyncio.to_thread(_finished_rounds, self.db)
        return None

    async def run(self) -> None:
        done = await self._finished()
        due = time.monotonic() + self.every_s
        while True:
            await asyncio.sleep(min(ROUND_CHECK_S, max(0.0, due - time.monotonic())))
            now_done = await self._finished()
            round_end = done is not None and now_done is not None and bool(now_done - done)
            if now_done is not None:
                done = now_done
            if round_end or time.monotonic() >= due:
                ok = await self.backup_now()
                # failing: try again soon, not a whole period later
                due = time.monotonic() + (self.every_s if ok else min(self.every_s, 10.0))

    def alarm(self) -> dict[str, Any] | None:
        if self.failing_since_ms is None:
            return None
        return {"code": "backup_failing", "since_ms": self.failing_since_ms,
                "detail": self.last_error}  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        return {
            "dir": str(self.folder),
            "every_s": self.every_s,
            "keep": self.keep,
            "taken": self.taken,
            "last_ok_ms": self.last_ok_ms,
            "last": str(self.last_path) if self.last_path else None,
            "failing_since_ms": self.failing_since_ms,
            "error": self.last_error,
        }


@dataclass(frozen=True, kw_only=True)
class RestoreReport:
    """What a backup holds (and, once restored, the station holds)."""

    source: str
    schema: str
    players: int
    rounds: int
    games: int
    decided: int
    events: int

    def text(self) -> str:
        return (
            f"{self.source}: schema {self.schema}, {self.players} players, {self.rounds} rounds, "
            f"{self.games} games, {self.decided} decided results, {self.events} events"
        )


def known_revisions() -> frozenset[str]:
    """The schema revisions this code's migrations know (a store at any of them opens)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from venue_station.resources import migrations_dir

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    return frozenset(r.revision for r in ScriptDirectory.from_config(cfg).walk_revisions())


def check_backup(path: Path, known_revisions: frozenset[str]) -> RestoreReport:
    """Refuse what is not a whole qizhong store of a schema this code knows (StoreError)."""
    import sqlite3

    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise StoreError(f"{path}: cannot read: {exc}") from None
    if head != SQLITE_MAGIC:
        raise StoreError(f"{path}: not an SQLite database (not a qizhong station backup)")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            ok = con.execute("PRAGMA quick_check").fetchone()
            if not ok or ok[0] != "ok":
                raise StoreError(f"{path}: damaged ({ok[0] if ok else 'no answer'})")
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            needed = {"alembic_version", "meta", "players", "rounds", "games", "events"}
            if not needed <= tables:
                missing = ", ".join(sorted(needed - tables))
                raise StoreError(f"{path}: not a qizhong station store (no {missing})")
            row = con.execute("SELECT version_num FROM alembic_version").fetchone()
            schema = str(row[0]) if row else ""
            if schema not in known_revisions:
                raise StoreError(
                    f"{path}: schema {schema or 'none'!r} is not one this qizhong knows "
                    f"({', '.join(sorted(known_revisions))}); restore it with its own version"
                )

            def count(sql: str) -> int:
                return int(con.execute(sql).fetchone()[0])

            return RestoreReport(
                source=str(path),
                schema=schema,
                players=count("SELECT COUNT(*) FROM players"),
                rounds=count("SELECT COUNT(*) FROM rounds"),
                games=count("SELECT COUNT(*) FROM games"),
                decided=count("SELECT COUNT(*) FROM games WHERE result IS NOT NULL"),
                events=count("SELECT COUNT(*) FROM events"),
            )
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: not a readable SQLite database: {exc}") from None


def restore(
    backup: Path, db: Path, known_revisions: frozenset[str], *, keep_previous: bool = True
) -> RestoreReport:
    """Put ``backup`` in place of ``db``. Refused while a station runs on ``db``; the database
    replaced is kept beside as ``<db>.before-restore-<stamp>`` (``keep_previous=False``: a
    standby's older copy of its primary, replaced every few minutes, is not kept)."""
    import sqlite3

    report = check_backup(backup, known_revisions)
    db.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(_lock_path(db), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(
                f"a station is running on {db}: stop it first (restore never overwrites "
                "a running station's database)"
            ) from None
        if db.exists():
            old = sqlite3.connect(db)
            try:  # fold its WAL in, so the copy kept aside is whole
                old.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                old.close()
            if keep_previous:
                os.replace(db, db.with_name(f"{db.name}.before-restore-{_stamp(wall_ms())}"))
            else:
                db.unlink()
        for side in ("-wal", "-shm"):  # a stale WAL must never be read over the restored file
            db.with_name(db.name + side).unlink(missing_ok=True)
        src = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
        try:
            _copy_whole(src, db)
        finally:
            src.close()
    finally:
        os.close(fd)
    return report
