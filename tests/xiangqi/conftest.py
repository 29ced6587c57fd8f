"""The independent referee for the xiangqi tests: Debian's fairy-stockfish (a missing part:
make test installs it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.fairy_stockfish import FAIRY_STOCKFISH, Referee
from support.parts import skip_missing


@pytest.fixture(scope="module")
def fsf() -> Iterator[Referee]:
    if not FAIRY_STOCKFISH.exists():
        skip_missing("fairy-stockfish", "apt-get install fairy-stockfish")
    referee = Referee()
    yield referee
    referee.close()
