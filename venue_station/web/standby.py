"""A warm standby station on a second laptop, and its promotion (issue 28, docs/operations.md).

- ``GET /api/backup`` (an ``admin`` account): a whole, fresh copy of the running station's SQLite
  store (SQLite's online backup, taken on a thread; the same copy ``[backup]`` writes), as a
  download. PostgreSQL: 409 ``backup_not_sqlite`` (streaming replication is the standby there).
- ``qizhong station standby --config standby.toml``: every ``[standby] every_s`` logs in to the
  ``primary`` as ``user`` and puts the primary's copy in place of the standby's own database
  (checked as a qizhong store of a known schema first; never while a station runs on it). The
  standby runs no station: it commands no board and decides nothing, so nothing is decided twice.
- ``qizhong station promote --config standby.toml``: refused while the primary still answers its
  ``/healthz`` (two stations must never rule on the same boards; ``--force`` when the technician
  knows it is gone but its port is not), then runs the station on the last copy. What happened
  after that copy comes back from the boards, as with ``rebuild`` (``web/cli.py``): each node
  replays what the station lacks (the station's gap replay, paced), the decisions by the txns
  the primary signed (the standby needs the same ``decision_key_file``), and a round paired
  after the copy from the boards' signed ``set_game``s (``domain/rebuild.py``).

Standard library HTTP (urllib): the standby has nothing else to talk to.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import logging
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Route

from venue_station.config import StandbyConfig
from venue_station.errors import StationError
from venue_station.store.backup import (
    RestoreReport,
    check_backup,
    known_revisions,
    restore,
    sqlite_path,
    take_backup,
)
from venue_station.web.access import require_reader
from venue_station.web.http_base import ApiError, station_of

__all__ = ["StandbyError", "fetch_once", "primary_answers", "routes", "run_standby"]

log = logging.getLogger(__name__)
CHUNK = 1 << 16


class StandbyError(StationError):
    """The primary could not be reached, refused the login, or sent no usable copy."""


# -- the primary's side -----------------------------------------------------------------------
async def backup_download(request: Request) -> Response:
    require_reader(request, "admin")
    station = station_of(request)
    db = sqlite_path(station.config.db_url)
    if db is None:
        raise ApiError(
            409,
            "the store is not SQLite: a PostgreSQL standby is streaming replication",
            kind="backup_not_sqlite",
        )
    folder = Path(tempfile.mkdtemp(prefix="qz-standby-"))
    try:
        path = await asyncio.to_thread(
            take_backup, db, folder, series="standby", keep=1, own_disk=True
        )
    except Exception as exc:
        shutil.rmtree(folder, ignore_errors=True)
        log.warning("standby copy of %s failed: %s", db, exc)
        raise ApiError(503, f"cannot copy the store now: {exc}", kind="backup_failed") from None
    return FileResponse(
        path,
        media_type="application/vnd.sqlite3",
        filename=path.name,
        background=BackgroundTask(shutil.rmtree, folder, ignore_errors=True),
    )


def routes() -> list[BaseRoute]:
    return [Route("/api/backup", backup_download)]


# -- the standby's side -----------------------------------------------------------------------
@dataclass(frozen=True)
class Fetched:
    report: RestoreReport
    bytes: int
    took_ms: int

    def text(self) -> str:
        return f"{self.bytes} bytes in {self.took_ms} ms: {self.report.text()}"


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )


def _login(opener: urllib.request.OpenerDirector, cfg: StandbyConfig, timeout: float) -> None:
    password = cfg.password_file.read_text(encoding="utf-8").strip()
    body = json.dumps({"username": cfg.user, "password": password}).encode()
    req = urllib.request.Request(
        cfg.primary.rstrip("/") + "/api/auth/login",
        data=body,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with opener.open(req, timeout=timeout) as resp:
            resp.read()
    except urllib.error.HTTPError as exc:
        raise StandbyError(f"{cfg.primary}: login as {cfg.user!r} refused ({exc.code})") from None
    except (urllib.error.URLError, OSError) as exc:
        raise StandbyError(f"{cfg.primary}: cannot reach the primary: {exc}") from None


def fetch_once(cfg: StandbyConfig, db: Path, *, timeout: float = 60.0) -> Fetched:
    """One copy of the primary's store in place of ``db`` (blocking; raises StandbyError or
    the store's StoreError, and then ``db`` is left as it was)."""
    started = time.monotonic()
    opener = _opener()
    _login(opener, cfg, timeout)
    db.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".qz-standby-", dir=db.parent) as tmp:
        part = Path(tmp) / "primary.db"
        size = 0
        try:
            url = cfg.primary.rstrip("/") + "/api/backup"
            with opener.open(url, timeout=timeout) as resp, part.open("wb") as out:
                while chunk := resp.read(CHUNK):
                    size += len(chunk)
                    out.write(chunk)
        except urllib.error.HTTPError as exc:
            detail = exc.read(2000).decode("utf-8", "replace")
            raise StandbyError(f"{cfg.primary}/api/backup: {exc.code} {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise StandbyError(f"{cfg.primary}/api/backup: {exc}") from None
        check_backup(part, known_revisions())  # before anything of the standby's is touched
        report = restore(part, db, known_revisions(), keep_previous=False)
    return Fetched(report, size, int((time.monotonic() - started) * 1000))


def run_standby(cfg: StandbyConfig, db: Path, *, stop: threading.Event) -> int:
    """Copy the primary every ``every_s`` until ``stop``; a failed copy is said and retried
    (the last good copy stays). Returns the number of good copies."""
    good = 0
    while not stop.is_set():
        try:
            fetched = fetch_once(cfg, db)
        except StationError as exc:
            log.warning("standby: no copy this time (the last good one stays): %s", exc)
        else:
            good += 1
            log.info("standby: copied the primary %s", fetched.text())
        stop.wait(cfg.every_s)
    return good


def primary_answers(cfg: StandbyConfig, *, timeout: float = 3.0) -> bool:
    """Whether the primary's ``/healthz`` answers at all (any HTTP status counts)."""
    try:
        with urllib.request.urlopen(cfg.primary.rstrip("/") + "/healthz", timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True  # 503 is a station that is up and unwell: still a station ruling
    except (urllib.error.URLError, OSError):
        return False
