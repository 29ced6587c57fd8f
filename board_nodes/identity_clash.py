"""Two nodes with one identity: another connection writing this board's status.

A node.toml copied onto a second Pi, or an SD card cloned for the next board, gives two Pis
the same board accounts and client ids. The broker ends one's connection when the other's
comes (MQTT's session takeover; Mosquitto closes the socket without saying why), and the two
take the board from each other as fast as they reconnect: the board lost and back many times
a second, an alert each time, two clocks' events mixed under one board.

A link reads its own board's status back (the ACL lets a node read its boards' status,
docs/broker.md). Each end of a connection of the other Pi leaves its will there (``lost`` with
that connection's epoch, ``conn``), and this link reads it when it connects again. A status of
this board whose ``conn`` is not one of this process's connections and was made since this
process started was written by another process connected as this board: a clash. Not one:
what the broker retained before this process first connected (a dead Pi's last word, carried
on by takeover.py), nor a connection older than this process (its own previous life's will). A
second Pi whose wall clock is behind this one's start goes unnoticed here — the other notices.

Once a clash is heard, the link (``BoardLink``)
- logs it at ERROR in words (at most once a minute),
- says ``clash: true`` in its ``online`` status for ``MEMORY_MS``: the station raises one
  ``identity_clash`` alert naming the node (docs/wire.md),
- waits ``PAUSE_S`` (jittered) before each reconnect while it remembers the clash, so the two
  stop taking the board from each other: one keeps it a minute or more at a time.
"""

from __future__ import annotations

import logging
import random
import time
from collections import deque
from collections.abc import Callable

from wire_contract import messages as wire

__all__ = ["MEMORY_MS", "PAUSE_S", "ClashWatch"]

log = logging.getLogger(__name__)

PAUSE_S = 60.0  # between reconnects while a clash is remembered (±25 %)
MEMORY_MS = 10 * 60_000  # a clash heard this long ago is forgotten (the duplicate removed)
LOG_EVERY_MS = 60_000
_MINE_KEPT = 1024  # this process's latest connection epochs


class ClashWatch:
    """What one board's link knows of another process connected as its board."""

    def __init__(
        self, board: str, node: str, *, started_ms: int, rng: Callable[[], float] = random.random
    ) -> None:
        self.board, self.node = board, node
        self._started = started_ms
        self._rng = rng
        self._mine: deque[int] = deque(maxlen=_MINE_KEPT)
        self._connections = 0  # made (not only tried): what the first finds retained is old
        self.heard_ms: int | None = None  # when a clash was last heard (wall ms)
        self.count = 0
        self._logged_ms: int | None = None

    def __repr__(self) -> str:
        return f"<ClashWatch board={self.board} node={self.node} count={self.count}>"

    def connecting(self, conn: int) -> None:
        """This process tries a connection with epoch ``conn``."""
        self._mine.append(conn)

    def connected(self) -> None:
        """The connection tried last is made (before the link reads its status back)."""
        self._connections += 1

    def heard(self, payload: bytes | str, *, retained: bool, now_ms: int) -> bool:
        """This board's status as the broker delivered it; True when it is news of a clash
        the link did not already remember (its ``online`` should say so now)."""
        try:
            status = wire.decode(wire.BoardStatus, payload)
        except wire.WireError:
            return False  # (only this board's account writes here: the station counts it)
        if status.conn is None or status.conn < self._started or status.conn in self._mine:
            return False
        if retained and self._connections <= 1:
            # kept from before this process's first connection (tries that failed, a Wi-Fi not
            # up at boot, do not count): a dead Pi's last word, even dated after this start by
            # a clock not yet set (a fresh Pi before its network time)
            return False
        news = not self.remembered(now_ms)
        self.heard_ms, self.count = now_ms, self.count + 1
        if self._logged_ms is None or now_ms - self._logged_ms >= LOG_EVERY_MS:
            self._logged_ms = now_ms
            since = time.strftime("%H:%M:%S", time.localtime(status.conn / 1000))
            log.error(
                "board %s: another node is connected as %s (its connection of %s wrote this "
                "board's status; %s): two Pis with one identity — a copied node.toml or a cloned "
                "SD card? This node now waits about %.0f s before each reconnect",
                self.board, status.node, since, status.state, PAUSE_S,
            )  # fmt: skip
        return news

    def remembered(self, now_ms: int) -> bool:
        return self.heard_ms is not None and now_ms - self.heard_ms < MEMORY_MS

    def pause_s(self, now_ms: int) -> float:
        """How long to wait before reconnecting at least (0: no clash remembered)."""
        return PAUSE_S * (0.75 + 0.5 * self._rng()) if self.remembered(now_ms) else 0.0
