"""Per-board seq bookkeeping: the watermark below which every event is stored, and the gaps.

``seq`` increases by one per event of a board across its whole life (DESIGN.md §4), so the
station expects 1, 2, 3, ... from every board; anything above the watermark + 1 with holes
below it is a gap, which the collector asks the node to fill (``rebirth``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["BoardSeqs", "RangeSet", "SeqTracker", "Step", "watermark_after"]


@dataclass
class BoardSeqs:
    watermark: int = 0
    above: set[int] = field(default_factory=set)
    max_seen: int = 0
    expected: int = 0  # the highest seq a state snapshot said the board has
    gap_since: float | None = None  # monotonic s when the current gap opened
    last_rebirth: float | None = None
    rebirths: int = 0

    @property
    def has_gap(self) -> bool:
        return bool(self.above) or self.expected > self.watermark

    def missing(self, limit: int = 20) -> list[tuple[int, int]]:
        """The missing seqs as inclusive ranges, lowest first."""
        out: list[tuple[int, int]] = []
        start = self.watermark + 1
        for seq in sorted(self.above):
            if seq > start:
                out.append((start, seq - 1))
                if len(out) >= limit:
                    break
            start = seq + 1
        if self.expected >= start and len(out) < limit:
            out.append((start, self.expected))  # the board's last events never arrived
        return out


@dataclass(frozen=True)
class Step:
    reordered: bool
    gap_opened: bool
    gap_closed: bool


class SeqTracker:
    def __init__(self) -> None:
        self.boards: dict[str, BoardSeqs] = {}

    def load(self, seqs_by_board: dict[str, list[int]], now: float) -> None:
        for board, seqs in seqs_by_board.items():
            for seq in seqs:
                self.add(board, seq, now)

    def get(self, board: str) -> BoardSeqs:
        return self.boards.setdefault(board, BoardSeqs())

    def add(self, board: str, seq: int, now: float) -> Step:
        b = self.get(board)
        had_gap = b.has_gap
        reordered = seq < b.max_seen
        if seq == b.watermark + 1:
            b.watermark = seq
            while b.watermark + 1 in b.above:
                b.watermark += 1
                b.above.discard(b.watermark)
        elif seq > b.watermark:
            b.above.add(seq)
        # seq <= watermark: a new (board, session, seq) key below the watermark — a node that
        # reused seqs after losing its journal. Stored (the key is new), nothing to track.
        b.max_seen = max(b.max_seen, seq)
        if b.has_gap and not had_gap:
            b.gap_since, b.last_rebirth, b.rebirths = now, None, 0
        if had_gap and not b.has_gap:
            b.gap_since = None
        return Step(reordered, b.has_gap and not had_gap, had_gap and not b.has_gap)

    def expect(self, board: str, seq: int, now: float) -> Step:
        """A state snapshot says the board's last event is ``seq``: events up to it are due.

        Closes the one hole a seq gap cannot show: the last events of a board lost (say, by a
        station crash between receiving and storing them) with nothing after them."""
        b = self.get(board)
        had_gap = b.has_gap
        b.expected = max(b.expected, seq)
        if b.has_gap and not had_gap:
            b.gap_since, b.last_rebirth, b.rebirths = now, None, 0
        return Step(False, b.has_gap and not had_gap, False)

    def watermark_with(self, board: str, seqs: list[int]) -> int:
        """The board's watermark once ``seqs`` are added (``add``), without adding them."""
        return watermark_after(self.mark(board), seqs)

    def mark(self, board: str) -> tuple[int, frozenset[int]]:
        """The board's watermark and the seqs held above it, as they are now (a copy)."""
        b = self.boards.get(board) or BoardSeqs()
        return b.watermark, frozenset(b.above)

    def open_gaps(self) -> dict[str, BoardSeqs]:
        return {board: b for board, b in self.boards.items() if b.has_gap}


def watermark_after(mark: tuple[int, frozenset[int]], seqs: Iterable[int]) -> int:
    """The watermark of ``mark`` (``SeqTracker.mark``) once ``seqs`` are added: pure, so the
    store's writing thread may compute it while the loop goes on (batch_writes.py)."""
    w, held = mark
    above = held.union(seqs)
    while w + 1 in above:
        w += 1
    return w


class RangeSet:
    """Integers as sorted disjoint ranges: a board's stored seqs of one session are nearly
    always one range, so this stays a few entries however many events are stored."""

    def __init__(self) -> None:
        self._lo: list[int] = []
        self._hi: list[int] = []

    def __contains__(self, value: int) -> bool:
        i = bisect.bisect_right(self._lo, value) - 1
        return i >= 0 and value <= self._hi[i]

    def add(self, value: int) -> None:
        i = bisect.bisect_right(self._lo, value) - 1
        if i >= 0 and value <= self._hi[i]:
            return
        joins_left = i >= 0 and self._hi[i] == value - 1
        joins_right = i + 1 < len(self._lo) and self._lo[i + 1] == value + 1
        if joins_left and joins_right:
            self._hi[i] = self._hi[i + 1]
            del self._lo[i + 1], self._hi[i + 1]
        elif joins_left:
            self._hi[i] = value
        elif joins_right:
            self._lo[i + 1] = value
        else:
            self._lo.insert(i + 1, value)
            self._hi.insert(i + 1, value)

    def __len__(self) -> int:
        return len(self._lo)
