"""Bounded under overload (issue 18): the station and the hub each driven at twice the capacity
measured in the same run, for 5 minutes; peak resident memory against the 300 MB bound, the
catch-up time once the load stops, and every published event stored exactly once.

For each side: capacity = events/s it stores from a backlog in front of it (the station: a
burst queued at its Mosquitto while it is SIGSTOPped; the hub: a burst waiting in JetStream
before it starts). Then a paced publisher drives it at ``--factor`` × capacity for
``--minutes`` while a thread samples its RSS (and its broker's) every second; the load stops,
the backlog (at Mosquitto / in JetStream) drains, and the store is compared with every key
published. ``ratio`` = the larger peak RSS ÷ 300 MB (≤ 1 is the bound holding).

    python benchmarks/overload.py                  # both sides, 2x for 5 min each
    python benchmarks/overload.py --side hub       # one side
    python benchmarks/overload.py --quick          # both, 2x for 10 s (small bursts)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
from typing import Any

from _common import emit, parse_args

BOARDS = 1000  # at 2x a station's capacity every board stays under the flood gate (20/s)


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--side", choices=("station", "hub", "both"), default="both")
    parser.add_argument("--minutes", type=float, default=5.0, help="overload window (0.1..60)")
    parser.add_argument("--factor", type=float, default=2.0, help="x capacity (1..10)")


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    if not 0.1 <= args.minutes <= 60 or not 1.0 <= args.factor <= 10.0:
        raise SystemExit("--minutes must be 0.1..60 and --factor 1..10")
    window = 10.0 if args.quick else args.minutes * 60
    burst = 5_000 if args.quick else 20_000  # the station takes ~1-2 min for 20,000 here
    out: dict[str, Any] = {"benchmark": "overload", "factor": args.factor}
    peaks = []
    if args.side in ("station", "both"):
        from _overload_station import run_station

        station = await run_station(BOARDS, window, args.factor, burst)
        print(json.dumps(station), flush=True)
        out["station"] = station
        peaks.append(station["station_peak_rss_mb"])
    if args.side in ("hub", "both"):
        from _overload_hub import run_hub

        hub = await run_hub(BOARDS, window, args.factor, burst)
        print(json.dumps(hub), flush=True)
        out["hub"] = hub
        peaks.append(hub["hub_peak_rss_mb"])
    out["lost"] = sum(out[s]["lost"] + out[s]["unknown"] for s in ("station", "hub") if s in out)
    out["load_avg_1m"] = round(os.getloadavg()[0], 2)
    out["ratio"] = round(max(peaks) / 300.0, 2)
    return out


def main() -> None:
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("mqtt").setLevel(logging.ERROR)  # aiomqtt's "pending publish calls" at 2x
    args = parse_args((__doc__ or "").splitlines()[0], _options)
    emit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
