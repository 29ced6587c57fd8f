"""MAX7219 8-digit 7-segment modules through luma.led_matrix.

The chain (``cascaded`` modules on one SPI bus) is one luma device; luma's ``sevensegment``
turns text into the no-decode segment bytes the MAX7219 wants. Any luma device of the same
size works in its place, which is how tests read back what the display shows: hand in
``luma.core.device.dummy`` and decode its image.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware_bridge.displays import Cell, ClockDisplay, DisplayError

if TYPE_CHECKING:
    from firmware_bridge.gpio_config import Max7219Config

__all__ = ["Max7219Display"]


class Max7219Display(ClockDisplay):
    """Both halves on a chain of MAX7219 modules: the first half of the digits is the left side.

    ``device`` is any luma device ``8 * cascaded`` pixels wide and 8 high (a ``max7219`` on
    SPI, or a ``dummy`` in tests).
    """

    def __init__(self, device: Any) -> None:
        super().__init__()
        from luma.core.virtual import sevensegment
        from luma.led_matrix.segment_mapper import dot_muncher

        if device.width % 16 or device.height != 8:
            raise DisplayError(
                f"a MAX7219 clock needs a chain 16*k digits wide and 8 high, "
                f"not {device.width}x{device.height}"
            )
        self.device = device
        self.digits_per_side = device.width // 2
        # A dummy device has no segment_mapper of its own; the MAX7219's is dot_muncher.
        self._seg = sevensegment(device, undefined="_", segment_mapper=dot_muncher)

    @classmethod
    def from_config(cls, config: Max7219Config) -> Max7219Display:
        """Open the chain on the Pi's SPI bus (needs ``spidev``, from the ``pi`` extra)."""
        from luma.core.interface.serial import noop, spi
        from luma.led_matrix.device import max7219

        try:
            serial = spi(
                port=config.spi_port,
                device=config.spi_device,
                gpio=noop(),
                bus_speed_hz=config.spi_hz,
            )
            device = max7219(
                serial,
                cascaded=config.cascaded,
                blocks_arranged_in_reverse_order=config.reverse_order,
            )
        except Exception as exc:  # luma raises bare errors for a missing bus or module
            raise DisplayError(
                f"cannot open MAX7219 on SPI {config.spi_port}.{config.spi_device}: {exc} "
                "(is SPI enabled in raspi-config and spidev installed?)"
            ) from exc
        return cls(device)

    def _write(self, cells: list[Cell]) -> None:
        # Unknown characters become "_" rather than an error: the clock keeps running.
        self._seg.text = "".join(str(c) for c in cells)

    def _brightness(self, level: int) -> None:
        # The MAX7219 intensity register has 16 steps; luma takes 0..255 and keeps the top 4 bits.
        self.device.contrast(level << 4)

    def _close(self) -> None:
        try:
            self.device.cleanup()
        except Exception as exc:
            raise DisplayError(f"closing the MAX7219 chain failed: {exc}") from exc
