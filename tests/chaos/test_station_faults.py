"""Repeatable checks of issue 28's station faults, real processes (docs/operations.md).

A venue of 2 node processes × 4 boards playing a round (``support.chaos.ChaosVenue``: Mosquitto
from broker-config, ``qizhong station`` and ``qizhong node`` processes, simulated faces), the
station's data folder on a real tmpfs. Each check measures, and prints, what the arbiter sees,
on every page in chromium:

- **station disk full**: the tmpfs filled to the last byte under the running station → every
  page shows ``store_failing`` within 5 s; the station killed and started again on the full
  disk → it serves, every page says so within 5 s; space back → the alarm goes and the store
  holds every event of every node's journal (read directly) exactly once;
- **broker down**: Mosquitto killed → every page says ``broker_down`` within 5 s and
  ``/api/boards`` every board ``unknown_since`` (none online); back → gone, and nothing lost.

Pages: display, board, arbiter, standings, pairing, the record page and the chief's QR sheet;
the first page is timed from the fault, and each page from its own load (the slowest printed).

Run with ``-s`` for the table of times (docs/operations.md has the last one).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from support.chaos import ChaosPlan, ChaosVenue
from support.chaos_faults import alarm_codes, all_journals, caught_up, start_round, stop_nodes
from support.chaos_round import Api, store_keys, until
from support.full_disk import fill, small_disk

pytestmark = [
    pytest.mark.broker,
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="session"),
]

PLAN = ChaosPlan("station-faults", boards=8, power_cuts=2, cutoffs=0, speed=10.0)
PAGES = ("/", "/board/1", "/arbiter", "/standings", "/pairing", "/record/1", "/record/sheet")


async def every_page_says(page: Any, url: str, code: str, since: float) -> tuple[float, float]:
    """(seconds from ``since`` until the first page showed ``code``, the slowest page's
    seconds from its own load); each page in turn, each within 5 s of its load."""
    first, slowest = None, 0.0
    for path in PAGES:
        loaded = time.monotonic()
        await page.goto(url + path)
        await page.wait_for_selector(f'#qz-alarm[data-codes~="{code}"]', timeout=5000)
        slowest = max(slowest, time.monotonic() - loaded)
        first = first or time.monotonic() - since
    assert slowest < 5, f"a page showed {code} {slowest:.2f} s after its load"
    return first or 0.0, slowest


async def test_station_disk_full_and_broker_down_on_every_page(tmp_path: Path, page: Any) -> None:
    work = tmp_path / "venue"
    venue = ChaosVenue(work, plan=PLAN)
    rows: list[tuple[str, str]] = []
    with small_disk(work / "station", size_kb=16384) as disk:
        try:
            await asyncio.to_thread(venue.start)
            api = Api(venue.url, venue.arbiter_password)
            await start_round(venue, api)
            await asyncio.sleep(4)  # the round is played a while
            db = disk / "station.db"

            # -- station disk full, under the running station
            filler = fill(disk)
            t0 = time.monotonic()
            first, last = await every_page_says(page, venue.url, "store_failing", t0)
            rows.append(("disk fills under the station → banner on the first page / slowest page",
                         f"{first:.2f} s / {last:.2f} s"))  # fmt: skip
            assert first < 5
            # -- the station restarted on the full disk: it serves and says so
            assert venue.station_proc is not None
            venue.station_proc.send_signal(signal.SIGKILL)
            venue.station_proc.wait(10)
            venue.station_proc = venue._spawn("station", "--config", str(work / "station.toml"))
            t0 = time.monotonic()
            proc = venue.station_proc
            await until(
                lambda: proc.poll() is None and "store_failing" in (alarm_codes(api) or []),
                timeout_s=10, what="the station on the full disk to say store_failing", every_s=0.1,
            )  # fmt: skip
            served = time.monotonic() - t0
            first, last = await every_page_says(page, venue.url, "store_failing", t0)
            rows.append(
                ("station started on the full disk → /api/station says so", f"{served:.2f} s")
            )
            rows.append(
                ("… and the banner on the first / slowest page", f"{first:.2f} s / {last:.2f} s")
            )
            assert served < 5 and first < 5
            await asyncio.sleep(3)
            assert venue.station_proc.poll() is None, "the station exited on the full disk"
            os.unlink(filler)
            t0 = time.monotonic()
            await until(
                lambda: alarm_codes(api) == [], timeout_s=15, what="the alarm gone", every_s=0.2
            )
            gone = time.monotonic() - t0
            stored = await caught_up(venue, db, 30)
            rows.append(("space back → alarm gone / every journaled event stored",
                         f"{gone:.2f} s / {gone + stored:.2f} s"))  # fmt: skip

            # -- broker down
            assert venue.broker is not None
            venue.broker.kill()
            t0 = time.monotonic()
            first, last = await every_page_says(page, venue.url, "broker_down", t0)
            rows.append(("broker killed → banner on the first page / slowest page",
                         f"{first:.2f} s / {last:.2f} s"))  # fmt: skip
            assert first < 5
            # /api/boards: no board online, each unknown since the station lost the broker
            views = await asyncio.to_thread(api.boards)
            assert len(views) == venue.boards
            assert all(v["unknown_since"] and not v["online"] for v in views.values()), views
            await asyncio.sleep(2)
            venue.broker.start()
            t0 = time.monotonic()
            await until(
                lambda: alarm_codes(api) == [], timeout_s=20, what="broker_down gone", every_s=0.2
            )
            rows.append(("broker back → alarm gone", f"{time.monotonic() - t0:.2f} s"))
            await asyncio.sleep(3)
            stored = await caught_up(venue, db, 30)
            rows.append(("… every journaled event stored", f"{stored:.2f} s later"))
            await asyncio.to_thread(stop_nodes, venue)  # no event after the comparison's
            await caught_up(venue, db, 30)
        finally:
            await asyncio.to_thread(venue.stop)
        want = all_journals(venue)
        got = store_keys(disk / "station.db")
        assert got == want, (sorted(want - got)[:10], sorted(got - want)[:10])
        rows.append(("events: journals / store (each once)", f"{len(want)} / {len(got)}"))
    width = max(len(r[0]) for r in rows)
    print("\n" + "\n".join(f"| {a.ljust(width)} | {b} |" for a, b in rows))
    print(f"| {'load (uptime)'.ljust(width)} | {os.getloadavg()[0]:.2f} |")
