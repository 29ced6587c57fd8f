"""The hand-written TM1637 driver at the bit level, on MockFactory pins.

A MockPin subclass logs every level change of every pin into one list, in order (per-pin
``.states`` histories carry their own time bases, so their interleaving is not exact); the
test replays the log as the chip would see it: start / stop conditions, bits sampled on rising
CLK edges, LSB first, nine clocks per byte (the ninth is the chip's ack slot), and one
more clock to set up the stop.
"""

from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockPin

from firmware_bridge.displays import Cell
from firmware_bridge.displays_tm1637 import Tm1637, Tm1637Display, encode_cell
from firmware_bridge.gpio_config import Tm1637Config

BUS: list[tuple[str, bool]] = []


class BusPin(MockPin):
    """Logs level changes; ``ack_low`` makes an input DIO read low, as an acking chip would."""

    ack_low = False

    def _change_state(self, value):
        changed = super()._change_state(value)
        if changed:
            BUS.append((self.info.name, bool(value)))
        return changed

    def _get_state(self):
        if self.ack_low and self._function == "input":
            return False
        return super()._get_state()


def decode(log, clk, dio):
    """The transfers on one CLK/DIO pair: a list of (bytes, ack slots)."""
    c = d = True  # the log starts on an idle bus: both lines high
    transfers, bits = [], None
    for name, level in log:
        if name == clk:
            if level and not c and bits is not None:
                bits.append(d)
            c = level
        elif name == dio:
            if c and d and not level:
                bits = []  # start
            elif c and not d and level and bits is not None:
                # the stop is set up with one more clock (CLK rises with DIO low), not data
                assert len(bits) % 9 == 1, f"{len(bits)} clocks is not whole bytes + stop"
                bits = bits[:-1]
                data = bytes(
                    sum(bit << i for i, bit in enumerate(bits[k : k + 8]))
                    for k in range(0, len(bits), 9)
                )
                transfers.append(data)
                bits = None  # stop
            d = level
    return transfers


@pytest.fixture
def bus_factory(mock_factory):
    BUS.clear()
    mock_factory.pin_class = BusPin
    yield mock_factory
    BusPin.ack_low = False


@pytest.fixture
def display(bus_factory):
    cfg = Tm1637Config(left_clk=20, left_dio=21, right_clk=19, right_dio=26)
    disp = Tm1637Display.from_config(cfg, pin_factory=bus_factory)
    BUS.clear()
    yield disp
    disp.close()


def test_exact_bytes_for_both_halves(display):
    display.show("0:05:00", "19.9")
    # 4 digits: "0:05:00" loses its zero hours; the colon is the point on digit 2
    assert decode(BUS, "GPIO20", "GPIO21") == [b"\x40", b"\xc0\x3f\xed\x3f\x3f", b"\x8f"]
    # "19.9" right-aligned behind a blank mark cell
    assert decode(BUS, "GPIO19", "GPIO26") == [b"\x40", b"\xc0\x00\x06\xef\x6f", b"\x8f"]


def test_unchanged_frame_is_not_resent_and_brightness_is_sent(display):
    display.show("0:05:00", "19.9")
    BUS.clear()
    display.show("0:05:00", "19.9")
    assert BUS == []
    display.set_brightness(4)  # 16 face levels onto the chip's 8
    assert decode(BUS, "GPIO20", "GPIO21")[-1] == b"\x8a"


def test_all_on_and_close_switches_off(display):
    display.all_on()
    assert decode(BUS, "GPIO20", "GPIO21")[1] == b"\xc0\xff\xff\xff\xff"
    BUS.clear()
    display.close()
    display.close()
    assert decode(BUS, "GPIO19", "GPIO26") == [b"\x80"]


def test_missing_chip_is_counted_not_raised(display, caplog):
    display.show("0:30:00", "0:30:00")  # nothing pulls DIO low in the ack slot
    assert display.left.nacks == 7 and display.left.acks == 0
    assert "did not acknowledge" in caplog.text


def test_acking_chip(bus_factory):
    BusPin.ack_low = True
    chip = Tm1637(20, 21, pin_factory=bus_factory)
    chip.write(bytes([encode_cell(Cell("8", True))] * 4))
    assert (chip.acks, chip.nacks) == (7, 0)  # 1 + (1 + 4) + 1 bytes
    chip.close()


def test_idle_bus_is_high_and_pins_are_freed(bus_factory):
    chip = Tm1637(20, 21, pin_factory=bus_factory)
    assert bus_factory.pin(20).state and bus_factory.pin(21).state
    chip.close()
    Tm1637(20, 21, pin_factory=bus_factory).close()  # claimable again


def test_encode_cell_fallbacks(bus_factory):
    assert encode_cell(Cell("B")) == encode_cell(Cell("b"))
    assert encode_cell(Cell("@")) == 0x08
    assert encode_cell(Cell(" ", True)) == 0x80
    with pytest.raises(ValueError, match=r"0\.\.7"):
        Tm1637(20, 21, pin_factory=bus_factory).write(b"\x00", 9)
