"""``mock_factory``: gpiozero's MockFactory as the default pin factory, as gpiozero's own tests do.

Tests drive inputs with ``mock_factory.pin(17).drive_low()`` and read outputs' ``.state``;
the factory is reset and restored afterwards so no pin reservation leaks between tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory


@pytest.fixture
def mock_factory() -> Iterator[MockFactory]:
    save_factory = Device.pin_factory
    Device.pin_factory = MockFactory()
    try:
        yield Device.pin_factory
    finally:
        # reset() also clears what MockFactory keeps at class level (as gpiozero's conftest).
        if Device.pin_factory is not None:
            Device.pin_factory.reset()
        Device.pin_factory = save_factory
