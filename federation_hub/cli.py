"""``qizhong hub``: one hub process — JetStream → PostgreSQL, and the read-only page/API.

Run as many as you like against the same centre and database: they share the durable
consumers (JetStream hands each message to one of them) and the store's unique key makes a
message two of them saw stored once. The password comes from a file or $QZ_HUB_PASSWORD,
never the command line (it would show in ``ps``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from pathlib import Path
from typing import Any

import uvicorn
from sqlalchemy.exc import SQLAlchemyError

from federation_hub.consumer import MAX_BATCH, Hub
from federation_hub.errors import HubConfigError
from federation_hub.standings import VenueProfiles
from federation_hub.store import HubStore
from federation_hub.streams import StreamPlan
from federation_hub.web import LiveConfig, build_app, server_config
from wire_contract.messages import WireError, check_id

__all__ = ["add_arguments", "run"]

log = logging.getLogger("federation_hub")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nats", required=True, help="comma-separated nats:// URLs of the centre")
    parser.add_argument("--user", default="hub")
    parser.add_argument("--password-file", type=Path, help="else $QZ_HUB_PASSWORD")
    parser.add_argument("--db", required=True, help="postgresql://user@host/db")
    parser.add_argument("--http", default="127.0.0.1:8090", help="HOST:PORT of the page/API")
    parser.add_argument("--prefix", default="fed", help="the venues' bridge prefix")
    parser.add_argument("--replicas", type=int, default=1, choices=(1, 3, 5))
    parser.add_argument("--batch", type=int, default=200, help=f"1..{MAX_BATCH} per fetch")
    parser.add_argument("--workers", type=int, default=1, help="event readers, 1..8")
    parser.add_argument("--max-ack-pending", type=int, default=1000)
    parser.add_argument("--max-bytes-mb", type=int, default=8192, help="events stream bound")
    parser.add_argument("--name", default=f"hub-{os.getpid()}")
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument(
        "--regulation", default="meishan-2016", help="the venues' profile (standings scoring)"
    )
    parser.add_argument(
        "--venue-regulation",
        action="append",
        default=[],
        metavar="VENUE=PROFILE",
        help="one venue's own profile (repeatable)",
    )
    parser.add_argument(
        "--public-ws", help="ws(s):// URL of the centre's NATS WebSocket listener (the /live page)"
    )
    parser.add_argument(
        "--live-max-boards", type=int, default=1000, help="boards one /live page keeps"
    )


def _password(args: argparse.Namespace) -> str:
    if args.password_file is not None:
        try:
            return str(args.password_file.read_text(encoding="utf-8")).strip()
        except OSError as exc:
            raise HubConfigError(f"--password-file {args.password_file}: {exc}") from None
    value = os.environ.get("QZ_HUB_PASSWORD")
    if not value:
        raise HubConfigError("give --password-file or set QZ_HUB_PASSWORD")
    return value


def _profiles(args: argparse.Namespace) -> VenueProfiles:
    per_venue: dict[str, str] = {}
    for item in args.venue_regulation:
        venue, sep, profile = item.partition("=")
        try:
            check_id("venue", venue)
        except WireError as exc:
            raise HubConfigError(f"--venue-regulation {item!r}: {exc}") from None
        if not sep or not profile:
            raise HubConfigError(f"--venue-regulation {item!r}: expected VENUE=PROFILE")
        per_venue[venue] = profile
    return VenueProfiles.load(args.regulation, per_venue)


async def _main(args: argparse.Namespace) -> int:
    host, _, port = args.http.rpartition(":")
    # The web settings first: a bad one is said before anything connects.
    profiles = _profiles(args)
    live = LiveConfig(args.public_ws, args.prefix, args.live_max_boards)
    plan = StreamPlan(
        prefix=args.prefix,
        replicas=args.replicas,
        max_ack_pending=args.max_ack_pending,
        max_bytes=args.max_bytes_mb * 1024 * 1024,
    )
    password = _password(args)  # before the store: a missing password is said first
    try:
        store = await HubStore.open(args.db)
    except (SQLAlchemyError, OSError) as exc:
        raise HubConfigError(f"--db: cannot open the store: {exc}") from None
    hub = Hub(
        servers=args.nats.split(","),
        user=args.user,
        password=password,
        store=store,
        plan=plan,
        batch=args.batch,
        workers=args.workers,
        name=args.name,
    )
    app = build_app(store, hub.counters.as_dict, profiles=profiles, live=live)
    server = uvicorn.Server(server_config(app, host=host, port=int(port)))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    tasks: list[asyncio.Task[Any]] = [
        asyncio.create_task(hub.run()),
        asyncio.create_task(server.serve()),
    ]
    waiter = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([*tasks, waiter], return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            failure = t.exception() if t.done() else None
            if failure is not None:
                raise failure
        log.info("hub %s: stopping (%s)", args.name, hub.counters.as_dict())
        return 0
    finally:
        server.should_exit = True
        for t in (*tasks, waiter):
            t.cancel()
        await asyncio.gather(*tasks, waiter, return_exceptions=True)
        await store.close()


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    try:
        return asyncio.run(_main(args))
    except HubConfigError as exc:
        log.error("%s", exc)
        return 2
