"""``qizhong deploy``: the technician's generators for deploy/ansible.

qizhong deploy inventory --roster roster.toml --out inventory.yml [--station-host H] ...
qizhong deploy bundle --out DIR [--target aarch64 --target armv7l] [--no-host]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="deploy_action", metavar="ACTION", required=True)
    inv = sub.add_parser("inventory", help="an Ansible inventory from the venue roster")
    inv.add_argument("--roster", required=True, help="the venue roster (TOML)")
    inv.add_argument("--out", required=True, help="the inventory file to write (YAML)")
    inv.add_argument("--station-host", default="station.local", help="station address")
    inv.add_argument(
        "--domain", default="local", help="node hosts are <id>.<domain> ('' for bare ids)"
    )
    inv.add_argument("--broker-url", default=None, help="default: from the roster's listener")
    inv.add_argument(
        "--credentials",
        default="broker/credentials",
        help="broker-config's credentials/ folder on this machine (default broker/credentials)",
    )
    inv.add_argument(
        "--face",
        choices=["gpio", "serial", "simulated"],
        default="gpio",
        help="every board's face (per-board changes go in host_vars)",
    )
    inv.add_argument("--ansible-user", default="pi", help="ssh user ('' for none)")

    bun = sub.add_parser("bundle", help="every wheel the Pis need, for an offline install")
    bun.add_argument("--out", required=True, help="the bundle folder (created)")
    bun.add_argument(
        "--target",
        action="append",
        choices=["aarch64", "armv7l"],
        help="Raspberry Pi targets (default both; repeat to choose)",
    )
    bun.add_argument("--no-host", action="store_true", help="skip this machine's own wheels")
    bun.add_argument(
        "--no-build-isolation",
        action="store_true",
        help="build qizhong's wheel with this interpreter's setuptools",
    )


def _inventory(args: argparse.Namespace) -> int:
    from broker_config.errors import BrokerConfigError
    from qizhong.deploy.inventory import InventoryOptions, write_inventory

    options = InventoryOptions(
        station_host=args.station_host,
        domain=args.domain,
        broker_url=args.broker_url,
        credentials_dir=Path(args.credentials).absolute(),
        face=args.face,
        ansible_user=args.ansible_user or None,
    )
    try:
        inventory = write_inventory(args.roster, args.out, options)
    except BrokerConfigError as exc:
        print(f"deploy inventory: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"deploy inventory: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
        return 2
    nodes = inventory["all"]["children"]["nodes"]["hosts"]
    boards = sum(len(h["qizhong_boards"]) for h in nodes.values())
    screens = len(inventory["all"]["children"]["screens"]["hosts"])
    print(
        f"wrote {args.out}: {len(nodes)} nodes, {boards} boards, {screens} screens, "
        f"station {args.station_host}"
    )
    missing = [
        h["qizhong_credentials_file"]
        for h in [*nodes.values(), inventory["all"]["children"]["station"]["hosts"]["station"]]
        if not Path(h["qizhong_credentials_file"]).is_file()
    ]
    if missing:
        print(
            f"warning: {len(missing)} credentials files do not exist yet (first: {missing[0]}); "
            "run `qizhong broker-config --roster ... --out broker` first",
            file=sys.stderr,
        )
    return 0


def _bundle(args: argparse.Namespace) -> int:
    from qizhong.deploy.bundle import BundleError, build_bundle

    try:
        report = build_bundle(
            args.out,
            targets=tuple(args.target or ("aarch64", "armv7l")),
            host=not args.no_host,
            isolation=not args.no_build_isolation,
        )
    except BundleError as exc:
        print(f"deploy bundle: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(report.wheels)} wheels to {report.dir} ({', '.join(report.targets)})")
    for target, names in report.missing.items():
        if names:
            print(
                f"  {target}: no wheel on PyPI for {', '.join(names)} "
                "(piwheels.org has them; Raspberry Pi OS ships them as apt packages)"
            )
    return 0


def run(args: argparse.Namespace) -> int:
    if args.deploy_action == "inventory":
        return _inventory(args)
    return _bundle(args)
