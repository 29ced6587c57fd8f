"""Journals one board's events: each in the contract's envelope, numbered by the journal.

The board decides what happened (``Board.emit``); this puts it in its envelope and hands it to
the journal (journal.py), which gives it its ``seq`` and keeps it, with the checkpoint it
leads to, until the link has published it. The envelope is built and checked by the
contract's model: a field the contract does not know fails here, on the node, not silently
at the station.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from board_nodes.journal import Journal
from board_nodes.timesource import NodeTime
from wire_contract import messages as wire
from wire_contract.wallclock import wall_ms

__all__ = ["EventRecorder"]

log = logging.getLogger(__name__)


class EventRecorder:
    """Numbers, dates and journals one board's events; knows the last one's ``seq``."""

    def __init__(
        self, journal: Journal, *, board_id: str, node: str, session: int, now: NodeTime
    ) -> None:
        self._journal = journal
        self._board_id = board_id
        self._now = now
        # who says it, in every envelope of this board's events
        self._sender: dict[str, Any] = {"board": board_id, "node": node, "session": session}
        self.last_seq = journal.board(board_id).last_seq
        # (seq, ts) of the latest event if it was dated before its publication
        self.dated: tuple[int, int] | None = None
        # The station's command being applied: the events it causes carry its txn, which is
        # what lets the station tell an arbiter's decision from a board's proposal.
        self.txn: str | None = None
        # What the journal holds: the checkpoint of the last event it took, and how many
        # events were offered to it (a command that failed part-way is rolled back to the
        # former when it got as far as offering one: commands.py)
        self.last_checkpoint: dict[str, Any] | None = None
        self.offered = 0

    @contextlib.contextmanager
    def applying(self, txn: str | None) -> Iterator[None]:
        self.txn = txn
        try:
            yield
        finally:
            self.txn = None

    def record(
        self,
        type_: str,
        data: dict[str, Any],
        *,
        at_ns: int | None,
        game: str | None,
        checkpoint: dict[str, Any],
        clock: wire.ClockPart,
    ) -> dict[str, Any]:
        """Journal one event dated at ``at_ns`` (else now) and return its payload."""
        self.offered += 1
        instant = self._now() if at_ns is None else at_ns
        ts = self._now.wall_ms_of(instant)

        event: dict[str, Any] = {"game": game, "ts": ts, "type": type_, "clock": clock}

        def build(seq: int) -> dict[str, Any]:  # the journal numbers it
            envelope = wire.EventEnvelope(**self._sender, **event, seq=seq, data=data, txn=self.txn)
            return wire.to_payload(envelope)

        payload = self._journal.record(
            self._board_id, build, checkpoint=checkpoint, wall_ms=wall_ms(),
            urgent=type_ == "flag",  # the arbiter waits for it: on disk at once where it can
        )  # fmt: skip
        self.last_seq = payload["seq"]
        self.last_checkpoint = checkpoint
        # An event dated before its publication: the state right after it says that instant
        # too (the flag's state is as of its deadline), until the next event.
        self.dated = (self.last_seq, ts) if self._now.lag_ms(instant) > 0 else None
        log.info("board %s seq %d %s %s", self._board_id, self.last_seq, type_, data)
        return payload
