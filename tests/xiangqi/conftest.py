"""The independent referee for the xiangqi tests: Debian's fairy-stockfish, skipped if absent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.fairy_stockfish import FAIRY_STOCKFISH, Referee


@pytest.fixture(scope="module")
def fsf() -> Iterator[Referee]:
    if not FAIRY_STOCKFISH.exists():
        pytest.skip("fairy-stockfish is not installed (apt-get install fairy-stockfish)")
    referee = Referee()
    yield referee
    referee.close()
