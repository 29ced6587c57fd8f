"""The station's counters and their Prometheus text exposition (no client library needed)."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["LAG_BUCKETS_MS", "Metrics"]

LAG_BUCKETS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 60000)


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
    lag_buckets: list[int] = field(default_factory=lambda: [0] * (len(LAG_BUCKETS_MS) + 1))
    lag_sum_ms: int = 0
    lag_count: int = 0
    lag_last_ms: int = 0
    # Filled at exposition time by the station (values that live elsewhere).
    gauges: dict[str, Callable[[], float]] = field(default_factory=dict)

    def observe_lag(self, lag_ms: int) -> None:
        self.lag_last_ms = lag_ms
        self.lag_sum_ms += lag_ms
        self.lag_count += 1
        self.lag_buckets[bisect.bisect_left(LAG_BUCKETS_MS, lag_ms)] += 1

    def bad_payload(self, kind: str) -> None:
        self.bad_payloads[kind] += 1

    def render(self) -> str:
        out: list[str] = []

        def metric(name: str, kind: str, help_text: str, samples: list[tuple[str, float]]) -> None:
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} {kind}")
            out.extend(f"{name}{labels} {_num(value)}" for labels, value in samples)

        metric(
            "qz_events_stored_total",
            "counter",
            "Events stored (each exactly once).",
            [("", self.events_stored)],
        )
        metric(
            "qz_duplicates_dropped_total",
            "counter",
            "Events received again and not stored.",
            [("", self.duplicates_dropped)],
        )
        metric(
            "qz_events_reordered_total",
            "counter",
            "Events stored after a later seq of their board.",
            [("", self.events_reordered)],
        )
        metric(
            "qz_gaps_detected_total",
            "counter",
            "Seq gaps seen in a board's events.",
            [("", self.gaps_detected)],
        )
        metric(
            "qz_gaps_closed_total",
            "counter",
            "Seq gaps filled by a replay.",
            [("", self.gaps_closed)],
        )
        metric(
            "qz_rebirths_sent_total",
            "counter",
            "rebirth commands sent to close a gap.",
            [("", self.rebirths_sent)],
        )
        metric(
            "qz_states_stored_total",
            "counter",
            "State snapshots accepted.",
            [("", self.states_stored)],
        )
        metric(
            "qz_alerts_raised_total",
            "counter",
            "Alerts raised for the arbiters.",
            [("", self.alerts_raised)],
        )
        metric(
            "qz_bad_payloads_total",
            "counter",
            "MQTT messages rejected, by kind.",
            [(f'{{kind="{k}"}}', v) for k, v in sorted(self.bad_payloads.items())]
            or [('{kind="none"}', 0)],
        )
        metric(
            "qz_bad_requests_total",
            "counter",
            "HTTP requests rejected with 4xx, by kind.",
            [(f'{{kind="{k}"}}', v) for k, v in sorted(self.bad_requests.items())]
            or [('{kind="none"}', 0)],
        )
        metric(
            "qz_commands_total",
            "counter",
            "Commands sent, by outcome.",
            [(f'{{outcome="{k}"}}', v) for k, v in sorted(self.commands.items())]
            or [('{outcome="ok"}', 0)],
        )
        for name, read in sorted(self.gauges.items()):
            metric(name, "gauge", name.replace("_", " "), [("", read())])
        metric(
            "qz_ingest_lag_last_ms",
            "gauge",
            "now - ts of the last event stored.",
            [("", self.lag_last_ms)],
        )
        samples: list[tuple[str, float]] = []
        running = 0
        for bound, count in zip((*LAG_BUCKETS_MS, None), self.lag_buckets, strict=True):
            running += count
            samples.append((f'_bucket{{le="{bound if bound is not None else "+Inf"}"}}', running))
        samples += [("_sum", self.lag_sum_ms), ("_count", self.lag_count)]
        out.append("# HELP qz_ingest_lag_ms Event ts to stored, in milliseconds.")
        out.append("# TYPE qz_ingest_lag_ms histogram")
        out.extend(f"qz_ingest_lag_ms{suffix} {_num(v)}" for suffix, v in samples)
        return "\n".join(out) + "\n"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
