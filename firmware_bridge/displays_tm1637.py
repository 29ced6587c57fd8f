"""TM1637 4/6-digit modules, bit-banged over two gpiozero pins (written by hand: no library).

The TM1637's two-wire bus is I²C-like but not I²C (no address, bytes LSB first): a start is DIO
falling while CLK is high, a stop DIO rising while CLK is high, the chip samples DIO on each
rising CLK edge and pulls DIO low during the ninth clock of each byte to acknowledge. DIO is
driven open-drain — output low for a 0, released to the pull-up for a 1 — so the chip's ack
never fights the Pi. A display update is three transfers: data command ``0x40`` (auto
increment), address ``0xC0`` and the digit bytes, display control ``0x88 | brightness``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from gpiozero import GPIODevice

from firmware_bridge.displays import Cell, ClockDisplay, DisplayError

if TYPE_CHECKING:
    from firmware_bridge.gpio_config import Tm1637Config

__all__ = ["SEGMENTS", "Tm1637", "Tm1637Display", "encode_cell"]

log = logging.getLogger(__name__)

CMD_DATA_AUTO = 0x40
CMD_ADDRESS = 0xC0
CMD_DISPLAY_ON = 0x88  # | brightness 0..7
CMD_DISPLAY_OFF = 0x80

# Bit 0 = segment a … bit 6 = segment g, bit 7 = point (the colon on clock modules).
SEGMENTS: dict[str, int] = {
    " ": 0x00, "-": 0x40, "_": 0x08,
    "0": 0x3F, "1": 0x06, "2": 0x5B, "3": 0x4F, "4": 0x66,
    "5": 0x6D, "6": 0x7D, "7": 0x07, "8": 0x7F, "9": 0x6F,
    "A": 0x77, "b": 0x7C, "C": 0x39, "c": 0x58, "d": 0x5E, "E": 0x79, "F": 0x71,
    "G": 0x3D, "H": 0x76, "h": 0x74, "I": 0x06, "J": 0x1E, "L": 0x38, "n": 0x54,
    "o": 0x5C, "P": 0x73, "q": 0x67, "r": 0x50, "S": 0x6D, "t": 0x78, "U": 0x3E,
    "u": 0x1C, "y": 0x6E,
}  # fmt: skip


def encode_cell(cell: Cell) -> int:
    """Segment byte of one cell; a letter missing in one case is tried in the other, else ``_``."""
    ch = cell.char
    seg = SEGMENTS.get(ch)
    if seg is None:
        seg = SEGMENTS.get(ch.swapcase(), SEGMENTS["_"])
    return seg | (0x80 if cell.dot else 0)


class Tm1637:
    """One TM1637 chip on a CLK pin and a DIO pin. ``close()`` is idempotent."""

    def __init__(
        self, clk: Any, dio: Any, *, bit_delay_us: int = 0, pin_factory: Any = None
    ) -> None:
        self._clk_dev = GPIODevice(clk, pin_factory=pin_factory)
        try:
            self._dio_dev = GPIODevice(dio, pin_factory=pin_factory)
        except Exception:
            self._clk_dev.close()
            raise
        self._clk = self._clk_dev.pin
        self._dio = self._dio_dev.pin
        self._delay_ns = bit_delay_us * 1000
        self.acks = 0
        self.nacks = 0
        self._last: bytes | None = None
        self.closed = False
        # Idle bus: both lines high. DIO rests released on its pull-up.
        self._dio.function = "input"
        self._dio.pull = "up"
        self._clk.function = "output"
        self._clk.state = True

    def __repr__(self) -> str:
        return f"<Tm1637 clk={self._clk_dev.pin} dio={self._dio_dev.pin} nacks={self.nacks}>"

    def write(self, segments: bytes, brightness: int = 7, *, force: bool = False) -> None:
        """Show ``segments`` (one byte per digit, left to right) at ``brightness`` 0..7."""
        if self.closed:
            return
        if not 0 <= brightness <= 7:
            raise ValueError(f"TM1637 brightness is 0..7, not {brightness}")
        frame = bytes(segments) + bytes([brightness])
        if frame == self._last and not force:
            return  # unchanged: the bus is slow and the loop has better things to do
        self._transfer(bytes([CMD_DATA_AUTO]))
        self._transfer(bytes([CMD_ADDRESS]) + bytes(segments))
        self._transfer(bytes([CMD_DISPLAY_ON | brightness]))
        self._last = frame

    def off(self) -> None:
        if not self.closed:
            self._transfer(bytes([CMD_DISPLAY_OFF]))
            self._last = None

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._dio_dev.close()
        self._clk_dev.close()

    # -- the bus ------------------------------------------------------------------------------
    def _wait(self) -> None:
        if self._delay_ns:
            # time.sleep cannot wait microseconds; spin instead.
            end = time.perf_counter_ns() + self._delay_ns
            while time.perf_counter_ns() < end:
                pass

    def _dio_level(self, high: bool) -> None:
        if high:
            self._dio.function = "input"  # released: the pull-up makes it high
        else:
            self._dio.function = "output"
            self._dio.state = False
        self._wait()

    def _clk_level(self, high: bool) -> None:
        self._clk.state = high
        self._wait()

    def _transfer(self, data: bytes) -> None:
        # start: DIO falls while CLK is high
        self._dio_level(True)
        self._clk_level(True)
        self._dio_level(False)
        for byte in data:
            for bit in range(8):  # LSB first
                self._clk_level(False)
                self._dio_level(bool(byte >> bit & 1))
                self._clk_level(True)
            self._clk_level(False)
            self._dio_level(True)
            self._clk_level(True)
            acked = not self._dio.state  # the chip holds DIO low through the ninth clock
            self._clk_level(False)
            if acked:
                self.acks += 1
            else:
                self.nacks += 1
                if self.nacks == 1:
                    log.warning("TM1637 on %s did not acknowledge (is it wired?)", self._dio)
        # stop: DIO rises while CLK is high
        self._dio_level(False)
        self._clk_level(True)
        self._dio_level(True)


class Tm1637Display(ClockDisplay):
    """Two TM1637 modules, ``left`` and ``right``, ``digits`` each."""

    def __init__(self, left: Tm1637, right: Tm1637, *, digits: int = 4) -> None:
        super().__init__()
        self.left = left
        self.right = right
        self.digits_per_side = digits

    @classmethod
    def from_config(cls, config: Tm1637Config, *, pin_factory: Any = None) -> Tm1637Display:
        kw = {"bit_delay_us": config.bit_delay_us, "pin_factory": pin_factory}
        try:
            left = Tm1637(config.left_clk, config.left_dio, **kw)
        except Exception as exc:
            raise DisplayError(f"cannot claim the left TM1637's pins: {exc}") from exc
        try:
            right = Tm1637(config.right_clk, config.right_dio, **kw)
        except Exception as exc:
            left.close()
            raise DisplayError(f"cannot claim the right TM1637's pins: {exc}") from exc
        return cls(left, right, digits=config.digits)

    def _write(self, cells: list[Cell]) -> None:
        n = self.digits_per_side
        level = self.brightness >> 1  # 16 face levels onto the chip's 8
        self.left.write(bytes(encode_cell(c) for c in cells[:n]), level)
        self.right.write(bytes(encode_cell(c) for c in cells[n:]), level)

    def _brightness(self, level: int) -> None:
        if self.cells:
            n = self.digits_per_side
            self.left.write(bytes(encode_cell(c) for c in self.cells[:n]), level >> 1)
            self.right.write(bytes(encode_cell(c) for c in self.cells[n:]), level >> 1)

    def _close(self) -> None:
        for chip in (self.left, self.right):
            try:
                chip.off()
            finally:
                chip.close()
