"""A board gone without its will: online by its status, silent in fact (issue 28).

A node that leaves with a clean DISCONNECT (a crash its MQTT library closes politely, an
older node) leaves no will: its boards' retained status still says ``online``. The station
probes every online board's clock every ``clock_probe_s`` (``clock_probe.py``), and a node
answers at once, so a live board is never silent for two probe rounds. A board whose status
says online and that has said nothing at all — no event, state, status, nor an answer to a
probe — for ``after_ms`` is *silent*: shown "unknown since" its last message (the status
carries ``silent_since_ms``; the pages run no clock on past it) and alerted (``board_silent``,
one per node's outage, ``outages.py``). Any message from it ends that. Boards whose node
refuses probes (it predates them, ``answers is False``) are not judged: they may be quiet.

While the station has no broker nothing is judged (``broker_down`` says so); after it
connects, a board is judged from the connection's start at the earliest.

Bookkeeping on the ingest's board views (``ingest.py`` holds one ``SilentBoards``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from venue_station.intake.outages import Outages
from venue_station.live import alerts as alert_rules
from venue_station.live.fanout import EventFanout

__all__ = ["SilentBoards", "silence_after_ms", "silent_now"]

log = logging.getLogger("venue_station.intake.ingest")


class _View(Protocol):
    board: str
    status: dict[str, Any] | None
    heard_ms: int | None


def silence_after_ms(board_silent_s: float, clock_probe_s: float) -> int:
    """The silence that makes a board unknown: the configured one, but never less than two
    probe rounds and 2 s (a probe's answer is not a moment late)."""
    return int(max(board_silent_s, 2 * clock_probe_s + 2) * 1000)


def silent_now(
    views: Iterable[_View], *, now_ms: int, since_ms: int, after_ms: int, judged: set[str]
) -> list[_View]:
    """The online boards in ``judged`` silent for ``after_ms`` (counted from ``since_ms`` at
    the earliest: the broker connection's start) that are not marked silent yet."""
    out = []
    for view in views:
        status = view.status
        if status is None or status.get("state") != "online" or "silent_since_ms" in status:
            continue
        if view.board not in judged:
            continue
        heard = max(view.heard_ms or 0, since_ms)
        if now_ms - heard >= after_ms:
            out.append(view)
    return out


class SilentBoards:
    """The ingest's boards judged for silence: ``heard`` for every message of a known board,
    ``check`` on the station's alarm tick. Raises its alert through ``outage`` (one per node's
    outage, the ingest's) and clears it through ``change_alert``."""

    def __init__(
        self,
        *,
        boards: Mapping[str, _View],
        hub: EventFanout,
        outages: Outages,
        probe_targets: Callable[[], list[str]],
        change_alert: Callable[..., None],
        outage: Callable[[str, tuple[str, int, str], alert_rules.AlertSpec, int], None],
    ) -> None:
        self.boards = boards
        self.hub = hub
        self.outages = outages
        self.probe_targets = probe_targets
        self.change_alert = change_alert
        self.outage = outage

    def heard(self, board: str, received_ms: int) -> None:
        """A message of ``board``: it is not silent (silence.py); one that was is known again."""
        view = self.boards.get(board)
        if view is None:
            return
        view.heard_ms = received_ms
        status = view.status
        if status is None or "silent_since_ms" not in status:
            return
        view.status = {k: v for k, v in status.items() if k != "silent_since_ms"}
        self.hub.publish("status", {"board": board, "status": view.status})
        log.info("board %s: heard again after its silence", board)
        for outage in self.outages.back(board):
            self.change_alert(
                outage.alert_id, status="cleared", detail_add={"cleared": "heard_again"}
            )

    def check(self, *, now_ms: int, since_ms: int, after_ms: int) -> list[str]:
        """Mark the boards online by their status but silent for ``after_ms`` as unknown since
        their last message, and alert (silence.py); returns them."""
        found = silent_now(
            list(self.boards.values()),
            now_ms=now_ms, since_ms=since_ms, after_ms=after_ms, judged=set(self.probe_targets()),
        )  # fmt: skip
        for view in found:
            assert view.status is not None
            since = max(view.heard_ms or 0, since_ms)
            node, session = str(view.status["node"]), int(view.status["session"])
            view.status = {**view.status, "silent_since_ms": since}
            self.hub.publish("status", {"board": view.board, "status": view.status})
            log.warning("board %s: online by its status but silent since %d", view.board, since)
            detail = {"node": node, "session": session, "since_ms": since}
            spec = alert_rules.AlertSpec(
                f"silent:{view.board}:{session}:{since}", "board_silent", view.board, now_ms,
                detail=detail,
            )  # fmt: skip
            self.outage(view.board, (node, session, "silent"), spec, now_ms)
        return [v.board for v in found]
