"""``qizhong station``: run the station, or make a password hash for ``[[account]]``.

qizhong station --config station.toml
qizhong station hash-password            # asks twice, prints scrypt$...
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
        choices=["run", "hash-password"],
        default="run",
        help="run the station (default) or print a password hash for the config",
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


def run(args: argparse.Namespace) -> int:
    if args.action == "hash-password":
        return _hash_password(args)
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
