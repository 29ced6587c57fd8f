"""Open the display driver a face's config names (none, MAX7219 or TM1637).

Apart from ``displays.py`` so the base classes do not import the drivers built on them.
"""

from __future__ import annotations

from typing import Any

from firmware_bridge.displays import ClockDisplay, NullDisplay
from firmware_bridge.displays_max7219 import Max7219Display
from firmware_bridge.displays_tm1637 import Tm1637Display
from firmware_bridge.gpio_config import DisplayConfig

__all__ = ["open_display"]


def open_display(config: DisplayConfig, *, pin_factory: Any = None) -> ClockDisplay:
    """Build the driver the config names."""
    if config.driver == "max7219":
        return Max7219Display.from_config(config)
    if config.driver == "tm1637":
        return Tm1637Display.from_config(config, pin_factory=pin_factory)
    return NullDisplay()
