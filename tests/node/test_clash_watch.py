"""ClashWatch's rule for "another process is connected as this board" (board_nodes/
identity_clash.py), statuses as the broker delivers them, no broker: what is a clash and what
is only the board's own past (a dead Pi's last word, this process's previous life, its own
statuses read back)."""

from __future__ import annotations

import json
import logging

import pytest

from board_nodes.identity_clash import MEMORY_MS, PAUSE_S, ClashWatch

START = 1_800_000_000_000


def status(conn: int | None, state: str = "lost", node: str = "pi-01") -> bytes:
    body = {"state": state, "node": node, "session": 3, "ts": conn or START}
    if conn is not None:
        body["conn"] = conn
    return json.dumps(body).encode()


def watch() -> ClashWatch:
    w = ClashWatch("1", "pi-01", started_ms=START, rng=lambda: 0.5)
    w.connecting(START + 5)  # a try that failed (the Wi-Fi not up yet at boot)
    w.connecting(START + 10)
    w.connected()
    return w


def test_the_boards_own_past_is_no_clash() -> None:
    w = watch()
    now = START + 1_000
    # what the broker kept from before this process connected: a dead Pi's will, even one
    # dated after this process started (its clock ahead), is carried on, not a clash
    assert not w.heard(status(START + 500), retained=True, now_ms=now)
    assert not w.heard(status(START - 60_000), retained=False, now_ms=now)  # an older life
    assert not w.heard(status(START + 10, "online"), retained=False, now_ms=now)  # its own
    assert not w.heard(status(None), retained=False, now_ms=now)  # an old node: no conn
    assert not w.heard(b"{not json", retained=False, now_ms=now)
    assert w.count == 0 and w.pause_s(now) == 0.0


@pytest.mark.allow_error_log  # the clash is logged at ERROR: that is the point
def test_another_connection_since_this_one_started_is_a_clash(
    caplog: pytest.LogCaptureFixture,
) -> None:
    w = watch()
    w.connecting(START + 2_000)  # taken from it; connected again: the other's will is kept
    w.connected()
    with caplog.at_level(logging.ERROR):
        assert w.heard(status(START + 1_500), retained=True, now_ms=START + 2_100)
        # heard again: not news (the status already says so), logged at most once a minute
        assert not w.heard(status(START + 2_500), retained=False, now_ms=START + 2_600)
    assert w.count == 2
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert "another node is connected as pi-01" in line and "two Pis with one identity" in line
    assert w.pause_s(START + 3_000) == PAUSE_S  # (jitter 0.75 + 0.5 × 0.5)
    # forgotten once the duplicate has been gone a while: reconnects are quick again
    assert w.remembered(START + 2_600 + MEMORY_MS - 1)
    assert w.pause_s(START + 2_600 + MEMORY_MS) == 0.0
    assert w.heard(status(START + MEMORY_MS * 2), retained=False, now_ms=START + MEMORY_MS * 3)


@pytest.mark.allow_error_log
def test_a_live_status_of_another_connection_counts_on_the_first_connection() -> None:
    w = watch()
    assert w.heard(status(START + 700, "online"), retained=False, now_ms=START + 800)
