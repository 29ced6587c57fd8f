"""``qizhong``: one console script, one subcommand per part.

Each subcommand lives in its own module exposing ``add_arguments(parser)`` and
``run(args) -> int``; modules are imported only when their subcommand runs, so one
part's heavy imports (SQLAlchemy, uvicorn) never slow another's start.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from qizhong import __version__

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "clock": (
        "qizhong.cli.terminal_clock",
        "a two-player clock in the terminal, to try the core by hand",
    ),
    "deploy": (
        "qizhong.deploy.cli",
        "Ansible inventory from the roster; the offline wheel bundle for the Pis",
    ),
    "demo": (
        "qizhong.simulation.demo",
        "a simulated venue on this machine: broker, station, 40 boards",
    ),
    "sim": (
        "qizhong.simulation.sim",
        "many simulated boards in one process, for load (--roster, --broker-dir)",
    ),
    "node": ("board_nodes.cli", "the node daemon: run the boards of one Pi (--config node.toml)"),
    "emulate-clock": (
        "firmware_bridge.serial.emulator_cli",
        "the serial clock emulator (socket:// or pty) with a keyboard UI",
    ),
    "clock-conformance": (
        "firmware_bridge.serial.conformance_cli",
        "check a serial clock against docs/protocol.md, PASS/FAIL per section (--url)",
    ),
    "self-test": (
        "firmware_bridge.selftest",
        "check a freshly wired clock face (GPIO or serial): the display, then each key",
    ),
    "station": (
        "venue_station.web.cli",
        "the venue station: collector, store, HTTP API, web pages",
    ),
    "hub": (
        "federation_hub.cli",
        "the federation hub: venues' reports from NATS JetStream to PostgreSQL, read-only page",
    ),
    "trf": (
        "qizhong.cli.trf",
        "FIDE TRF files and pairs lists: check, export from and import into the station",
    ),
    "broker-config": (
        "broker_config.cli",
        "write the venue broker's config (mosquitto.conf, passwords, ACL, credentials)",
    ),
}


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qizhong",
        description="棋钟 qizhong — the clock system for xiangqi open tournaments.",
    )
    parser.add_argument("--version", action="version", version=f"qizhong {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ns, _rest = _top_parser().parse_known_args(argv[:1])
    module_name, help_text = COMMANDS[ns.command]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"qizhong {ns.command}", description=help_text)
    module.add_arguments(parser)
    args = parser.parse_args(argv[1:])
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
