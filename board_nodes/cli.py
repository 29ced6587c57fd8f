"""``qizhong node --config node.toml``: run the node daemon."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from board_nodes.config import NodeConfig, NodeConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="the node's TOML configuration")
    parser.add_argument("--check", action="store_true", help="validate the config and exit")
    parser.add_argument("--log-level", default="INFO")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        config = NodeConfig.load(args.config)
    except NodeConfigError as exc:
        print(f"qizhong node: {exc}", file=sys.stderr)
        return 2
    try:
        config.preflight(source=args.config)
    except NodeConfigError as exc:
        print(f"qizhong node: {exc}", file=sys.stderr)
        return 2
    if args.check:
        print(f"{args.config}: ok ({len(config.board)} boards)")
        return 0
    from board_nodes.node import run_node

    asyncio.run(run_node(config))
    return 0
