"""Shared helpers for the benchmarks in this folder: arguments, timing, the JSON last line.

Every benchmark is a script run as ``python benchmarks/<name>.py [--quick]``; the script's own
folder is on ``sys.path``, so it imports this module as ``from _common import ...``. The
convention (docs/benchmarks.md): ``--quick`` finishes in under 30 s, figures are reported as
ratios against a baseline measured in the same run, and the last line of output is one JSON
object with at least a ``"ratio"`` key.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = [
    "PG_ADMIN",
    "best_of",
    "emit",
    "parse_args",
    "percentiles",
    "pg_url",
    "time_per_call_ns",
]

# The PostgreSQL of the benchmarks on PostgreSQL: the tests' one (QZ_PG_HOST, QZ_PG_PORT as
# tools/bring_up.py sets them; default 127.0.0.1:5432), trust auth for ``postgres``.
PG_HOST = os.environ.get("QZ_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("QZ_PG_PORT", "5432"))
PG_ADMIN: dict[str, Any] = {
    "host": PG_HOST,
    "port": PG_PORT,
    "database": "test",
    "user": "postgres",
}


def pg_url(name: str) -> str:
    """The URL of database ``name`` on that server."""
    return f"postgresql://postgres@{PG_HOST}:{PG_PORT}/{name}"


def parse_args(
    description: str,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
    argv: Sequence[str] | None = None,
) -> argparse.Namespace:
    """Parse the common benchmark arguments; ``extra(parser)`` may add the script's own.

    The namespace always has ``quick: bool``.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--quick", action="store_true", help="a shorter run that finishes in under 30 s"
    )
    if extra is not None:
        extra(parser)
    return parser.parse_args(argv)


def percentiles(values: Iterable[float]) -> dict[str, float]:
    """p50, p90, p99 and max of ``values`` (nearest-rank); raises ValueError when empty."""
    data = sorted(values)
    if not data:
        raise ValueError("percentiles() of an empty sequence")

    def rank(p: float) -> float:
        # Nearest-rank: the smallest value with at least p% of the data at or below it.
        index = max(0, math.ceil(p / 100 * len(data)) - 1)
        return data[index]

    return {"p50": rank(50), "p90": rank(90), "p99": rank(99), "max": data[-1]}


def time_per_call_ns(fn: Callable[[], object], calls: int) -> float:
    """Mean wall time of one ``fn()`` in ns over ``calls`` calls (loop overhead included)."""
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - start) / calls


def best_of(repeats: int, measure: Callable[[], float]) -> float:
    """The smallest of ``repeats`` measurements: the one least disturbed by the machine."""
    return min(measure() for _ in range(repeats))


def emit(result: dict[str, Any]) -> None:
    """Print a readable summary of ``result``, then the result as one JSON object, last line."""
    if "ratio" not in result:
        raise ValueError("a benchmark result must carry a 'ratio' key")
    width = max((len(str(k)) for k in result), default=0)
    for key, value in result.items():
        shown = f"{value:,.3f}" if isinstance(value, float) else str(value)
        print(f"  {key:<{width}}  {shown}")
    print(json.dumps(result, sort_keys=False, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    # `make bench` runs every benchmarks/*.py; this one is a library, so say so and succeed.
    print("benchmarks/_common.py is the shared helper module, not a benchmark")
