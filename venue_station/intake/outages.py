"""One node's outage is one alert, and an alert that only informs closes when its cause is gone.

When a node loses power every board it serves goes ``lost`` (or ``offline``) within moments:
the first raises a ``board_lost`` / ``board_offline`` alert, the others of the same node and
session within ``WINDOW_MS`` join it (``detail.boards``) instead of raising their own. When
every board of the group is online again the alert is cleared by the station
(``status: "cleared"``, ``by: "station"``, ``detail.cleared: "back_online"``). The same for a
``clock_offset`` alert once the node's clock is back within bounds (``"offset_ok"``).

Pure bookkeeping: the ingest asks and applies (``ingest.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["WINDOW_MS", "Outage", "Outages"]

WINDOW_MS = 30_000  # boards of one node lost within this of the first are one outage


@dataclass
class Outage:
    alert_id: int
    node: str
    session: int
    state: str
    first_ms: int
    detail: dict[str, Any]
    boards: set[str] = field(default_factory=set)  # every board the outage took
    down: set[str] = field(default_factory=set)  # those not back yet


class Outages:
    def __init__(self) -> None:
        self._open: list[Outage] = []
        self.offsets: dict[str, int] = {}  # board -> its open clock_offset alert

    def joining(self, node: str, session: int, state: str, at_ms: int) -> Outage | None:
        """The open outage a board of ``node`` going ``state`` now belongs to, if any."""
        for outage in self._open:
            if (outage.node, outage.session, outage.state) == (node, session, state) and (
                0 <= at_ms - outage.first_ms <= WINDOW_MS
            ):
                return outage
        return None

    def start(self, outage: Outage) -> None:
        self._open.append(outage)

    def back(self, board: str) -> list[Outage]:
        """``board`` is online again: the outages it ends (every board of them back)."""
        ended = []
        for outage in self._open:
            outage.down.discard(board)
            if not outage.down:
                ended.append(outage)
        self._open = [o for o in self._open if o.down]
        return ended

    def still_down(self, board: str) -> bool:
        return any(board in o.down for o in self._open)
