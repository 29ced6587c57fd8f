"""A four-player Swiss of seven rounds for the knockout's tests: who plays whom, and each
board's results fed to a station without a broker as the arbiter entered them (or, not
confirmed, as a board proposes them)."""

from __future__ import annotations

import json

from support.station import decision_txn, envelope
from venue_station.domain.station import Station

__all__ = ["BOARDS", "ORDER", "ROUNDS", "Swiss", "pairings"]

# Four players over seven rounds; the one earlier in 甲乙丙丁 always wins: after round 7
# 甲 14, 乙 8, 丙 6, 丁 0, so the semi-finals are 甲-丁 and 乙-丙.
ROUNDS = [
    (("甲", "乙"), ("丙", "丁")),
    (("甲", "丙"), ("乙", "丁")),
    (("甲", "丁"), ("乙", "丙")),
    (("乙", "甲"), ("丁", "丙")),
    (("丙", "甲"), ("丁", "乙")),
    (("丁", "甲"), ("丙", "乙")),
    (("甲", "乙"), ("丙", "丁")),
]
ORDER = "甲乙丙丁"
BOARDS = ("11", "12")  # not the FakeNode's boards 1 and 2


def pairings(*rounds: int) -> str:
    rows = ["round,board,red,black"]
    for r in rounds:
        for board, (red, black) in zip(BOARDS, ROUNDS[r - 1], strict=True):
            rows.append(f"{r},{board},{red},{black}")
    return "\n".join(rows) + "\n"


class Swiss:
    """Feeds the boards' results as the arbiter entered them (or as a board proposes them)."""

    def __init__(self, station: Station) -> None:
        self.station = station
        self.seq = dict.fromkeys(BOARDS, 0)

    async def result(self, round_no: int, board: str, *, confirmed: bool = True) -> None:
        red, black = ROUNDS[round_no - 1][BOARDS.index(board)]
        winner = "red" if ORDER.index(red) < ORDER.index(black) else "black"
        data = {"winner": winner, "reason": "resign"}
        # without the arbiter's command the board's result is only proposed (pending)
        txn = decision_txn(self.station, board, "result", data) if confirmed else None
        self.seq[board] += 1
        game = f"r{round_no}-b{board}"
        ev = envelope(board, self.seq[board], game=game, type="result", data=data, txn=txn)
        ingest = self.station.ingest
        assert ingest is not None
        ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())
        await ingest.flush()

    async def rounds(self, *rounds: int) -> None:
        for r in rounds:
            for board in BOARDS:
                await self.result(r, board)
