"""``/metrics`` read back by Prometheus' own parser: families, types, labels, the lag histogram,
the process metrics, and one registry per station (two stations in one process never mix)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from support.station import ARBITER, ARBITER_PASSWORD, envelope, station_config

from venue_station.domain.station import Station
from venue_station.live.metrics import LAG_BUCKETS_MS


async def _scrape(station: Station) -> tuple[str, dict[str, Any]]:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        login = {"username": ARBITER, "password": ARBITER_PASSWORD}
        assert (await client.post("/api/auth/login", json=login)).status_code == 200
        assert (await client.get("/api/games?round=x")).status_code == 400
        r = await client.get("/metrics")
    assert r.status_code == 200
    families = {f.name: f for f in text_string_to_metric_families(r.text)}
    return r.headers["content-type"], families


def _value(family: Any, **labels: str) -> float:
    (sample,) = [
        s for s in family.samples if s.labels == labels and s.name == family.name + "_total"
    ]
    return float(sample.value)


async def test_metrics_parse_as_prometheus_text(tmp_path: Path, start_station: Any) -> None:
    one: Station = await start_station(station_config(tmp_path / "one"), connect=False)
    two: Station = await start_station(station_config(tmp_path / "two"), connect=False)
    assert one.ingest is not None
    for seq in (1, 2, 3):
        ev = envelope(
            "1", seq, type="started" if seq == 1 else "move", data=None if seq > 1 else {}
        )
        one.ingest.handle("qz/v1/test/board/1/event", json.dumps(ev).encode())
    one.ingest.handle("qz/v1/test/board/1/event", b"{not json")
    await one.ingest.flush()

    content_type, families = await _scrape(one)
    assert content_type.startswith("text/plain; version=0.0.4")
    assert families["qz_events_stored"].type == "counter"
    assert _value(families["qz_events_stored"]) == 3
    assert _value(families["qz_bad_requests"], kind="bad_request") == 1
    assert (
        sum(s.value for s in families["qz_bad_payloads"].samples if s.name.endswith("_total")) == 1
    )
    assert families["qz_writer_queue"].type == "gauge"
    lag = families["qz_ingest_lag_ms"]
    assert lag.type == "histogram"
    buckets = {s.labels["le"]: s.value for s in lag.samples if s.name.endswith("_bucket")}
    assert len(buckets) == len(LAG_BUCKETS_MS) + 1 and buckets["+Inf"] == 3
    assert next(s.value for s in lag.samples if s.name.endswith("_count")) == 3
    assert families["process_resident_memory_bytes"].samples[0].value > 0
    assert families["process_open_fds"].samples[0].value > 0

    # The second station's registry is its own: none of the first one's counts.
    _, others = await _scrape(two)
    assert _value(others["qz_events_stored"]) == 0
    assert (
        next(s.value for s in others["qz_ingest_lag_ms"].samples if s.name.endswith("_count")) == 0
    )
