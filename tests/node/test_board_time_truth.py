"""Issue 13, case 1 (and case 4 at the board): a press is charged at its device instant however
late its frame arrives; a flag stands only when no earlier press of that side can still arrive.

A board (real journal, no broker) on a SerialClockFace talking to the clock emulator; the
test silences the emulator (a cut or noisy line) around the press, so the press's first
copies are lost and a resend arrives hundreds of ms late, while the node refreshes the
display at 10 Hz (under 20 s) in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support.serial_fakes import reboot_emulator

from board_nodes.board import Board
from board_nodes.board_phase import HeldBy
from board_nodes.commands import apply_command
from board_nodes.journal import Journal
from clock_service import Regulation, Side
from firmware_bridge.serial.emulator import ClockEmulator
from firmware_bridge.serial.face import SerialClockFace
from firmware_bridge.serial.faults import FaultyLine, LineFaults
from firmware_bridge.serial.frames import SHOW_FLAG_RED, Press
from wire_contract import messages as wire


class Rig:
    def __init__(self, board: Board, emu: ClockEmulator, face: SerialClockFace) -> None:
        self.board, self.emu, self.face = board, emu, face
        self.events: list[dict[str, Any]] = []
        board.on_event = self.events.append

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]

    async def wait(self, predicate: Any, timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.005)


@contextlib.asynccontextmanager
async def rig(tmp_path) -> AsyncIterator[Rig]:
    journal = Journal(tmp_path / "j.sqlite3", durable=False).open()
    async with ClockEmulator() as emu:
        url = await emu.listen()
        async with SerialClockFace(url) as face:
            board = Board(
                "7", venue="t", node="n", session=1, regulation=Regulation.load("meishan-2016"),
                face=face, journal=journal,
            )  # fmt: skip
            task = asyncio.create_task(board.run_face())
            try:
                yield Rig(board, emu, face)
            finally:
                board.close()
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    journal.close()


def carry_over(r: Rig, red_ms: int) -> int:
    """A game with red on move and ``red_ms`` left; returns the monotonic start instant."""
    args = {"game": "g", "tc": "30m+0s", "red_ms": red_ms, "black_ms": 600_000}
    apply_command(r.board, "set_game", wire.SetGameArgs.model_validate(args))
    assert r.board.clock is not None
    before = time.monotonic_ns()
    r.board.emit_clock_events(r.board.clock.start())  # what the start command's timer does
    after = time.monotonic_ns()
    r.board.changed()
    return (before + after) // 2


async def settle_offset(r: Rig) -> None:
    # A few PING/PONG round trips so the offset estimate has samples.
    await asyncio.sleep(0.6)


async def test_a_press_resent_late_is_charged_at_its_device_instant(tmp_path) -> None:
    async with rig(tmp_path) as r:
        await settle_offset(r)
        start = carry_over(r, 15_000)  # under 20 s: the display refreshes at 10 Hz
        await asyncio.sleep(0.3)
        r.emu.stop_answering()  # a cut line: the press's first copies are lost
        pressed = time.monotonic_ns()
        await r.emu.press(Side.RED)
        await asyncio.sleep(0.6)
        r.emu.resume_answering()
        await r.wait(lambda: r.of("move"))
        used = r.of("move")[0]["data"]["used_ms"]
        truth = (pressed - start) // 1_000_000
        assert abs(used - truth) <= 10, (used, truth)


async def test_a_press_just_before_the_flag_arriving_after_it_wins(tmp_path) -> None:
    async with rig(tmp_path) as r:
        await settle_offset(r)
        carry_over(r, 1_000)
        await asyncio.sleep(0.94)  # 60 ms before red's flag
        r.emu.stop_answering()
        await r.emu.press(Side.RED)
        await asyncio.sleep(0.3)  # the resend arrives ~250 ms after the deadline
        r.emu.resume_answering()
        await r.wait(lambda: r.of("move"), timeout=3)
        await asyncio.sleep(0.3)
        assert r.of("flag") == [], r.events
        assert r.of("move")[0]["data"]["side"] == "red"
        assert r.board.clock is not None and r.board.clock.running is Side.BLACK
        # the clock face never showed red's flag
        assert all(not s.flags & SHOW_FLAG_RED for s in r.emu.shows)


async def test_a_flag_with_nothing_in_flight_stands_promptly_and_is_shown(tmp_path) -> None:
    async with rig(tmp_path) as r:
        await settle_offset(r)
        carry_over(r, 500)
        deadline = time.monotonic() + 0.5
        await r.wait(lambda: r.of("flag"), timeout=3)
        assert time.monotonic() - deadline < 0.5  # one probe round trip, not a timeout
        assert r.of("flag")[0]["data"]["side"] == "red"
        await r.emu.wait_until(lambda: any(s.flags & SHOW_FLAG_RED for s in r.emu.shows))


async def test_a_clock_reboot_during_a_game_is_a_warning(tmp_path) -> None:
    async with rig(tmp_path) as r:
        await settle_offset(r)
        carry_over(r, 300_000)
        reboot_emulator(r.emu)
        reasons = lambda: [w["data"]["reason"] for w in r.of("warning")]  # noqa: E731
        await r.wait(lambda: "clock_rebooted" in reasons())
        await r.emu.wait_until(lambda: r.emu.shown is not None, timeout=1.0)


async def flag_race(tmp_path, *, before_ms: int, drop: float, corrupt: float, cut_ms: int,
                    seed: int) -> None:  # fmt: skip
    async with rig(tmp_path) as r:
        await settle_offset(r)
        red_ms = 800
        start = carry_over(r, red_ms)
        deadline = start + red_ms * 1_000_000
        faults = LineFaults(drop=drop, corrupt=corrupt)
        to_host = FaultyLine(r.emu.link, faults, seed=seed)
        FaultyLine(r.face.link, faults, seed=seed + 1)
        await asyncio.sleep(max(0.0, (deadline - time.monotonic_ns()) / 1e9 - before_ms / 1000))
        to_host.silent = bool(cut_ms)  # the line cut around the press
        pressed = time.monotonic_ns()
        await r.emu.press(Side.RED)
        await asyncio.sleep(cut_ms / 1000)
        to_host.silent = False
        await r.emu.wait_settled(timeout=10)
        await asyncio.sleep(0.3)
        flags, moves = r.of("flag"), r.of("move")
        if pressed < deadline - 2_000_000:  # clearly before (the emulator's ms is truncated)
            assert flags == [], (before_ms, r.events)
            truth = (pressed - start) // 1_000_000
            assert abs(moves[0]["data"]["used_ms"] - truth) <= 5, (moves, truth)
            assert all(not s.flags & SHOW_FLAG_RED for s in r.emu.shows)
        elif pressed > deadline + 2_000_000:
            assert [f["data"]["side"] for f in flags] == ["red"] and moves == []


@settings(max_examples=6, deadline=None, derandomize=True)
@given(
    before_ms=st.sampled_from([-40, 15, 60, 150]),
    drop=st.sampled_from([0.0, 0.1, 0.3]),
    corrupt=st.sampled_from([0.0, 0.05]),
    cut_ms=st.sampled_from([0, 300, 700]),
    seed=st.integers(0, 100),
)
def test_no_flag_stands_for_a_side_that_pressed_before_its_deadline(
    tmp_path_factory, before_ms: int, drop: float, corrupt: float, cut_ms: int, seed: int
) -> None:
    tmp = tmp_path_factory.mktemp("race")
    asyncio.run(flag_race(tmp, before_ms=before_ms, drop=drop, corrupt=corrupt,
                          cut_ms=cut_ms, seed=seed))  # fmt: skip


async def test_a_press_from_before_a_flag_that_stood_unproven_is_published(tmp_path) -> None:
    # The line is cut across the deadline for longer than the 2 s proof bound: the flag
    # stands (the link could not prove anything), and red's press from before it, arriving
    # when the line is back, is published as a pending warning for the arbiter.
    async with rig(tmp_path) as r:
        await settle_offset(r)
        start = carry_over(r, 500)
        await asyncio.sleep(0.4)  # 100 ms before red's flag (later on a loaded machine)
        r.emu.stop_answering()
        pressed = time.monotonic_ns()
        await r.emu.press(Side.RED)
        await r.wait(lambda: r.of("flag"), timeout=4)
        r.emu.resume_answering()
        await r.wait(lambda: [w for w in r.of("warning") if w["data"]["reason"] ==
                              "press_before_flag"], timeout=5)  # fmt: skip
        warning = next(w for w in r.of("warning") if w["data"]["reason"] == "press_before_flag")
        assert warning["data"]["side"] == "red" and warning["data"]["status"] == "pending"
        early = int(warning["data"]["detail"].split()[1])
        truth = (start + 500 * 1_000_000 - pressed) // 1_000_000
        assert abs(early - truth) <= 20 and early > 0, (warning, truth)
        assert r.of("move") == []


# -- issue 31: the flag dated at its deadline --------------------------------------------------
# docs/wire.md: an event's `ts` is the wall time of its instant; a flag's is the instant the
# time ran out, however long the proof took (docs/protocol.md §6), and the delay until it stood
# is `stood_after_ms` in its data. The state snapshot that shows the flag carries the same ts.

SILENCE_S = 1.5


def _wall_ms_of(mono_ns: int) -> int:
    """The wall time (ms) of a monotonic instant, measured now."""
    return (time.time_ns() - (time.monotonic_ns() - mono_ns)) // 1_000_000


async def _press_at(r: Rig, instant_ns: int) -> int:
    """Red presses at ``instant_ns`` by the clock's own time: its PRESS carries the device_ms
    of that instant (a loaded machine may wake us a few ms late; the clock stamps the edge,
    not when its firmware got round to sending). Returns the instant."""
    await asyncio.sleep(max(0.0, (instant_ns - time.monotonic_ns()) / 1e9))
    late_ms = (time.monotonic_ns() - instant_ns) // 1_000_000
    r.emu.link.send_reliable(Press(Side.RED, r.emu.now_ms() - late_ms))
    return instant_ns


async def _press_behind_a_silence(r: Rig, *, after_deadline_ms: int) -> tuple[int, int]:
    """Red on move with 800 ms; the line (both ways) goes silent 50 ms before the deadline
    for 1.5 s and red presses ``after_deadline_ms`` after it (negative: before). Returns the
    deadline's monotonic instant and the press's."""
    await settle_offset(r)
    red_ms = 800
    start = carry_over(r, red_ms)
    deadline = start + red_ms * 1_000_000
    to_host = FaultyLine(r.emu.link, LineFaults())
    to_clock = FaultyLine(r.face.link, LineFaults())
    await asyncio.sleep(max(0.0, (deadline - time.monotonic_ns()) / 1e9 - 0.05))
    to_host.silent = to_clock.silent = True
    silenced = time.monotonic_ns()
    pressed = await _press_at(r, deadline + after_deadline_ms * 1_000_000)
    await asyncio.sleep(max(0.0, SILENCE_S - (time.monotonic_ns() - silenced) / 1e9))
    to_host.silent = to_clock.silent = False
    return deadline, pressed


async def test_a_flag_proved_behind_a_silence_is_dated_at_its_deadline(tmp_path) -> None:
    async with rig(tmp_path) as r:
        states: list[Any] = []  # every state the board hands its link, as it is then
        r.board.on_state = lambda: states.append(r.board.snapshot())
        deadline, _ = await _press_behind_a_silence(r, after_deadline_ms=2)
        await r.wait(lambda: r.of("flag"), timeout=4)
        stood_ns = time.monotonic_ns()
        await asyncio.sleep(0.3)  # a late move would come now
        assert r.of("move") == [], r.events
        (flag,) = r.of("flag")
        assert flag["data"]["side"] == "red"
        deadline_wall = _wall_ms_of(deadline)
        assert abs(flag["ts"] - deadline_wall) <= 5, (flag["ts"] - deadline_wall, flag)
        # the delay until it stood is a field of its own: the proof took the silence
        stood_after = flag["data"]["stood_after_ms"]
        assert 1_000 <= stood_after <= (stood_ns - deadline) // 1_000_000 + 5, flag
        # the state that shows the flag says the same instant
        state = next(s for s in states if s.flag == "red")
        assert state.running is None
        assert abs(state.ts - deadline_wall) <= 5, state.ts - deadline_wall
        # the flag's proposed loss is the same fact, dated alike
        (result,) = r.of("result")
        assert result["data"]["status"] == "pending" and abs(result["ts"] - deadline_wall) <= 5


async def test_a_press_just_before_the_deadline_behind_a_silence_is_charged(tmp_path) -> None:
    async with rig(tmp_path) as r:
        _, pressed = await _press_behind_a_silence(r, after_deadline_ms=-2)
        await r.wait(lambda: r.of("move"), timeout=4)
        await asyncio.sleep(0.3)
        assert r.of("flag") == [], r.events
        (move,) = r.of("move")
        assert move["data"]["side"] == "red"
        assert abs(move["data"]["used_ms"] - 798) <= 1, move  # charged at its instant
        # the move is dated at the press, and says how late its frame came
        assert abs(move["ts"] - _wall_ms_of(pressed)) <= 5, move
        assert move["data"]["arrived_after_ms"] >= 1_000, move
        assert all(not s.flags & SHOW_FLAG_RED for s in r.emu.shows)


async def test_a_press_before_an_unproven_flag_reads_against_the_flags_ts(tmp_path) -> None:
    # The line is cut past the 2 s proof bound: the flag stands unproven, dated at its
    # deadline; red's press from 100 ms before it arrives later as press_before_flag, and
    # the flag's ts minus the warning's early_ms is the press's own wall time.
    async with rig(tmp_path) as r:
        await settle_offset(r)
        start = carry_over(r, 500)
        deadline = start + 500 * 1_000_000
        pressed = await _press_at_cut(r, deadline - 100 * 1_000_000)
        await r.wait(lambda: r.of("flag"), timeout=4)
        r.emu.resume_answering()
        await r.wait(lambda: [w for w in r.of("warning") if w["data"]["reason"] ==
                              "press_before_flag"], timeout=5)  # fmt: skip
        (flag,) = r.of("flag")
        assert abs(flag["ts"] - _wall_ms_of(deadline)) <= 5, flag
        assert flag["data"]["stood_after_ms"] >= 1_900, flag
        warning = next(w for w in r.of("warning") if w["data"]["reason"] == "press_before_flag")
        early = warning["data"]["early_ms"]
        assert abs((flag["ts"] - early) - _wall_ms_of(pressed)) <= 5, (warning, flag)
        # and the warning itself is dated at the press it reports
        assert abs(warning["ts"] - _wall_ms_of(pressed)) <= 5, warning


async def test_the_late_press_counts_at_its_instant_once_the_flag_is_dismissed(tmp_path) -> None:
    # As above; then the arbiter takes the warning (its ruling dismisses the flag's loss,
    # venue_station/domain/rulings.py): red's press counts at its own instant. Red had 500 ms
    # and pressed 100 ms before its flag: 400 ms used, 100 ms kept (30m+0s: no bonus); black is
    # charged the 100 ms from the press to the flag. The clock waits for the arbiter.
    async with rig(tmp_path) as r:
        pressed, loss = await _flag_over_a_late_press(r)
        assert r.of("move") == [] and loss["data"]["status"] == "pending"
        ruling = wire.ResolveArgs.model_validate({"seq": loss["seq"], "status": "dismissed"})
        apply_command(r.board, "resolve", ruling)
        (move,) = r.of("move")
        assert move["data"]["side"] == "red" and abs(move["data"]["used_ms"] - 400) <= 5, move
        assert abs(move["ts"] - _wall_ms_of(pressed)) <= 5, move
        clock = r.board.clock
        assert clock is not None and clock.flag is None and clock.running is None
        assert clock.side_on_move is Side.BLACK and clock.moves(Side.RED) == 1
        assert abs(clock.remaining_ms(Side.RED) - 100) <= 5, clock
        assert abs(clock.remaining_ms(Side.BLACK) - 599_900) <= 5, clock
        assert r.board.held_by is HeldBy.ARBITER and r.board.result is None
        assert r.of("paused")[-1]["data"]["by"] == "arbiter"
        await asyncio.sleep(0.3)
        assert abs(clock.remaining_ms(Side.BLACK) - 599_900) <= 5  # nobody's time runs
        apply_command(r.board, "resume", wire.EmptyData())
        assert clock.running is Side.BLACK


async def test_the_late_press_counts_once_a_flag_confirmed_by_mistake_is_taken_back(
    tmp_path,
) -> None:
    # As above, but the arbiter first confirms the flag's loss, then takes it back (withdraw
    # of the standing result, stop 41): red's press from before the flag counts at its own
    # instant, as after a dismissal (a reviewer: it did not).
    async with rig(tmp_path) as r:
        pressed, loss = await _flag_over_a_late_press(r)
        confirm = wire.ResolveArgs.model_validate({"seq": loss["seq"], "status": "confirmed"})
        apply_command(r.board, "resolve", confirm)
        assert r.board.result is not None and r.of("move") == []
        back = wire.WithdrawArgs.model_validate({"seq": loss["seq"]})
        apply_command(r.board, "withdraw", back)
        (move,) = r.of("move")
        assert move["data"]["side"] == "red" and abs(move["data"]["used_ms"] - 400) <= 5, move
        assert abs(move["ts"] - _wall_ms_of(pressed)) <= 5, move
        clock = r.board.clock
        assert clock is not None and clock.flag is None and clock.running is None
        assert r.board.held_by is HeldBy.ARBITER and r.board.result is None


async def _flag_over_a_late_press(r: Rig) -> tuple[int, dict[str, Any]]:
    """Red has 500 ms and presses 100 ms before its flag while the line is cut: the flag
    stands unproven, the press arrives as press_before_flag. The press's instant, the loss."""
    await settle_offset(r)
    start = carry_over(r, 500)
    pressed = await _press_at_cut(r, start + 400 * 1_000_000)
    await r.wait(lambda: r.of("flag"), timeout=4)
    r.emu.resume_answering()
    await r.wait(lambda: [w for w in r.of("warning") if w["data"]["reason"] ==
                          "press_before_flag"], timeout=5)  # fmt: skip
    (loss,) = r.of("result")
    return pressed, loss


async def _press_at_cut(r: Rig, instant_ns: int) -> int:
    await asyncio.sleep(max(0.0, (instant_ns - time.monotonic_ns()) / 1e9 - 0.05))
    r.emu.stop_answering()
    return await _press_at(r, instant_ns)
