"""The clock-link fault properties on the GPIO face (issue 13 build item 6): under contact
bounce and a loop that is late to read the edge queue, a press is charged at its edge's
instant and a flag stands only for a side that did not press before its deadline.

gpiozero's MockFactory drives the pins from another thread (as gpiozero's own callbacks come
from its thread) while the loop is blocked past the deadline; hypothesis picks the schedule.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from gpiozero import Device
from gpiozero.pins.mock import MockFactory
from hypothesis import given, settings
from hypothesis import strategies as st

from board_nodes.board import Board
from board_nodes.commands import apply_command
from board_nodes.journal import Journal
from clock_service import Regulation
from firmware_bridge.displays import NullDisplay
from firmware_bridge.gpio_face import GpioClockFace, GpioFaceConfig
from wire_contract import messages as wire

WIRING = {
    "red_button": 17, "black_button": 27, "pause_key": 22, "arbiter_key": 23,
    "power_sense": 24, "debounce_ms": 20, "sense_debounce_ms": 5,
}  # fmt: skip
RED_MS = 400


async def play(tmp: str, *, before_ms: int, bounces: int, late_ms: int) -> None:
    factory = MockFactory()
    saved = Device.pin_factory
    Device.pin_factory = factory
    journal = Journal(f"{tmp}/j-{before_ms}-{bounces}-{late_ms}.sqlite3", durable=False).open()
    face = GpioClockFace(GpioFaceConfig.model_validate(WIRING), pin_factory=factory,
                         display=NullDisplay())  # fmt: skip
    try:
        await face.open()
        factory.pin(24).drive_high()  # the clock is switched on
        await asyncio.sleep(0.05)
        regulation = Regulation.load("meishan-2016")
        board = Board("1", venue="t", node="n", session=1, regulation=regulation,
                      face=face, journal=journal)  # fmt: skip
        events: list[dict] = []
        board.on_event = events.append
        runner = asyncio.create_task(board.run_face())
        await asyncio.sleep(0.05)  # the power-off/on the face reported at open, applied first
        args = {"game": "g", "tc": "30m+0s", "red_ms": RED_MS, "black_ms": 600_000}
        apply_command(board, "set_game", wire.SetGameArgs.model_validate(args))
        assert board.clock is not None
        board.emit_clock_events(board.clock.start())
        board.changed()
        deadline = board.clock.deadline_ns()
        assert deadline is not None
        await asyncio.sleep(max(0, (deadline - time.monotonic_ns()) / 1e9 - before_ms / 1000))
        pressed: list[int] = []

        def hand() -> None:  # gpiozero's thread: bounce, then the contact settles pressed
            pin = factory.pin(17)
            # The face stamps the first edge inside drive_low; the thread may be preempted
            # between our reading and it, so the truth is the interval around that edge.
            pressed.append(time.monotonic_ns())
            pin.drive_low()
            pressed.append(time.monotonic_ns())
            pin.drive_high()
            for _ in range(bounces):
                pin.drive_low()
                pin.drive_high()
            pin.drive_low()
            pin.drive_high()

        thread = threading.Thread(target=hand)
        thread.start()
        time.sleep(late_ms / 1000)  # the loop is late: it reads the edges after this
        thread.join()
        await asyncio.sleep(0.3)
        flags = [e for e in events if e["type"] == "flag"]
        moves = [e for e in events if e["type"] == "move"]
        edge_after, edge_by = pressed  # the first edge was stamped between these
        if edge_by < deadline:
            assert flags == [], (before_ms, late_ms)
        if edge_after >= deadline:
            assert [f["data"]["side"] for f in flags] == ["red"] and moves == [], events
        if flags == []:  # the press stood: charged at its edge's instant
            earliest = (RED_MS * 1_000_000 - (deadline - edge_after)) // 1_000_000
            latest = (RED_MS * 1_000_000 - (deadline - edge_by)) // 1_000_000
            assert earliest - 1 <= moves[0]["data"]["used_ms"] <= latest + 1, (earliest, latest)
        else:  # the flag stood: no press was taken from before it
            assert edge_by >= deadline and moves == [], (before_ms, late_ms, events)
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner
        board.close()
    finally:
        await face.close()
        journal.close()
        factory.reset()
        Device.pin_factory = saved


@settings(max_examples=8, deadline=None, derandomize=True)
@given(
    before_ms=st.sampled_from([-30, 3, 10, 60]),
    bounces=st.integers(0, 4),
    late_ms=st.sampled_from([0, 50, 150]),
)
def test_gpio_press_before_the_deadline_wins_under_bounce_and_a_late_loop(
    tmp_path_factory, before_ms: int, bounces: int, late_ms: int
) -> None:
    tmp = str(tmp_path_factory.mktemp("gpio"))
    asyncio.run(play(tmp, before_ms=before_ms, bounces=bounces, late_ms=late_ms))
