"""``qizhong clock-conformance --url URL``: the conformance kit as a program.

Prints one ``PASS``/``FAIL`` line per check, each naming its section of docs/protocol.md,
then a summary; the exit code is 1 when any check failed (2 when the line does not open).
"""

from __future__ import annotations

import argparse
import asyncio

from firmware_bridge.serial.conformance import run_conformance

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", required=True,
        help="the clock: socket://HOST:PORT (qizhong emulate-clock), /dev/ttyUSB0, a pty",
    )  # fmt: skip
    parser.add_argument(
        "--event-timeout", type=float, default=30.0, metavar="S",
        help="how long to wait for a key pressed on the clock (cases that need an event)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    checks = asyncio.run(run_conformance(args.url, event_timeout=args.event_timeout))
    for check in checks:
        print(check.line(), flush=True)
    failed = [c for c in checks if not c.passed]
    sections = sorted({c.section for c in failed})
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed"
          + (f" (sections {', '.join(sections)})" if sections else ""))  # fmt: skip
    if any(c.section == "§1" for c in failed):
        return 2
    return 1 if failed else 0
