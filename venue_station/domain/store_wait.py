"""A station whose database cannot be opened at start (a full disk) serves without it (issue 28).

It used to exit with a traceback: under systemd a restart loop, and no arbiter page at all.
Now ``Station.open`` falls back on :func:`watch_only`: the pages are served, ``/api/station``
says ``store_failing`` (the banner on every page), the boards' views stay live (an ingest that
decides nothing, fed by the collector), and :func:`open_when_possible` tries the database every
``STORE_RETRY_S``. Once it opens, the station becomes what it would have been: its session
counted, its ingest loaded from the store with the views it kept, a collector of the new
session — which every node answers with a rebirth, and the gaps this leaves (every event the
station could not store) are asked for and replayed from the nodes' journals, once each.
What needs the store meanwhile gets ``StoreUnavailable`` (HTTP 503).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from venue_station.errors import StoreError
from venue_station.intake.collector import Collector
from venue_station.intake.ingest import Ingest
from venue_station.store.database import Store

__all__ = ["STORE_RETRY_S", "open_store", "open_when_possible", "watch_only"]

log = logging.getLogger("venue_station.domain.station")
STORE_RETRY_S = 1.0  # a station without its database tries to open it this often


async def open_store(station: Any) -> None:
    """Open the store and count this start's session (a write): both, or neither."""
    store = await Store.open(station.config.db_url)
    try:
        station.session = await store.next_station_session()
    except BaseException:
        await store.close()
        raise
    station.store = store


def watch_only(station: Any) -> None:
    """Without a store: an ingest that keeps the boards' views live and decides nothing,
    and a collector feeding it (the nodes keep their journals: the station that has its
    store asks them to replay, as after any restart)."""
    ingest = station.ingest = Ingest(
        Store.unopened(station.config.db_url), venue=station.config.venue, metrics=station.metrics,
        hub=station.hub, known_boards=station.config.known_boards(),
    )  # fmt: skip
    ingest.deciding = False
    station.supervisor.start("writer", ingest.writer.run_discard)
    if station.connect:
        station.collector = Collector(station.config.broker, station.topics, ingest, session=0)
        station.supervisor.start("collector", station.collector.run)


async def open_when_possible(station: Any, db_file: Path | None) -> None:
    waiting = station.store_waiting
    assert waiting is not None
    while True:
        await asyncio.sleep(STORE_RETRY_S)
        waiting.tries += 1
        try:
            await open_store(station)
            break
        except StoreError:
            raise
        except Exception as exc:
            waiting.error = f"{type(exc).__name__}: {exc}"[:300]
    log.warning("the database is open after %d tries: storing again", waiting.tries)
    for name in ("collector", "writer"):
        await station.supervisor.cancel(name)
    watched = station.ingest
    await station.open_rest(db_file)
    if watched is not None and station.ingest is not None:
        # The views kept live are newer than the store's; the new collector has not run yet
        # (open_rest only started it), so nothing newer is overwritten.
        for board, view in watched.boards.items():
            station.ingest.boards[board] = view
        await watched.store.close()
    station.store_waiting = None
    station.supervisor.states.pop("store-open", None)  # done, not down
    station.supervisor.tasks.pop("store-open", None)
