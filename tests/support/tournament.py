"""``--tournament-long``: the whole-event acceptance tests (tests/tournament/) at full size.

The short form (``make test``): 16 players, two presses a side per game. The long form: 24
players and twelve presses a side (tests/tournament/conftest.py reads the option).
"""

from __future__ import annotations

import pytest

__all__ = ["pytest_addoption"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tournament-long",
        action="store_true",
        default=False,
        help="run the whole-event acceptance tests at full size (24 players, longer games)",
    )
