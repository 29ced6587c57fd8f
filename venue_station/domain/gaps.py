"""The station asks a board to replay what it is missing: every open seq gap, after a grace,
with back-off; a ``gap`` alert after four asks (moved out of ``station.py``)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from venue_station.live.alerts import AlertSpec
from wire_contract.wallclock import wall_ms

__all__ = ["watch_gaps"]

log = logging.getLogger("venue_station.domain.station")


async def watch_gaps(station: Any) -> None:
    grace = station.config.rebirth_grace_ms / 1000
    retry = station.config.rebirth_retry_ms / 1000
    assert station.ingest is not None and station.bus is not None
    while True:
        await asyncio.sleep(0.05)
        if station.collector is None or not station.collector.connected.is_set():
            continue
        now = time.monotonic()
        for board, seqs in station.ingest.seqs.open_gaps().items():
            if seqs.gap_since is None or now - seqs.gap_since < grace:
                continue
            if station.ingest.replays.flowing(board, now):
                continue  # the replay asked is coming in: asking again would restart it
            backoff = retry * 2 ** min(max(seqs.rebirths - 1, 0), 4)
            if seqs.last_rebirth is not None and now - seqs.last_rebirth < backoff:
                continue
            seqs.last_rebirth, seqs.rebirths = now, seqs.rebirths + 1
            station.metrics.rebirths_sent += 1
            log.info("board %s: asking for a rebirth to fill %s", board, seqs.missing(3))
            try:
                missing = seqs.missing(1)
                args = {"from_seq": missing[0][0]} if missing else {}
                if missing:
                    station.ingest.replays.asked(board, missing[0][0], now)
                await station.bus.send(board, "rebirth", args, wait=False)
            except ConnectionError:
                continue
            if seqs.rebirths == 4:
                spec = AlertSpec(
                    f"gap:{board}:{seqs.watermark}",
                    "gap",
                    board,
                    wall_ms(),
                    detail={"missing": [list(r) for r in seqs.missing()]},
                )
                station.ingest.raise_alert(spec)
