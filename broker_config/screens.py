"""The hall screens of the roster (``[[screen]]``): which boards each shows, and its address.

A screen is a machine in the hall (a Pi or any Debian PC on a TV) whose chromium, in kiosk
mode, opens the station's display page at the screen's own address: its boards
(``boards = "1-40"``, or the boards of some nodes: ``nodes = ["pi-01", "pi-02"]``, one part
of the hall), its paging (``page_s``, ``per_page``) and its language. The range grammar is
the page's own (``venue_station/web/static/screen.js``): items split by commas, each a board id
or a ``low-high`` range of numbers; at most 64 items, 1000 boards a range, 512 characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = ["MAX_ITEMS", "MAX_SPAN", "MAX_SPEC", "Screen", "check_boards_spec", "compact_spec"]

MAX_ITEMS = 64
MAX_SPAN = 1000
MAX_SPEC = 512
_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
_RANGE = re.compile(r"(\d{1,4})-(\d{1,4})")


def check_boards_spec(spec: str) -> str:
    """``spec`` unchanged if the page accepts it, else ValueError saying which item and why."""
    if not spec.strip():
        raise ValueError("an empty board range")
    if len(spec) > MAX_SPEC:
        raise ValueError(f"{len(spec)} characters; at most {MAX_SPEC}")
    items = [s.strip() for s in spec.split(",")]
    if len(items) > MAX_ITEMS:
        raise ValueError(f"{len(items)} items; at most {MAX_ITEMS}")
    for i, item in enumerate(items, 1):
        m = _RANGE.fullmatch(item)
        if m:
            low, high = int(m[1]), int(m[2])
            if high < low:
                raise ValueError(f"item {i} {item!r}: a range goes from low to high")
            if high - low + 1 > MAX_SPAN:
                raise ValueError(f"item {i} {item!r}: a range spans at most {MAX_SPAN} boards")
        elif not _ID.fullmatch(item):
            raise ValueError(f"item {i} {item!r}: a board id or a low-high range expected")
    return spec


def compact_spec(boards: Iterable[str]) -> str:
    """Boards as a spec, runs of numbers as ranges: ["1","2","3","7","A"] -> "1-3,7,A"."""
    given = list(boards)
    numbers = sorted({int(b) for b in given if b.isdigit() and str(int(b)) == b})
    others = sorted({b for b in given if not (b.isdigit() and str(int(b)) == b)})
    parts: list[str] = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        parts.append(str(numbers[i]) if i == j else f"{numbers[i]}-{numbers[j]}")
        i = j + 1
    return ",".join(parts + others)


BoardsSpec = Annotated[str, AfterValidator(check_boards_spec)]


class Screen(BaseModel):
    """One hall screen: its host id, its boards (a range, or some nodes' boards, or all)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(pattern=_ID.pattern)]
    boards: BoardsSpec | None = None
    nodes: tuple[str, ...] = ()
    page_s: int | None = Field(default=None, ge=3, le=3600)
    per_page: int | None = Field(default=None, ge=1, le=200)
    lang: Literal["zh", "en"] = "zh"

    def query(self, node_boards: dict[str, tuple[str, ...]]) -> str:
        """The display page's query string for this screen (``node_boards``: the roster's)."""
        parts: list[str] = []
        if self.boards is not None:
            parts.append(f"boards={self.boards}")
        elif self.nodes:
            spec = compact_spec(b for n in self.nodes for b in node_boards.get(n, ()))
            parts.append(f"boards={spec}")
        if self.page_s is not None:
            parts.append(f"page_s={self.page_s}")
        if self.per_page is not None:
            parts.append(f"per_page={self.per_page}")
        parts.append(f"lang={self.lang}")
        return "&".join(parts)
