"""``qizhong hub``: one hub process — JetStream → PostgreSQL, and the read-only page/API.

Run as many as you like against the same centre and database: they share the durable
consumers (JetStream hands each message to one of them) and the store's unique key makes a
message two of them saw stored once. The password comes from a file or $QZ_HUB_PASSWORD,
never the command line (it would show in ``ps``).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import signal
from pathlib import Path
from typing import Any

import uvicorn
from sqlalchemy.exc import SQLAlchemyError

from federation_hub.config import HubConfig
from federation_hub.consumer import MAX_BATCH, HubConsumer
from federation_hub.errors import HubConfigError
from federation_hub.live_records import LiveRecords
from federation_hub.standings import VenueProfiles
from federation_hub.store import HubStore
from federation_hub.streams import StreamPlan
from federation_hub.web import LiveConfig, build_app, server_config
from wire_contract.messages import WireError, check_id

__all__ = ["add_arguments", "load_config", "run"]

log = logging.getLogger("federation_hub")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config hub.toml`` (federation_hub/config.py) and one flag per key, overriding it.

    The flags have no defaults here: a flag not given leaves the file's value, else the
    model's default (shown in each help)."""
    parser.add_argument("--config", type=Path, help="hub.toml (docs/federation.md)")
    flag = functools.partial(parser.add_argument, default=argparse.SUPPRESS)
    flag("--nats", help="comma-separated nats:// URLs of the centre (key nats)")
    flag("--user", help="default hub")
    flag("--password-file", type=Path, help="else $QZ_HUB_PASSWORD")
    flag("--db", help="postgresql://user@host/db")
    flag("--http", help="HOST:PORT of the page/API (default 127.0.0.1:8090)")
    flag("--prefix", help="the venues' bridge prefix (default fed)")
    flag("--replicas", type=int, choices=(1, 3, 5), help="default 1")
    flag("--batch", type=int, help=f"1..{MAX_BATCH} per fetch (default 200)")
    flag("--workers", type=int, help="event readers, 1..8 (default 1)")
    flag("--max-ack-pending", type=int, help="default 1000")
    flag("--max-bytes-mb", type=int, help="events stream bound (default 8192)")
    flag("--name", help="default hub-<pid>")
    flag("--log-level", help="default INFO")
    flag("--regulation", help="the venues' profile, standings scoring (default meishan-2016)")
    flag(
        "--venue-regulation",
        action="append",
        metavar="VENUE=PROFILE",
        help="one venue's own profile (repeatable; adds to the file's [venue_regulation])",
    )
    flag(
        "--venue-name",
        action="append",
        metavar="VENUE=NAME",
        help="what the public pages call a venue (repeatable; adds to the file's [venue_name])",
    )
    flag("--public-ws", help="ws(s):// URL of the centre's NATS WebSocket listener (/live)")
    flag("--live-max-boards", type=int, help="boards one /live page keeps (default 1000)")


def _venue_flags(items: list[str], flag: str = "--venue-regulation") -> dict[str, str]:
    per_venue: dict[str, str] = {}
    what = "NAME" if flag == "--venue-name" else "PROFILE"
    for item in items:
        venue, sep, value = item.partition("=")
        try:
            check_id("venue", venue)
        except WireError as exc:
            raise HubConfigError(f"{flag} {item!r}: {exc}") from None
        if not sep or not value:
            raise HubConfigError(f"{flag} {item!r}: expected VENUE={what}")
        per_venue[venue] = value
    return per_venue


def load_config(args: argparse.Namespace) -> HubConfig:
    """The file named by ``--config`` (if any) with the flags given on top of it."""
    given = {k: v for k, v in vars(args).items() if k not in {"config", "command", "func"}}
    if "nats" in given:
        given["nats"] = given["nats"].split(",")
    if "venue_regulation" in given:
        given["venue_regulation"] = _venue_flags(given["venue_regulation"])
    if "venue_name" in given:
        given["venue_name"] = _venue_flags(given["venue_name"], "--venue-name")
    return HubConfig.load(args.config, given)


def _password(config: HubConfig) -> str:
    if config.password_file is not None:
        try:
            return str(config.password_file.read_text(encoding="utf-8")).strip()
        except OSError as exc:
            raise HubConfigError(f"--password-file {config.password_file}: {exc}") from None
    value = os.environ.get("QZ_HUB_PASSWORD")
    if not value:
        raise HubConfigError("give --password-file (or password_file) or set QZ_HUB_PASSWORD")
    return value


async def _main(config: HubConfig) -> int:
    host, _, port = config.http.rpartition(":")
    # The web settings first: a bad one is said before anything connects.
    profiles = VenueProfiles.load(config.regulation, config.venue_regulation)
    live = LiveConfig(config.public_ws, config.prefix, config.live_max_boards)
    plan = StreamPlan(
        prefix=config.prefix,
        replicas=config.replicas,
        max_ack_pending=config.max_ack_pending,
        max_bytes=config.max_bytes_mb * 1024 * 1024,
    )
    password = _password(config)  # before the store: a missing password is said first
    try:
        store = await HubStore.open(config.db)
    except (SQLAlchemyError, OSError) as exc:
        raise HubConfigError(f"--db: cannot open the store: {exc}") from None
    hub = HubConsumer(
        servers=config.nats,
        user=config.user,
        password=password,
        store=store,
        plan=plan,
        batch=config.batch,
        workers=config.workers,
        name=config.name,
    )
    relay = LiveRecords(
        config.nats,
        user=config.user,
        password=password,
        prefix=config.prefix,
        max_boards=config.live_max_boards,
        name=config.name,
    )
    app = build_app(
        store,
        lambda: {**hub.counters.as_dict(), **relay.counters()},
        profiles=profiles,
        live=live,
        records=lambda: list(relay.views.values()),
        names=config.venue_name,
    )
    server = uvicorn.Server(server_config(app, host=host, port=int(port)))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks: list[asyncio.Task[Any]] = [
        asyncio.create_task(hub.run()),
        asyncio.create_task(relay.run()),
        asyncio.create_task(server.serve()),
    ]
    waiter = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([*tasks, waiter], return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            failure = t.exception() if t.done() else None
            if failure is not None:
                raise failure
        log.info("hub %s: stopping (%s)", config.name, hub.counters.as_dict())
        return 0
    finally:
        server.should_exit = True
        for t in (*tasks, waiter):
            t.cancel()
        await asyncio.gather(*tasks, waiter, return_exceptions=True)
        await store.close()


def run(args: argparse.Namespace) -> int:
    fmt = "%(asctime)s %(levelname)s %(name)s %(message)s"
    try:
        config = load_config(args)
    except HubConfigError as exc:
        logging.basicConfig(level="INFO", format=fmt)
        log.error("%s", exc)
        return 2
    logging.basicConfig(level=config.log_level, format=fmt)
    try:
        return asyncio.run(_main(config))
    except HubConfigError as exc:
        log.error("%s", exc)
        return 2
