"""Debouncer table tests with exact times (ms below, fed as ns)."""

from __future__ import annotations

import pytest

from firmware_bridge.debounce import DebounceMode, Debouncer, Transition

MS = 1_000_000


def run(mode, window_ms, edges, *, settle_at=None, level=False):
    deb = Debouncer(window_ms * MS, level=level, mode=mode)
    out = []
    for t, lvl in edges:
        out += deb.feed(t * MS, lvl)
    if settle_at is not None:
        out += deb.settle(settle_at * MS)
    return deb, [(tr.t_ns / MS, tr.level) for tr in out]


def burst(start_ms, n, step_ms, first=True):
    return [(start_ms + i * step_ms, first if i % 2 == 0 else not first) for i in range(n)]


LEADING = DebounceMode.LEADING
SETTLED = DebounceMode.SETTLED


@pytest.mark.parametrize(
    ("edges", "settle_at", "expected"),
    [
        # a clean press and release
        ([(0, True), (100, False)], None, [(0, True), (100, False)]),
        # 10 toggles within 5 ms: the first edge is the press, the rest bounce; it ends
        # released, which is taken when the window closes
        (burst(0, 10, 0.5), 20, [(0, True), (4.5, False)]),
        # the same burst, not yet settled: one press only so far
        (burst(0, 10, 0.5), 19, [(0, True)]),
        # 9 toggles: ends pressed; nothing more to take
        (burst(0, 9, 0.5), 40, [(0, True)]),
        # two bursty presses 50 ms apart (window 20): two presses
        (
            [*burst(0, 10, 0.5), *burst(50, 10, 0.5)],
            None,
            [(0, True), (4.5, False), (50, True)],
        ),
        # a tap released inside the window, pressed again well after: the next edge first
        # settles the release, then is taken as a new press (no timer needed)
        ([(0, True), (10, False), (300, True)], None, [(0, True), (10, False), (300, True)]),
        # pressed again inside the window after a release: taken when the window ends,
        # stamped with its own edge time
        ([(0, True), (100, False), (110, True)], 120, [(0, True), (100, False), (110, True)]),
        # a release taken late (at the window's end) opens its own window from its edge:
        # the re-press at 20 ms waits for that window (to 25 ms), keeping its own stamp
        ([(0, True), (5, False), (20, True)], 24, [(0, True), (5, False)]),
        ([(0, True), (5, False), (20, True)], 25, [(0, True), (5, False), (20, True)]),
        # exactly at the window edge counts as outside
        ([(0, True), (30, False), (50, True)], None, [(0, True), (30, False), (50, True)]),
    ],
)
def test_leading_table(edges, settle_at, expected):
    _, got = run(LEADING, 20, edges, settle_at=settle_at)
    assert got == expected


@pytest.mark.parametrize(
    ("edges", "settle_at", "expected"),
    [
        # a level that holds for the window is taken, stamped at its first edge
        ([(0, False)], 50, [(0, False)]),
        ([(0, False)], 49, []),
        # a 1 ms spike is never taken
        ([(0, False), (1, True)], 500, []),
        # bouncing, then holding: stamped at the start of the last run
        ([(0, False), (1, True), (2, False)], 52, [(2, False)]),
        # an edge after the window first takes the pending level
        ([(0, False), (60, True)], None, [(0, False)]),
    ],
)
def test_settled_table(edges, settle_at, expected):
    _, got = run(SETTLED, 50, edges, settle_at=settle_at, level=True)
    assert got == expected


def test_deadline_tracks_pending_change():
    deb = Debouncer(20 * MS)
    assert deb.deadline_ns is None
    deb.feed(0, True)
    assert deb.deadline_ns is None  # taken already, nothing pending
    deb.feed(3 * MS, False)
    assert deb.deadline_ns == 20 * MS
    deb.feed(4 * MS, True)
    assert deb.deadline_ns is None  # back to the taken level: it was bounce
    assert deb.ignored == 2


def test_backwards_stamp_is_clamped_not_reordered():
    deb = Debouncer(20 * MS)
    assert deb.feed(100 * MS, True) == [Transition(100 * MS, True)]
    assert deb.feed(50 * MS, False) == []  # treated as at 100 ms: inside the window
    assert deb.clamped == 1
    assert deb.settle(120 * MS) == [Transition(100 * MS, False)]


def test_repeated_level_is_a_lost_edge_not_a_change():
    deb = Debouncer(20 * MS)
    deb.feed(0, True)
    assert deb.feed(100 * MS, True) == []
    assert deb.level is True


def test_negative_window_is_refused():
    with pytest.raises(ValueError, match="window"):
        Debouncer(-1)


def test_reset_forgets_pending():
    deb = Debouncer(20 * MS)
    deb.feed(0, True)
    deb.feed(1 * MS, False)
    deb.reset(True)
    assert deb.deadline_ns is None and deb.level is True and deb.raw is True
