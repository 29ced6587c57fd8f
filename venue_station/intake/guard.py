"""What a node may say, checked before anything is stored (issue 12, docs/security.md).

- ``DropLog``: a dropped message is counted by kind at once and logged at most once a second
  per kind (with how many were not logged), so a flood of bad messages cannot flood the log.
- ``FloodGate``: a token bucket per board. A clock produces a few events a second at most
  (a press, its state, now and then a proposal); a board past ``rate`` messages a second
  sustained, after a ``burst`` (a whole game's replay fits), is throttled: its messages are
  dropped and counted, the arbiter is alerted, the other boards are not touched.
- ``Authority``: each game is bound to its board(s) (the pairing, and every ``set_game`` the
  station sent: a carry-over to a spare clock); an event naming another board's game is
  refused. Decisions (a ``result``; a foul or forfeit confirmed or dismissed) count only when
  they carry the ``txn`` of a decision command the station sent to that board and say what
  that command asked, once (``asks.py``); otherwise they are stored as proposals
  (``status: pending``, ``unverified: true``) that decide nothing.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from clock_service.regulation import Regulation
from venue_station.intake.asks import Asks
from venue_station.live.metrics import Metrics
from wire_contract.messages import EventEnvelope

__all__ = ["DECISIONS", "Authority", "DropLog", "FloodGate", "is_decision"]

log = logging.getLogger("venue_station.intake.ingest")

# Sustained messages a second one board may send, and the burst above it (a game's replay
# after an outage: ~300 moves, each an event and a state, fits).
FLOOD_RATE_PER_S = 20.0
FLOOD_BURST = 1500
DECISIONS = ("result", "foul", "forfeit")


class DropLog:
    def __init__(self, metrics: Metrics, *, every_s: float = 1.0) -> None:
        self.metrics = metrics
        self.every_s = every_s
        self._last: dict[str, float] = {}
        self._quiet: dict[str, int] = {}

    def drop(self, kind: str, topic: str, reason: str, *, what: str = "dropped") -> None:
        self.metrics.bad_payload(kind)
        now = time.monotonic()
        last = self._last.get(kind)
        if last is not None and now - last < self.every_s:
            self._quiet[kind] = self._quiet.get(kind, 0) + 1
            return
        self._last[kind] = now
        quiet = self._quiet.pop(kind, 0)
        more = f" ({quiet} more of this kind not logged)" if quiet else ""
        log.warning("%s a message on %s (%s): %s%s", what, topic, kind, reason[:300], more)


@dataclass
class _Bucket:
    tokens: float
    at: float
    throttled_since: float | None = None


@dataclass
class FloodGate:
    rate: float = FLOOD_RATE_PER_S
    burst: int = FLOOD_BURST
    _buckets: dict[str, _Bucket] = field(default_factory=dict)

    def admit(self, board: str, now: float | None = None) -> bool:
        """True when the board's message may pass; False while it floods."""
        now = time.monotonic() if now is None else now
        b = self._buckets.get(board)
        if b is None:
            b = self._buckets[board] = _Bucket(float(self.burst), now)
        b.tokens = min(float(self.burst), b.tokens + (now - b.at) * self.rate)
        b.at = now
        if b.tokens >= 1.0:
            b.tokens -= 1.0
            if b.throttled_since is not None and b.tokens >= self.burst / 2:
                b.throttled_since = None
            return True
        if b.throttled_since is None:
            b.throttled_since = now
        return False

    def throttled(self) -> list[str]:
        return sorted(board for board, b in self._buckets.items() if b.throttled_since is not None)


def is_decision(ev: EventEnvelope) -> bool:
    """A fact that decides a game or rules on a proposal (only the arbiter's commands may).
    A ``result`` still ``pending`` (a flag's proposed loss) is a proposal, not a decision: it
    is stored as the node journaled it."""
    if ev.type == "result":
        return ev.data.get("status") != "pending"
    return ev.type in ("foul", "forfeit") and ev.data.get("status") in ("confirmed", "dismissed")


class Authority:
    def __init__(self, regulation: Regulation | None = None) -> None:
        self.game_boards: dict[str, set[str]] = {}
        self.asks = Asks(regulation)

    def load(
        self,
        games: dict[str, str],
        commands: list[dict[str, Any]],
        rulings: list[dict[str, Any]],
    ) -> None:
        for game, board in games.items():
            self.bind(game, board)
        self.asks.load(commands, rulings)

    def bind(self, game: str, board: str) -> None:
        self.game_boards.setdefault(game, set()).add(board)

    def sent(
        self, txn: str, board: str | None, cmd: str, args: dict[str, Any], user: str | None = None
    ) -> None:
        self.asks.sent(txn, board, cmd, args, user)

    def may_name(self, board: str, game: str | None) -> bool:
        """A board may report a game the station bound to it, or one it never paired."""
        if game is None:
            return True
        boards = self.game_boards.get(game)
        return boards is None or board in boards

    def judge(self, board: str, ev: EventEnvelope) -> EventEnvelope:
        """A decision as it is to be stored: as it came when its txn asked it, else a proposal.
        Anything else is noted (a proposal to rule on)."""
        key = (board, ev.session, ev.seq)
        if not is_decision(ev):
            self.asks.note(key, ev.game, ev.type, ev.data)
            return ev
        if self.asks.judge(ev.txn, key, ev.game, ev.type, ev.data):
            return ev
        proposal = self.as_proposal(ev)
        self.asks.note(key, proposal.game, proposal.type, proposal.data)
        return proposal

    @staticmethod
    def as_proposal(ev: EventEnvelope) -> EventEnvelope:
        data: dict[str, Any] = {**ev.data, "status": "pending", "unverified": True}
        return ev.model_copy(update={"data": data})
