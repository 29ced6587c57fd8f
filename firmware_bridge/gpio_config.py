"""``GpioFaceConfig``: which pin does what on a GPIO-wired clock face, validated up front.

The node config embeds it under ``[[board]]`` with ``face = "gpio"``. Pins are BCM numbers
(``17``) or gpiozero pin names (``"GPIO17"``, ``"BOARD11"``, ``"J8:11"``). A wiring mistake —
the same pin twice, a key on the SPI bus the MAX7219 uses — is refused with a message naming
both fields, before any pin is claimed.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from clock_service import Side

__all__ = [
    "DisplayConfig",
    "GpioFaceConfig",
    "Max7219Config",
    "NoDisplayConfig",
    "PinSpec",
    "Tm1637Config",
    "normalize_pin",
]

PinSpec = int | str

_BCM = re.compile(r"^(?:GPIO|BCM)?(\d{1,2})$", re.IGNORECASE)
_NAMED = re.compile(r"^(?:BOARD\d{1,2}|J8:\d{1,2}|[A-Z0-9]+:\d{1,2})$", re.IGNORECASE)

# The SPI buses' pins (BCM), which a MAX7219 on that bus claims: MOSI, SCLK and the chip select.
_SPI_PINS: dict[int, tuple[int, int, tuple[int, ...]]] = {
    0: (10, 11, (8, 7)),
    1: (20, 21, (18, 17, 16)),
}


def normalize_pin(pin: PinSpec) -> str:
    """One spelling per pin, so ``17``, ``"17"``, ``"BCM17"`` and ``"GPIO17"`` compare equal."""
    if isinstance(pin, bool):
        raise ValueError(f"a pin is a BCM number or a gpiozero pin name, not {pin!r}")
    if isinstance(pin, int):
        if not 0 <= pin <= 53:
            raise ValueError(f"BCM pin numbers are 0..53, not {pin}")
        return f"GPIO{pin}"
    text = pin.strip()
    m = _BCM.match(text)
    if m:
        return normalize_pin(int(m.group(1)))
    if _NAMED.match(text):
        return text.upper()
    raise ValueError(
        f"{pin!r} is not a pin: use a BCM number (17) or a gpiozero name ('GPIO17', 'BOARD11')"
    )


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoDisplayConfig(_Model):
    driver: Literal["none"] = "none"


class Max7219Config(_Model):
    """Two 8-digit MAX7219 modules daisy-chained on one SPI bus (one per side)."""

    driver: Literal["max7219"] = "max7219"
    spi_port: int = Field(0, ge=0, le=1)
    spi_device: int = Field(0, ge=0, le=2)
    cascaded: Literal[2, 4] = Field(2, description="modules in the chain; 2 = one per side")
    digits_per_module: Literal[8] = 8
    reverse_order: bool = Field(False, description="the chain's first module is on the right")
    spi_hz: int = Field(1_000_000, ge=10_000, le=10_000_000)

    @model_validator(mode="after")
    def _device_on_port(self) -> Max7219Config:
        if self.spi_device >= len(_SPI_PINS[self.spi_port][2]):
            raise ValueError(f"SPI port {self.spi_port} has no chip select {self.spi_device}")
        return self

    def bus_pins(self) -> dict[str, str]:
        mosi, sclk, cs = _SPI_PINS[self.spi_port]
        return {
            "display.mosi": normalize_pin(mosi),
            "display.sclk": normalize_pin(sclk),
            "display.cs": normalize_pin(cs[self.spi_device]),
        }


class Tm1637Config(_Model):
    """Two TM1637 modules (one per side), each on its own CLK/DIO pair, bit-banged."""

    driver: Literal["tm1637"] = "tm1637"
    left_clk: PinSpec
    left_dio: PinSpec
    right_clk: PinSpec
    right_dio: PinSpec
    digits: Literal[4, 6] = 4

    @field_validator("left_clk", "left_dio", "right_clk", "right_dio", mode="before")
    @classmethod
    def _pin_spelling(cls, value: object) -> object:
        if not isinstance(value, int | str):
            raise ValueError(f"a pin is a BCM number or a gpiozero pin name, not {value!r}")
        normalize_pin(value)
        return value

    bit_delay_us: int = Field(0, ge=0, le=1000, description="extra wait per clock edge")

    def bus_pins(self) -> dict[str, str]:
        return {
            f"display.{name}": normalize_pin(getattr(self, name))
            for name in ("left_clk", "left_dio", "right_clk", "right_dio")
        }


DisplayConfig = Annotated[
    NoDisplayConfig | Max7219Config | Tm1637Config, Field(discriminator="driver")
]


# The config fields that name a GPIO pin (the display's bus pins live in its own table).
PIN_FIELDS = (
    "red_button",
    "black_button",
    "pause_key",
    "arbiter_key",
    "power_sense",
    "battery_low",
    "red_led",
    "black_led",
    "buzzer",
)


class GpioFaceConfig(_Model):
    """The pins of one GPIO clock face. Keys switch to ground by default (``pull_up = true``)."""

    red_button: PinSpec = Field(description="red's button, or the lever's red-side contact")
    black_button: PinSpec = Field(description="black's button, or the lever's black-side contact")
    lever: bool = Field(False, description="the two contacts are one rocker lever's two sides")
    pause_key: PinSpec
    arbiter_key: PinSpec
    power_sense: PinSpec = Field(description="the clock face's own power switch, sensed")
    power_on_level: Literal["high", "low"] = Field(
        "high", description="'high' behind a divider; 'low' behind an optocoupler's transistor"
    )
    battery_low: PinSpec | None = None
    battery_low_level: Literal["high", "low"] = "low"
    red_led: PinSpec | None = None
    black_led: PinSpec | None = None
    buzzer: PinSpec | None = None
    display: DisplayConfig = Field(default_factory=NoDisplayConfig)
    left_side: Side = Field(Side.RED, description="whose time the display's left half shows")
    debounce_ms: int = Field(20, ge=1, le=200, description="bounce window for buttons and keys")
    sense_debounce_ms: int = Field(
        50, ge=1, le=2000, description="a power/battery level must hold this long to count"
    )
    pull_up: bool = Field(True, description="keys close to ground, internal pull-ups on")

    @field_validator(*PIN_FIELDS, mode="before")
    @classmethod
    def _pin_spelling(cls, value: object) -> object:
        if value is not None:
            if not isinstance(value, int | str):
                raise ValueError(f"a pin is a BCM number or a gpiozero pin name, not {value!r}")
            normalize_pin(value)
        return value

    def pin_map(self) -> dict[str, str]:
        """Every pin this face claims, by field name (display bus pins as ``display.*``)."""
        out: dict[str, str] = {}
        for name in PIN_FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = normalize_pin(value)
        if not isinstance(self.display, NoDisplayConfig):
            out.update(self.display.bus_pins())
        return out

    @model_validator(mode="after")
    def _no_pin_twice(self) -> GpioFaceConfig:
        seen: dict[str, str] = {}
        for name, pin in self.pin_map().items():
            if pin in seen:
                raise ValueError(f"pin {pin} is given to both {seen[pin]} and {name}")
            seen[pin] = name
        return self
