"""The pure parts of the station's containment: the flood gate, the drop log's rate limit,
the set of stored seqs, which errors set a row aside (issue 12)."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa

from venue_station.intake.containment import is_transient
from venue_station.intake.guard import AskedReplays, DropLog, FloodGate
from venue_station.intake.seqs import RangeSet
from venue_station.live.metrics import Metrics


def test_the_flood_gate_passes_a_burst_then_the_rate_then_recovers() -> None:
    gate = FloodGate(rate=10.0, burst=100)
    assert all(gate.admit("5", 0.0) for _ in range(100))
    assert not gate.admit("5", 0.0) and gate.throttled() == ["5"]
    assert gate.admit("1", 0.0)  # another board is not touched
    assert gate.admit("5", 0.1) and not gate.admit("5", 0.1)  # 10 a second: one per 0.1 s
    assert gate.admit("5", 100.0) and gate.throttled() == []  # quiet long enough: recovered


def test_only_a_replay_the_station_asked_passes_the_gate_each_seq_once_in_order() -> None:
    asks = AskedReplays(open_s=10.0)
    assert not asks.admit("5", 1, 0.0)  # never asked: the flood gate judges it
    asks.asked("5", 100, 0.0)
    assert not asks.admit("5", 99, 0.1)  # below what was asked
    assert all(asks.admit("5", seq, 0.2) for seq in range(100, 5100))  # a long journal
    assert not asks.admit("5", 4000, 0.3)  # a repeat (a second copy) is not let through
    assert not asks.admit("1", 200, 0.3)  # another board asked nothing
    assert asks.flowing("5", 1.0) and not asks.flowing("5", 3.0)
    assert not asks.admit("5", 5100, 20.0)  # quiet longer than open_s: the ask is closed
    assert asks.admitted == 5000


def test_the_drop_log_counts_every_drop_and_logs_one_a_second(
    caplog: pytest.LogCaptureFixture,
) -> None:
    metrics = Metrics()
    drops = DropLog(metrics, every_s=60)
    with caplog.at_level(logging.WARNING):
        for _ in range(1000):
            drops.drop("not_json", "qz/v1/t/board/1/event", "not JSON")
        drops.drop("too_large", "qz/v1/t/board/1/event", "big")
    assert metrics.bad_payloads["not_json"] == 1000 and metrics.bad_payloads["too_large"] == 1
    assert len(caplog.records) == 2


def test_a_range_set_holds_runs_as_few_entries() -> None:
    seqs = RangeSet()
    for seq in [*range(1, 500), *range(600, 700), 550, 500]:
        seqs.add(seq)
    assert len(seqs) == 3  # 1-500, 550, 600-699
    assert 1 in seqs and 500 in seqs and 550 in seqs and 699 in seqs
    assert 501 not in seqs and 700 not in seqs and 0 not in seqs
    for seq in range(501, 600):
        seqs.add(seq)
    assert len(seqs) == 1


@pytest.mark.parametrize(
    ("exc", "retry"),
    [
        (OverflowError("Python int too large to convert to SQLite INTEGER"), False),
        (sa.exc.DataError("INSERT", {}, Exception("value too long")), False),
        (sa.exc.OperationalError("INSERT", {}, Exception("database is locked")), True),
        (sa.exc.IntegrityError("INSERT", {}, Exception("the disk is full")), True),
        (ConnectionRefusedError(), True),
    ],
)
def test_only_a_refused_value_sets_a_row_aside(exc: BaseException, retry: bool) -> None:
    assert is_transient(exc) is retry
