"""The simulated face: two players that press in turn, pause now and then, and a scripted fault."""

from __future__ import annotations

import asyncio
import statistics

import pytest

from clock_service import Side
from firmware_bridge.face import FaceEventKind, FaceView
from firmware_bridge.simulated import SimulatedFace


def test_think_times_have_the_asked_mean_and_scale_with_speed():
    face = SimulatedFace(mean_move_s=20.0, sigma=0.9, seed=1)
    fast = SimulatedFace(mean_move_s=20.0, sigma=0.9, seed=1, speed=10.0)
    times = [face.think_time_s() for _ in range(20_000)]
    assert 19.0 < statistics.fmean(times) < 21.0
    assert statistics.median(times) < statistics.fmean(times)  # log-normal: a long right tail
    assert fast.think_time_s() == pytest.approx(times[0] / 10)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "chaos"}, "mode"),
        ({"mean_move_s": 0}, "positive"),
        ({"speed": -1}, "positive"),
        ({"pause_probability": 1.5}, "0..1"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SimulatedFace(**kwargs)


async def test_the_side_shown_running_presses_and_idle_never_does():
    face = SimulatedFace(mean_move_s=0.02, sigma=0.1, seed=3)
    idle = SimulatedFace(mode="idle")
    async with face, idle:
        view = FaceView(1000, 1000, running=Side.RED, mono_ns=face.now_ns())
        await face.show(view)
        await face.show(view)  # a refresh of the same turn does not add a press
        await idle.show(view)
        event = await asyncio.wait_for(face.next_event(), 1)
        assert event.kind is FaceEventKind.PRESS and event.side is Side.RED
        await asyncio.sleep(0.1)
        assert face._queue.empty() and idle._queue.empty()


async def test_a_player_sometimes_pauses_and_resumes():
    face = SimulatedFace(mean_move_s=0.02, sigma=0.1, pause_probability=1.0, pause_s=0.02, seed=4)
    async with face:
        await face.show(FaceView(1000, 1000, running=Side.BLACK, mono_ns=face.now_ns()))
        kinds = [(await asyncio.wait_for(face.next_event(), 1)).kind for _ in range(2)]
        assert kinds == [FaceEventKind.PAUSE_KEY, FaceEventKind.PAUSE_KEY]


async def test_the_scripted_power_fault_switches_off_then_on():
    face = SimulatedFace(mode="idle", power_off_after_s=0.02, power_off_for_s=0.02)
    async with face:
        off = await asyncio.wait_for(face.next_event(), 1)
        on = await asyncio.wait_for(face.next_event(), 1)
    assert (off.kind, on.kind) == (FaceEventKind.POWER_OFF, FaceEventKind.POWER_ON)
    assert on.mono_ns > off.mono_ns
