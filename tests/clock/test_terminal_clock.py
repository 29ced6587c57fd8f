"""The terminal clock: key mapping and rendering, then a real run through a pty."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

import pytest
from support.fake_time import MS, FakeTime

from clock_service import GameClock, Phase, TimeControl
from qizhong.cli.terminal_clock import Action, action_for_key, apply, format_ms, render, split_keys


@pytest.mark.parametrize(
    ("key", "action"),
    [
        ("a", Action.PRESS_RED),
        ("\x1b[D", Action.PRESS_RED),
        ("l", Action.PRESS_BLACK),
        ("\x1b[C", Action.PRESS_BLACK),
        (" ", Action.TOGGLE),
        ("q", Action.QUIT),
        ("\x03", Action.QUIT),
        ("x", None),
        ("\x1b[A", None),
    ],
)
def test_key_mapping(key, action):
    assert action_for_key(key) is action


def test_split_keys_keeps_arrows_whole():
    assert split_keys("a\x1b[Dl \x1b[Cq") == ["a", "\x1b[D", "l", " ", "\x1b[C", "q"]


@pytest.mark.parametrize(
    ("ms", "text"),
    [(1_800_000, "30:00.0"), (1_799_950, "29:59.9"), (5_400_000, "1:30:00.0"), (0, "00:00.0")],
)
def test_format_ms(ms, text):
    assert format_ms(ms) == text


def test_apply_and_render_a_short_game():
    t = FakeTime(0)
    clock = GameClock(TimeControl.parse("1m+2s"), now=t)
    assert render(clock, "en") == (
        "  RED 01:00.0 0 moves  |    BLACK 01:00.0 0 moves  |  not started (space starts)"
    )
    apply(clock, Action.TOGGLE)
    t.ns += 1_500 * MS
    apply(clock, Action.PRESS_BLACK)  # not on move: nothing
    apply(clock, Action.PRESS_RED)
    assert render(clock, "en").startswith("  RED 01:00.5 1 moves  |  ▶ BLACK 01:00.0")
    apply(clock, Action.TOGGLE)
    assert clock.phase is Phase.PAUSED and "paused" in render(clock, "en")
    assert "暂停" in render(clock)
    apply(clock, Action.TOGGLE)
    t.ns += 61 * 1_000 * MS
    assert render(clock, "en").endswith("BLACK flagged")
    assert render(clock).endswith("黑方超时")


def test_render_byoyomi_and_delay():
    t = FakeTime(0)
    clock = GameClock(TimeControl.parse("10s:3x5s"), now=t)
    clock.start()
    t.ns += 12_000 * MS
    assert "▶ RED 00:03.0 byo-yomi x3" in render(clock, "en")
    clock = GameClock(TimeControl.parse("10s+d5s"), now=t)
    clock.start()
    assert "RED 00:10.0 (+00:05.0)" in render(clock, "en")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "qizhong", "clock", *args]


def test_refuses_without_a_terminal():
    command = _cli("--tc", "10m+3s", "--lang", "en")
    done = subprocess.run(
        command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr


def test_bad_time_control_is_a_usage_error():
    done = subprocess.run(_cli("--tc", "30x+5s"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "unknown unit 'x'" in done.stderr


def _read_until(fd: int, needle: bytes, seen: bytearray, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while needle not in seen:
        left = end - time.monotonic()
        assert left > 0, f"{needle!r} not seen in {bytes(seen[-400:])!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the child closed the pty
                break


def test_a_run_through_a_pty():
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real command on the pty
        os.execv(sys.executable, _cli("--tc", "10m+3s", "--lang", "en"))
    seen = bytearray()
    try:
        _read_until(fd, b"not started", seen)
        os.write(fd, b" ")
        _read_until(fd, b"\xe2\x96\xb6 RED", seen)  # "▶ RED": red runs
        os.write(fd, b"a")
        _read_until(fd, b"RED 10:0", seen)  # the increment is on red's clock ...
        _read_until(fd, b"1 moves  |  \xe2\x96\xb6 BLACK", seen)  # ... and black runs
        os.write(fd, b" ")
        _read_until(fd, b"paused", seen)
        os.write(fd, b"q")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
