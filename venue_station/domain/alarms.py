"""The station's own troubles, for the banner on every page and the arbiter's alerts (issue 28).

``alarms(station)`` is what ``/api/station`` lists, each a code the pages translate (banner.js):

- ``store_failing``: what arrives is not being stored — the database could not be opened at
  start (a full disk: the station serves its pages and keeps the live views meanwhile, and
  opens it as soon as it can), or the writer keeps failing (a full disk, a stuck lock);
- ``broker_down``: no board's news arrives; the clocks shown are the last known, every
  board's view says ``unknown_since`` that instant and is not ``online``;
- ``boards_silent``: boards online by their status that have said nothing for the silence
  bound (a node gone without its will: ``intake/silence.py``), shown "unknown since";
- ``unverified_decisions``: decisions the nodes replayed that no command of this station
  asked (a new station after a lost one), stored as proposals: ``count`` of them still open
  among the arbiter's alerts (acknowledged or ruled: no longer counted);
- ``backup_failing`` (``store/backup.py``).

``AlarmWatch.run`` is the station task that turns them into alerts within a second: one
``store_failing`` per spell (on the pages at once, stored once the disk takes writes again),
the silent boards (``board_silent``), and the count of unverified decisions.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from venue_station.intake.silence import silence_after_ms
from venue_station.live.alerts import store_failing_alert
from wire_contract.wallclock import wall_ms

__all__ = ["AlarmWatch", "StoreWaiting", "alarms", "broker_down_since"]

log = logging.getLogger(__name__)
TICK_S = 0.5
COUNT_EVERY_S = 2.0  # the unverified decisions are counted in the store this often


@dataclass
class StoreWaiting:
    """The station started without its database (it could not be opened or written)."""

    since_ms: int
    error: str
    tries: int = 0


@dataclass
class AlarmWatch:
    station: Any  # the Station (domain/station.py imports this module)
    store_since_ms: int | None = None  # the writer's failing spell, wall ms
    unverified: int = 0
    _counted_at: float = field(default=0.0)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(TICK_S)
            self.tick()
            if loop.time() - self._counted_at >= COUNT_EVERY_S:
                self._counted_at = loop.time()
                await self._count_unverified()

    def tick(self) -> None:
        st = self.station
        ingest, collector = st.ingest, st.collector
        if ingest is None or not ingest.deciding:
            return
        writer = ingest.writer.health
        if writer.retrying or writer.stuck():
            if self.store_since_ms is None:
                self.store_since_ms = wall_ms()
                log.warning("the store does not take writes: %s", writer.last_error)
                ingest.raise_alert(
                    store_failing_alert(st.config.venue, self.store_since_ms, writer.last_error)
                )
        elif self.store_since_ms is not None:
            log.info("the store takes writes again")
            self.store_since_ms = None
        if collector is not None and collector.connected.is_set() and collector.up_since_ms:
            ingest.silence.check(
                now_ms=wall_ms(),
                since_ms=collector.up_since_ms,
                after_ms=silence_after_ms(st.config.board_silent_s, st.config.clock_probe_s),
            )

    async def _count_unverified(self) -> None:
        st = self.station
        if st.store is None or st.ingest is None or not st.ingest.deciding:
            return
        # The unstored ones first, then the store, each alert by its id: one the writer
        # commits meanwhile is in both and counts once (read the other way round it was in
        # neither, and the banner's count one short for a tick).
        unstored = {
            a["id"] for a in st.ingest.alert_ledger.unstored() if a["kind"] == "unverified_decision"
        }
        try:
            stored = await st.store.open_alert_ids("unverified_decision")
        except Exception as exc:  # the store failing is its own alarm
            log.debug("could not count the unverified decisions: %s", exc)
            return
        self.unverified = len(stored | unstored)


def broker_down_since(station: Any) -> int | None:
    """Wall ms since when the station has had no broker (``broker_down``); None while it has
    one (or runs without: ``connect`` off). Every board's view is then unknown since that
    instant (``Station.board_views``: ``unknown_since``, not ``online``)."""
    collector = station.collector
    if station.connect and collector is not None and not collector.connected.is_set():
        return collector.down_since_ms or wall_ms()
    return None


def alarms(station: Any, watch: AlarmWatch) -> list[dict[str, Any]]:
    """What every page must show in a banner (the module's docstring)."""
    out: list[dict[str, Any]] = []
    waiting: StoreWaiting | None = station.store_waiting
    if waiting is not None:
        out.append({"code": "store_failing", "since_ms": waiting.since_ms, "detail": waiting.error})
    blind_since = broker_down_since(station)
    if blind_since is not None:
        out.append({"code": "broker_down", "since_ms": blind_since})
    ingest = station.ingest
    if ingest is not None and waiting is None:
        writer = ingest.writer.health
        if writer.stuck() or writer.retrying:
            since = watch.store_since_ms
            out.append({"code": "store_failing", "since_ms": since, "detail": writer.last_error})
    if ingest is not None:
        silent = sorted(
            (v.status["silent_since_ms"], b)
            for b, v in ingest.boards.items()
            if v.status is not None and "silent_since_ms" in v.status
        )
        if silent:
            boards = [b for _, b in silent]
            out.append(
                {"code": "boards_silent", "since_ms": silent[0][0], "count": len(boards),
                 "boards": boards[:20]}
            )  # fmt: skip
    if watch.unverified:
        out.append({"code": "unverified_decisions", "count": watch.unverified})
    backup = station.backup.alarm() if station.backup is not None else None
    if backup is not None:
        out.append(backup)
    return out
