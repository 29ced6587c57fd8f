"""The fake time source every GameClock test of this folder runs on."""

from __future__ import annotations

import pytest
from support.fake_time import FakeTime


@pytest.fixture
def t() -> FakeTime:
    return FakeTime()
