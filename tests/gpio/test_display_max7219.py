"""MAX7219 driver through luma: read back what the chain shows from luma's dummy device."""

from __future__ import annotations

import pytest
from luma.core.device import dummy
from luma.core.interface.serial import noop
from luma.led_matrix.device import max7219
from luma.led_matrix.segment_mapper import _DIGITS, dot_muncher

from firmware_bridge.displays import DisplayError, SideMarks
from firmware_bridge.displays_max7219 import Max7219Display

# The segment byte of each character we expect to read back (luma's own table, inverted).
GLYPH = {v: k for k, v in reversed(_DIGITS.items()) if k in "0123456789 -F_PAUSErb"}


def digit_bytes(device) -> list[int]:
    """Segment byte per digit, left to right, as the chain would receive it."""
    img = device.image.convert("1")
    cols = [sum(1 << y for y in range(8) if img.getpixel((x, y))) for x in range(device.width)]
    return cols[::-1]  # luma paints the last digit at x = 0


def read(device) -> str:
    """The display as text: a digit's point becomes a following ``.``."""
    out = []
    for b in digit_bytes(device):
        out.append(GLYPH[b & 0x7F] + ("." if b & 0x80 else ""))
    return "".join(out)


@pytest.fixture
def chain():
    device = dummy(width=16, height=8, mode="1")
    display = Max7219Display(device)
    yield display, device
    display.close()


def test_both_times_with_marks(chain):
    display, device = chain
    display.show("0:30:00", "19.9", left_marks=SideMarks(running=True))
    assert read(device) == "-  0.30.00     19.9"
    display.show("0:29:59", "00.0", right_marks=SideMarks(flag=True))
    assert read(device) == "   0.29.59F    00.0"


def test_text_is_centred_across_the_chain(chain):
    display, device = chain
    display.show_text("PAUSE")  # S and 5 share a glyph, so compare segment bytes
    assert digit_bytes(device) == list(dot_muncher("     PAUSE      "))
    display.show_text("r7 b12")
    assert read(device) == "     r7 b12     "


def test_all_on_lights_every_segment_and_point(chain):
    display, device = chain
    display.all_on()
    assert digit_bytes(device) == [0xFF] * 16
    display.clear()
    assert digit_bytes(device) == [0x00] * 16


def test_unknown_characters_show_as_underscore_not_an_error(chain):
    display, device = chain
    display.show_text("暂停")
    assert read(device).strip() == "__"


def test_long_hours_fit(chain):
    display, device = chain
    display.show("10:00:00", "0:05:00")
    assert read(device) == "  10.00.00   0.05.00"


@pytest.mark.filterwarnings("ignore:Image.Image.getdata:DeprecationWarning")  # inside luma
def test_brightness_reaches_the_intensity_register():
    sent: list[list[int]] = []

    class Capture(noop):
        def data(self, data):
            sent.append(list(data))

    chain = max7219(Capture(), cascaded=2)
    display = Max7219Display(chain)
    sent.clear()
    display.set_brightness(9)
    assert sent == [[0x0A, 9, 0x0A, 9]]  # INTENSITY register, once per module
    display.show("0:30:00", "0:30:00")
    assert sent[1:]  # digit registers were written
    display.close()
    display.close()


def test_wrong_chain_size_is_refused():
    with pytest.raises(DisplayError, match="16\\*k digits wide"):
        Max7219Display(dummy(width=8, height=8, mode="1"))
