"""``qizhong broker-config --roster roster.toml --out DIR``."""

from __future__ import annotations

import argparse
import sys

from broker_config.errors import BrokerConfigError
from broker_config.files import write_broker_config
from broker_config.roster import Roster

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--roster", required=True, help="the venue roster (TOML)")
    parser.add_argument(
        "--out",
        required=True,
        help="directory to write (re-running keeps the passwords already issued)",
    )
    parser.add_argument("--mosquitto-passwd", default=None, help="path to mosquitto_passwd")


def run(args: argparse.Namespace) -> int:
    try:
        roster = Roster.load(args.roster)
        files = write_broker_config(roster, args.out, mosquitto_passwd=args.mosquitto_passwd)
    except BrokerConfigError as exc:
        print(f"broker-config: {exc}", file=sys.stderr)
        return 2
    print(
        f"wrote {files.conf} for venue {files.venue!r}: {len(files.accounts)} accounts, "
        f"max_queued_messages {files.max_queued_messages}"
    )
    for listener in files.listeners:
        print(f"  listener {listener.url}")
    print(
        f"  credentials for each account in {files.credentials_dir}/ (0600: copy each to its node)"
    )
    print(f"  run: mosquitto -c {files.conf}   (reload after a change: kill -HUP <pid>)")
    for warning in files.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0
