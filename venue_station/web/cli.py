"""``qizhong station``: run the station, or make a password hash for ``[[account]]``.

qizhong station --config station.toml
qizhong station hash-password            # asks twice, prints scrypt$...
qizhong station backup --config station.toml            # one backup now, into [backup] dir
qizhong station restore --config station.toml --from station-....db
qizhong station standby --config standby.toml           # copy the [standby] primary, every every_s
qizhong station promote --config standby.toml           # the primary is gone: run on the last copy
                                                        # and rebuild what came after (as rebuild)
qizhong station rebuild --config station.toml [--from station-....db]  # a lost disk: from nodes
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import getpass
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from venue_station.config import StationConfig
    from venue_station.web.web_server import StationWithWeb

__all__ = ["add_arguments", "loop_factory", "run"]

log = logging.getLogger("venue_station.web.cli")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=["run", "hash-password", "backup", "restore", "standby", "promote", "rebuild"],
        default="run",
        help="run the station (default), print a password hash for the config, take one "
        "backup now, restore the database from a backup, keep a warm standby of the "
        "[standby] primary, promote the standby, or rebuild a lost station from the nodes "
        "(after restoring --from a backup, if given) (docs/operations.md)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="promote: although the primary still answers (only when it is known to be gone)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        default=None,
        help="restore, rebuild: the backup file to restore",
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


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The station's event loop: uvloop's where it is installed (the station's x86_64 and
    aarch64 Linux: pyproject's dependencies), asyncio's own otherwise or with
    ``QZ_EVENT_LOOP=asyncio``. Every message, write and stream goes through a few turns of the
    loop; uvloop's turn is the cheaper (the arbiter's stream p50 0.77-0.89 -> 0.66-0.72 ms,
    p99 1.6-2.0 -> 1.05-1.13 ms, docs/benchmarks.md, issue 30). The tests run the station in
    their own (asyncio's) loop and as this process: both loops are tested."""
    if os.environ.get("QZ_EVENT_LOOP", "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


async def _serve(station: StationWithWeb, *, rebuild: bool = False) -> None:
    loop = asyncio.get_running_loop()
    log.info("event loop: %s", type(loop).__module__.split(".")[0])
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, station.request_stop)
    task = asyncio.create_task(_rounds_back(station)) if rebuild else None
    settled = asyncio.create_task(_settle_memory(station))
    try:
        await station.run()
    finally:
        settled.cancel()
        if task is not None:
            task.cancel()


async def _settle_memory(station: StationWithWeb) -> None:
    """Once the station is up, everything it made to start (modules, tables, the views) is
    frozen out of the garbage collector's generations: a full collection then walks only what
    the running station makes, not the ~10^5 objects of its start (a few ms each time, in the
    middle of somebody's wait: the arbiter stream's p99, issue 30)."""
    while station.ingest is None:  # noqa: ASYNC110 (no start event)
        await asyncio.sleep(0.5)
    await asyncio.sleep(2.0)  # what the first connection brings in
    gc.collect()
    gc.freeze()


async def _rounds_back(station: StationWithWeb) -> None:
    """``rebuild``: once the boards have caught up, the rounds the store lacks from their
    journals (venue_station/domain/rebuild.py)."""
    from venue_station.domain.rebuild import rebuild_rounds

    while station.ingest is None or station.store is None:  # noqa: ASYNC110 (no start event)
        await asyncio.sleep(0.2)
    made = await rebuild_rounds(station)
    print(f"rebuilt from the boards: rounds {made['rounds']}, {made['players']} players added, "
          f"{made['games']} games")  # fmt: skip


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


def _standby(args: argparse.Namespace) -> int:
    """``standby``: copy the primary until stopped. ``promote``: 0 to go on and run the station,
    2 refused (the primary still answers, or this config is no standby's)."""
    import threading

    from venue_station.config import StationConfig
    from venue_station.errors import StationError
    from venue_station.store.backup import sqlite_path
    from venue_station.web.standby import primary_answers, run_standby

    try:
        config = StationConfig.load(args.config)
    except StationError as exc:
        print(f"qizhong station: {exc}", file=sys.stderr)
        return 2
    cfg, db = config.standby, sqlite_path(config.db_url)
    if cfg is None or db is None:
        print(
            "qizhong station: no [standby] primary in the config, or its store is not SQLite "
            "(docs/operations.md)",
            file=sys.stderr,
        )
        return 2
    if args.action == "promote":
        if primary_answers(cfg) and not args.force:
            print(
                f"qizhong station promote: the primary {cfg.primary} still answers: stop it "
                "first (two stations must never rule on the same boards), or --force",
                file=sys.stderr,
            )
            return 2
        _say_key(config, "promote")
        print(f"promoted: running the station on the last copy of {cfg.primary} ({db}); "
              "the boards give back what came after it")  # fmt: skip
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        good = run_standby(cfg, db, stop=stop)
    except KeyboardInterrupt:
        return 0
    print(f"standby stopped after {good} copies of {cfg.primary}")
    return 0


def _rebuild(args: argparse.Namespace) -> int:
    """Restore ``--from`` (if given), say what the rebuild will trust, and go on to run."""
    from venue_station.config import StationConfig
    from venue_station.errors import StationError

    try:
        config = StationConfig.load(args.config)
    except StationError as exc:
        print(f"qizhong station: {exc}", file=sys.stderr)
        return 2
    if args.source is not None:
        restored = _backup_or_restore(argparse.Namespace(**{**vars(args), "action": "restore"}))
        if restored:
            return restored
    _say_key(config, "rebuild")
    print("rebuilding: the station asks every board for what it lacks (paced replays)")
    return 0


def _say_key(config: StationConfig, action: str) -> None:
    """What a station that did not see the decisions will trust: without its predecessor's
    decision key (the same file), none of the decisions the boards replay, and no round."""
    if config.decision_key_file is None or not config.decision_key_file.exists():
        print(
            f"qizhong station {action}: no decision key (the primary's decision_key_file): the "
            "decisions replayed from the boards are stored pending, unverified, and no round "
            'is made from them (docs/operations.md "Rebuild")',
            file=sys.stderr,
        )


def run(args: argparse.Namespace) -> int:
    if args.action == "hash-password":
        return _hash_password(args)
    if args.action in ("backup", "restore"):
        return _backup_or_restore(args)
    if args.action == "rebuild":
        refused = _rebuild(args)
        if refused:
            return refused
    if args.action in ("standby", "promote"):
        logging.basicConfig(
            level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        refused = _standby(args)
        if args.action == "standby" or refused:
            return refused
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # Imported when run, not at the top: `hash-password` needs none of the station.
    from venue_station.config import StationConfig
    from venue_station.errors import StationError
    from venue_station.web.web_server import StationWithWeb

    try:
        station = StationWithWeb(StationConfig.load(args.config))
        # promote, as rebuild: what came after the last copy (the decisions by their signed
        # txns, a round paired since by its signed set_games) comes back from the boards
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(_serve(station, rebuild=args.action in ("rebuild", "promote")))
    except StationError as exc:
        print(f"qizhong station: {exc}", file=sys.stderr)
        return 2
    return 0
