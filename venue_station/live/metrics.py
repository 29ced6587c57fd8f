"""The station's metrics and their Prometheus exposition, by ``prometheus_client``.

Each station has its own ``CollectorRegistry`` (never the library's global one: several
stations run in one test process, and a second registration there would raise). On it:

- the counters below, kept as plain ints and ``Counter``s that the ingest, the writer and the
  command bus add to on the loop (an int add is the hot path's whole cost; the health view and
  the tests read them back as numbers), exposed at scrape time by ``_StationCollector`` as
  counter families — the library's documented way for values that live elsewhere;
- ``gauges``: name -> a function read at scrape time (queue sizes, tasks down, ...);
- ``qz_ingest_lag_ms``: a ``Histogram`` of event ts to stored (``LAG_BUCKETS_MS``);
- the process's CPU, memory and open files (``ProcessCollector``).

``exposition()`` is ``generate_latest(registry)`` in the 0.0.4 text format (``CONTENT_TYPE``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Histogram, ProcessCollector, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["CONTENT_TYPE", "LAG_BUCKETS_MS", "Metrics"]

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
LAG_BUCKETS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 60000)

# name (without _total), help, the attribute holding it
_COUNTERS = (
    ("qz_events_stored", "Events stored (each exactly once).", "events_stored"),
    ("qz_duplicates_dropped", "Events received again and not stored.", "duplicates_dropped"),
    ("qz_events_reordered", "Events stored after a later seq of their board.", "events_reordered"),
    ("qz_gaps_detected", "Seq gaps seen in a board's events.", "gaps_detected"),
    ("qz_gaps_closed", "Seq gaps filled by a replay.", "gaps_closed"),
    ("qz_rebirths_sent", "rebirth commands sent to close a gap.", "rebirths_sent"),
    ("qz_states_stored", "State snapshots accepted.", "states_stored"),
    ("qz_alerts_raised", "Alerts raised for the arbiters.", "alerts_raised"),
)
# name, help, label, the attribute holding it, the sample shown before the first count (a
# dashboard's query finds the series from the start)
_LABELLED = (
    ("qz_bad_payloads", "MQTT messages rejected, by kind.", "kind", "bad_payloads", "none"),
    (
        "qz_bad_requests",
        "HTTP requests rejected with 4xx, by kind.",
        "kind",
        "bad_requests",
        "none",
    ),
    ("qz_commands", "Commands sent, by outcome.", "outcome", "commands", "ok"),
)


@dataclass
class Metrics:
    events_stored: int = 0
    duplicates_dropped: int = 0
    events_reordered: int = 0
    gaps_detected: int = 0
    gaps_closed: int = 0
    rebirths_sent: int = 0
    states_stored: int = 0
    alerts_raised: int = 0
    bad_payloads: Counter[str] = field(default_factory=Counter)
    bad_requests: Counter[str] = field(default_factory=Counter)
    commands: Counter[str] = field(default_factory=Counter)
    lag_last_ms: int = 0
    # Filled by the station and the ingest: values that live elsewhere, read at scrape time.
    gauges: dict[str, Callable[[], float]] = field(default_factory=dict)
    registry: CollectorRegistry = field(
        default_factory=lambda: CollectorRegistry(auto_describe=True)
    )

    def __post_init__(self) -> None:
        self.registry.register(_StationCollector(self))
        self.lag = Histogram(
            "qz_ingest_lag_ms",
            "Event ts to stored, in milliseconds.",
            buckets=LAG_BUCKETS_MS,
            registry=self.registry,
        )
        ProcessCollector(registry=self.registry)

    def observe_lag(self, lag_ms: int) -> None:
        self.lag_last_ms = lag_ms
        self.lag.observe(lag_ms)

    def bad_payload(self, kind: str) -> None:
        self.bad_payloads[kind] += 1

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def render(self) -> str:
        return self.exposition().decode()


class _StationCollector(Collector):
    """The counters and gauges of one ``Metrics``, as metric families at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        for name, help_text, attr in _COUNTERS:
            yield CounterMetricFamily(name, help_text, value=getattr(m, attr))
        for name, help_text, label, attr, empty in _LABELLED:
            family = CounterMetricFamily(name, help_text, labels=[label])
            counts: Counter[str] = getattr(m, attr)
            for key, value in sorted(counts.items()) or [(empty, 0)]:
                family.add_metric([key], value)
            yield family
        for name, read in sorted(m.gauges.items()):
            yield GaugeMetricFamily(name, name.replace("_", " "), value=read())
        yield GaugeMetricFamily(
            "qz_ingest_lag_last_ms", "now - ts of the last event stored.", value=m.lag_last_ms
        )
