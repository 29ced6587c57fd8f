"""GpioClockFace on gpiozero's MockFactory: presses, keys, power sense, debounce, outputs."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from gpiozero import LED
from pydantic import ValidationError

from clock_service import Side
from firmware_bridge.displays import NullDisplay
from firmware_bridge.face import FaceEventKind, FaceView
from firmware_bridge.gpio_face import GpioClockFace, GpioFaceConfig, GpioFaceError, render_view

K = FaceEventKind
WIRING = {
    "red_button": 17,
    "black_button": 27,
    "pause_key": 22,
    "arbiter_key": 23,
    "power_sense": 24,
    "battery_low": 25,
    "red_led": 5,
    "black_led": 6,
    "buzzer": 13,
    "debounce_ms": 20,
    "sense_debounce_ms": 5,
}


def config(**over):
    return GpioFaceConfig(**{**WIRING, **over})


async def next_event(face, within=1.0):
    return await asyncio.wait_for(face.next_event(), within)


async def assert_quiet(face, for_s=0.1):
    await asyncio.sleep(for_s)
    assert face._queue.empty(), f"unexpected event {face._queue.get_nowait()!r}"


async def open_powered(mock_factory, **over):
    """Open a face, see the power-off it reports at open, then switch the clock on."""
    face = GpioClockFace(config(**over), pin_factory=mock_factory, display=NullDisplay())
    await face.open()
    assert (await next_event(face)).kind is K.POWER_OFF
    mock_factory.pin(24).drive_high()
    assert (await next_event(face)).kind is K.POWER_ON
    return face


@pytest.fixture
async def face(mock_factory):
    f = await open_powered(mock_factory)
    yield f
    await f.close()


def tap(pin):
    pin.drive_low()
    pin.drive_high()


# -- config ------------------------------------------------------------------------------------
def test_config_refuses_a_pin_used_twice():
    with pytest.raises(
        ValidationError, match="pin GPIO17 is given to both red_button and pause_key"
    ):
        config(pause_key="GPIO17")


def test_config_refuses_a_key_on_the_max7219_bus():
    with pytest.raises(ValidationError, match=r"GPIO10 is given to both .* and display.mosi"):
        config(pause_key=10, display={"driver": "max7219"})


@pytest.mark.parametrize("ms", [0, 201, -5])
def test_config_refuses_debounce_out_of_range(ms):
    with pytest.raises(ValidationError, match="debounce_ms"):
        config(debounce_ms=ms)


@pytest.mark.parametrize("pin", ["GPIO99", "banana", 60, True])
def test_config_refuses_bad_pin(pin):
    with pytest.raises(ValidationError, match="red_button"):
        config(red_button=pin)


def test_config_refuses_unknown_field_and_display_driver():
    with pytest.raises(ValidationError, match="red_buton"):
        config(red_buton=3)
    with pytest.raises(ValidationError, match="driver"):
        config(display={"driver": "hd44780"})


def test_config_pin_spellings_normalise():
    cfg = config(red_button="BCM17")
    assert cfg.pin_map()["red_button"] == "GPIO17"
    assert config(red_button="17").pin_map()["red_button"] == "GPIO17"


# -- events ------------------------------------------------------------------------------------
async def test_press_reports_side_with_edge_time(face, mock_factory):
    before = time.monotonic_ns()
    mock_factory.pin(17).drive_low()
    ev = await next_event(face)
    assert ev.kind is K.PRESS and ev.side is Side.RED
    assert before <= ev.mono_ns <= time.monotonic_ns()
    mock_factory.pin(17).drive_high()
    await asyncio.sleep(0.03)
    mock_factory.pin(27).drive_low()
    assert (await next_event(face)).side is Side.BLACK


async def test_keys(face, mock_factory):
    tap(mock_factory.pin(22))
    assert (await next_event(face)).kind is K.PAUSE_KEY
    tap(mock_factory.pin(23))
    assert (await next_event(face)).kind is K.ARBITER_KEY
    await assert_quiet(face)


async def test_burst_of_ten_toggles_from_another_thread_is_one_press(face, mock_factory):
    pin = mock_factory.pin(17)

    def bounce() -> int:  # 10 toggles within 5 ms, the way a real contact chatters
        t0 = time.monotonic_ns()
        for i in range(10):
            (pin.drive_low if i % 2 == 0 else pin.drive_high)()
            time.sleep(0.0004)
        return time.monotonic_ns() - t0

    # The burst must fit in the 20 ms window; a machine that stalls the thread longer than
    # that has not made a burst, so it is tried again (a few times at most).
    for _ in range(5):
        took = await asyncio.to_thread(bounce)
        if took < 20_000_000:
            break
        await asyncio.sleep(0.05)
        while not face._queue.empty():
            face._queue.get_nowait()
        pin.drive_high()
        await asyncio.sleep(0.05)
        face._debouncers["red_button"].ignored = 0
    assert took < 20_000_000, "the machine never let a 5 ms burst finish within 20 ms"
    ev = await next_event(face)
    assert ev.kind is K.PRESS and ev.side is Side.RED
    await assert_quiet(face, 0.1)
    assert face._debouncers["red_button"].ignored >= 8


async def test_two_presses_apart_by_more_than_the_window_are_two(face, mock_factory):
    pin = mock_factory.pin(27)

    def two_presses():
        for _ in range(2):
            for i in range(6):
                (pin.drive_low if i % 2 == 0 else pin.drive_high)()
            time.sleep(0.05)  # 50 ms apart, window 20 ms

    await asyncio.to_thread(two_presses)
    first, second = await next_event(face), await next_event(face)
    assert (first.side, second.side) == (Side.BLACK, Side.BLACK)
    assert second.mono_ns - first.mono_ns >= 45_000_000
    await assert_quiet(face)


async def test_stamp_is_taken_at_the_edge_not_when_the_loop_gets_to_it(face, mock_factory):
    stamped = []

    def press_later():
        time.sleep(0.02)
        stamped.append(time.monotonic_ns())
        mock_factory.pin(17).drive_low()

    th = threading.Thread(target=press_later)
    th.start()
    time.sleep(0.2)
    loop_free = time.monotonic_ns()
    ev = await next_event(face)
    th.join()
    assert ev.mono_ns - stamped[0] < 50_000_000
    assert loop_free - ev.mono_ns > 100_000_000


async def test_power_switch_off_and_on_with_spike_ignored(face, mock_factory):
    pin = mock_factory.pin(24)
    pin.drive_low()
    pin.drive_high()  # a spike shorter than sense_debounce_ms: not a power-off
    await assert_quiet(face, 0.05)
    pin.drive_low()
    off = await next_event(face)
    assert off.kind is K.POWER_OFF
    pin.drive_high()
    assert (await next_event(face)).kind is K.POWER_ON


async def test_power_on_at_open_reports_nothing(mock_factory):
    # active low (optocoupler): pulled up means off; hold it low before open -> on
    cfg = config(power_on_level="low")
    face = GpioClockFace(cfg, pin_factory=mock_factory)
    async with face:
        assert (await next_event(face)).kind is K.POWER_OFF  # pulled up at claim: off
        mock_factory.pin(24).drive_low()
        assert (await next_event(face)).kind is K.POWER_ON


async def test_battery_low(face, mock_factory):
    mock_factory.pin(25).drive_low()
    assert (await next_event(face)).kind is K.BATTERY_LOW
    mock_factory.pin(25).drive_high()
    await assert_quiet(face, 0.05)


async def test_lever_rocking_back_to_the_same_side_is_no_press(mock_factory):
    face = await open_powered(mock_factory, lever=True)
    red, black = mock_factory.pin(17), mock_factory.pin(27)
    try:
        red.drive_low()
        assert (await next_event(face)).side is Side.RED
        red.drive_high()  # lever wobbles to the middle and back
        await asyncio.sleep(0.03)
        red.drive_low()
        await assert_quiet(face, 0.05)
        red.drive_high()
        black.drive_low()
        assert (await next_event(face)).side is Side.BLACK
        assert face.stats["lever_repeats"] == 1
    finally:
        await face.close()


# -- outputs -----------------------------------------------------------------------------------
async def test_show_sets_leds_and_display(face, mock_factory):
    now = time.monotonic_ns()
    await face.show(FaceView(red_ms=1_800_000, black_ms=15_350, running=Side.BLACK, mono_ns=now))
    assert (mock_factory.pin(5).state, mock_factory.pin(6).state) == (False, True)
    cells = [str(c) for c in face.display.cells]
    assert "".join(cells[:8]) == "   0.30.00"  # red on the left, h:mm:ss with points
    assert cells[8] == "-" and "".join(cells[13:]) == "15.3"  # black running, tenths
    await face.show(FaceView(red_ms=0, black_ms=15_300, flag=Side.RED))
    assert mock_factory.pin(5).state is True and mock_factory.pin(6).state is False
    assert str(face.display.cells[0]) == "F"


async def test_display_counts_down_by_itself(face):
    await face.show(
        FaceView(red_ms=1_000, black_ms=60_000, running=Side.RED, mono_ns=time.monotonic_ns())
    )
    first = face.display.cells
    await asyncio.sleep(0.35)
    assert face.display.cells != first  # tenths moved without another show()


def test_render_view_alternates_text_and_times():
    view = FaceView(red_ms=60_000, black_ms=61_000, text="PAUSE", mono_ns=0)
    assert render_view(view, 500_000_000) == "PAUSE"
    shown = render_view(view, 1_500_000_000, left_side=Side.BLACK)
    assert shown[:2] == ("0:01:01", "0:01:00")
    assert render_view(view, 4_100_000_000) == "PAUSE"


async def test_beep_and_brightness(face, mock_factory):
    await face.beep(30)
    assert mock_factory.pin(13).state is True
    await asyncio.sleep(0.08)
    assert mock_factory.pin(13).state is False
    await face.set_brightness(3)
    assert face.display.brightness == 3
    with pytest.raises(ValueError, match=r"0\.\.15"):
        await face.set_brightness(16)
    with pytest.raises(ValueError, match="beep"):
        await face.beep(-1)


# -- lifecycle ---------------------------------------------------------------------------------
async def test_close_is_idempotent_and_frees_every_pin(mock_factory):
    face = await open_powered(mock_factory)
    await face.close()
    await face.close()
    assert face.display.closed
    again = await open_powered(mock_factory)  # every pin can be claimed again
    await again.close()


async def test_edges_after_close_are_dropped(mock_factory):
    face = await open_powered(mock_factory)
    pin = mock_factory.pin(17)
    await face.close()
    pin.drive_low()
    await asyncio.sleep(0.05)
    assert face._queue.empty()


async def test_pin_in_use_names_the_field_and_releases_the_rest(mock_factory):
    blocker = LED(23, pin_factory=mock_factory)
    face = GpioClockFace(config(), pin_factory=mock_factory)
    with pytest.raises(GpioFaceError, match="arbiter_key on GPIO23"):
        await face.open()
    blocker.close()
    face2 = await open_powered(mock_factory)  # the pins claimed before the failure were freed
    await face2.close()


def test_constructor_refuses_a_plain_dict():
    with pytest.raises(TypeError, match="GpioFaceConfig"):
        GpioClockFace(WIRING)  # type: ignore[arg-type]
