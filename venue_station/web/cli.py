"""``qizhong station``: run the station, or make a password hash for ``[[account]]``.

qizhong station --config station.toml
qizhong station hash-password            # asks twice, prints scrypt$...
qizhong station backup --config station.toml            # one backup now, into [backup] dir
qizhong station restore --config station.toml --from station-....db
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from venue_station.web.web_server import StationWithWeb

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=["run", "hash-password", "backup", "restore"],
        default="run",
        help="run the station (default), print a password hash for the config, take one "
        "backup now, or restore the database from a backup (docs/operations.md)",
    )
    parser.add_argument(
        "--from", dest="source", default=None, help="restore: the backup file to restore"
    )
    parser.add_argument("--config", "-c", default="station.toml", help="station config TOML")
    parser.add_argument(
        "--password-stdin",
        action="store_true",
        help="hash-password: read the password from stdin (no prompt)",
    )
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING")


def _hash_password(args: argparse.Namespace) -> int:
    from venue_station.auth import hash_password

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            print("the two passwords differ", file=sys.stderr)
            return 2
    if not password:
        print("empty password", file=sys.stderr)
        return 2
    print(hash_password(password))
    return 0


async def _serve(station: StationWithWeb) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, station.request_stop)
    await station.run()


def _backup_or_restore(args: argparse.Namespace) -> int:
    from pathlib import Path

    from venue_station.config import StationConfig
    from venue_station.errors import StationError
    from venue_station.store.backup import known_revisions, restore, sqlite_path, take_backup

    try:
        config = StationConfig.load(args.config)
        db = sqlite_path(config.db_url)
        if db is None:
            print(
                "qizhong station: the database is not SQLite: use pg_dump / pg_restore "
                "(docs/operations.md)",
                file=sys.stderr,
            )
            return 2
        if args.action == "backup":
            if config.backup.dir is None:
                print("qizhong station: no [backup] dir in the config", file=sys.stderr)
                return 2
            if not db.exists():
                print(f"qizhong station: no database at {db}", file=sys.stderr)
                return 2
            path = take_backup(db, config.backup.dir, series="manual", keep=config.backup.keep)
            print(f"backed up {db} to {path}")
            return 0
        if args.source is None:
            print("qizhong station restore: --from FILE is needed", file=sys.stderr)
            return 2
        report = restore(Path(args.source), db, known_revisions())
    except StationError as exc:
        print(f"qizhong station: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"qizhong station: {exc}", file=sys.stderr)
        return 2
    print(f"restored {db} from {report.text()}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "hash-password":
        return _hash_password(args)
    if args.action in ("backup", "restore"):
        return _backup_or_restore(args)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # Imported when run, not at the top: `hash-password` needs none of the station.
    from venue_station.config import StationConfig
    from venue_station.errors import StationError
    from venue_station.web.web_server import StationWithWeb

    try:
        station = StationWithWeb(StationConfig.load(args.config))
        asyncio.run(_serve(station))
    except StationError as exc:
        print(f"qizhong station: {exc}", file=sys.stderr)
        return 2
    return 0
