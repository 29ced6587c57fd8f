"""The display behind a GPIO face: a small driver interface and the 7-segment layout it shares.

A ``ClockDisplay`` has two halves, left and right, ``digits_per_side`` cells each. The face
hands it two clock texts (``format_clock`` output) with per-side marks, or one short text across
the whole display; the layout into cells is common, so MAX7219 and TM1637 show the same thing.
A cell is a character with an optional decimal point: ``0:30:00`` becomes ``0.30.00`` in five
cells, because a 7-segment colon would cost a whole digit.

Drivers: ``max7219`` (``displays_max7219.Max7219Display``, through luma.led_matrix),
``tm1637`` (``displays_tm1637.Tm1637Display``, bit-banged by hand) and ``none``.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING

from firmware_bridge.face import FaceError

if TYPE_CHECKING:
    pass

__all__ = [
    "BLANK",
    "Cell",
    "ClockDisplay",
    "DisplayError",
    "NullDisplay",
    "SideMarks",
    "clock_cells",
    "side_cells",
    "text_cells",
]


class DisplayError(FaceError):
    """A display could not be opened or driven."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One 7-segment digit: a character and its decimal point."""

    char: str = " "
    dot: bool = False

    def __str__(self) -> str:
        return self.char + ("." if self.dot else "")


BLANK = Cell()


@dataclass(frozen=True, slots=True)
class SideMarks:
    """What a half shows beside its time: ``F`` when its flag fell, ``-`` while it runs."""

    running: bool = False
    flag: bool = False

    @property
    def char(self) -> str:
        return "F" if self.flag else "-" if self.running else " "


def text_cells(text: str) -> list[Cell]:
    """Cells for ``text``; a ``.`` or ``:`` lights the previous cell's point instead of a cell."""
    cells: list[Cell] = []
    for ch in text:
        if ch in ".:" and cells and not cells[-1].dot:
            cells[-1] = Cell(cells[-1].char, True)
        elif ch in ".:":
            cells.append(Cell(" ", True))
        else:
            cells.append(Cell(ch))
    return cells


def clock_cells(clock_text: str, width: int) -> list[Cell]:
    """Fit a ``format_clock`` text into ``width`` cells, dropping what a clock can spare.

    ``0:30:00`` → ``30.00`` when five cells do not fit, ``1:05:00`` → ``1.05`` (hours and
    minutes) when still too wide; the tenths form ``19.9`` always fits in three.
    """
    cells = text_cells(clock_text)
    if len(cells) > width and clock_text.startswith("0:"):
        cells = text_cells(clock_text[2:])
    if len(cells) > width and clock_text.count(":") == 2:
        cells = text_cells(clock_text.rsplit(":", 1)[0])
    if len(cells) > width:
        cells = cells[:width]
    return cells


def side_cells(clock_text: str, marks: SideMarks, width: int) -> list[Cell]:
    """One half: the mark in the first cell when there is room, the time right-aligned."""
    time = clock_cells(clock_text, width)
    pad = width - len(time)
    if pad == 0:
        return time
    return [Cell(marks.char), *([BLANK] * (pad - 1)), *time]


class ClockDisplay(abc.ABC):
    """A two-sided 7-segment display. ``close()`` is idempotent; closed displays ignore writes."""

    digits_per_side: int = 4

    def __init__(self) -> None:
        self.brightness = 15
        self.closed = False
        self.cells: tuple[Cell, ...] = ()  # what was last written, left to right

    def __repr__(self) -> str:
        shown = "".join(str(c) for c in self.cells)
        return f"<{type(self).__name__} {shown!r}{' closed' if self.closed else ''}>"

    # -- what the face calls -----------------------------------------------------------------
    def show(
        self,
        left: str,
        right: str,
        *,
        left_marks: SideMarks = SideMarks(),
        right_marks: SideMarks = SideMarks(),
    ) -> None:
        """Both clock texts (``format_clock`` output), each half with its marks."""
        n = self.digits_per_side
        self._put([*side_cells(left, left_marks, n), *side_cells(right, right_marks, n)])

    def show_text(self, text: str) -> None:
        """A short text across the whole display, centred (``PAUSE``, ``ARB``, ``r7 b12``)."""
        width = 2 * self.digits_per_side
        cells = text_cells(text)[:width]
        left = (width - len(cells)) // 2
        self._put([*([BLANK] * left), *cells, *([BLANK] * (width - left - len(cells)))])

    def clear(self) -> None:
        self._put([BLANK] * (2 * self.digits_per_side))

    def all_on(self) -> None:
        """Light every segment and point (the self-test's first step)."""
        self._put([Cell("8", True)] * (2 * self.digits_per_side))

    def set_brightness(self, level: int) -> None:
        """0 (dim, still on) … 15 (full)."""
        if not 0 <= level <= 15:
            raise ValueError(f"brightness must be 0..15, not {level}")
        self.brightness = level
        if not self.closed:
            self._brightness(level)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._close()

    # -- what a driver implements -----------------------------------------------------------
    def _put(self, cells: list[Cell]) -> None:
        if self.closed:
            return
        self.cells = tuple(cells)
        self._write(cells)

    @abc.abstractmethod
    def _write(self, cells: list[Cell]) -> None:
        """Send ``2 * digits_per_side`` cells, left to right."""

    def _brightness(self, level: int) -> None:  # noqa: B027 - optional hook
        """Apply a brightness level; default: the display has none to set."""

    def _close(self) -> None:  # noqa: B027 - optional hook
        """Release the bus; default: nothing held."""


class NullDisplay(ClockDisplay):
    """``driver = "none"``: a face with LEDs only. Keeps ``cells`` so tests can still look."""

    digits_per_side = 8

    def _write(self, cells: list[Cell]) -> None:
        pass
