"""What a node may say, checked before anything is stored (issue 12, docs/security.md).

- ``DropLog``: a dropped message is counted by kind at once and logged at most once a second
  per kind (with how many were not logged), so a flood of bad messages cannot flood the log.
- ``FloodGate``: a token bucket per board. A clock produces a few events a second at most
  (a press, its state, now and then a proposal); a board past ``rate`` messages a second
  sustained, after a ``burst`` (a whole game's replay fits), is throttled: its messages are
  dropped and counted, the arbiter is alerted, the other boards are not touched.
- ``AskedReplays``: the station's own ``rebirth`` asks. The events that answer one (``replay:
  true``, from the seq asked, each seq once and in order, while the replay flows) pass the
  flood gate: rebuilding a fresh station from a long journal is not an attack (issue 28); the
  node paces its replay instead (board_nodes/link.py).
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
from venue_station.intake.signed_txn import SIGNED_BY, STATION_SET, TxnSigner
from venue_station.live.metrics import Metrics
from wire_contract.messages import EventEnvelope

__all__ = ["DECISIONS", "AskedReplays", "Authority", "DropLog", "FloodGate", "is_decision"]

log = logging.getLogger("venue_station.intake.ingest")

# Sustained messages a second one board may send, and the burst above it (a game's replay
# after an outage: ~300 moves, each an event and a state, fits).
FLOOD_RATE_PER_S = 20.0
FLOOD_BURST = 1500
DECISIONS = ("result", "foul", "forfeit")
# An ask stays open this long without a replayed event (the node's first answer, a pause);
# at most this many events answer one ask (a node keeps 20,000: board_nodes/config.py).
REPLAY_OPEN_S = 10.0
REPLAY_MAX_PER_ASK = 100_000


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


@dataclass
class _Ask:
    next_seq: int  # the lowest seq still welcome (each seq once, in order)
    at: float  # when asked, or the last replayed event came
    left: int = REPLAY_MAX_PER_ASK


@dataclass
class AskedReplays:
    open_s: float = REPLAY_OPEN_S
    _asks: dict[str, _Ask] = field(default_factory=dict)
    admitted: int = 0

    def asked(self, board: str, from_seq: int, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._asks[board] = _Ask(next_seq=max(1, from_seq), at=now)

    def is_open(self, board: str, now: float | None = None) -> bool:
        ask = self._asks.get(board)
        if ask is None:
            return False
        now = time.monotonic() if now is None else now
        if now - ask.at > self.open_s or ask.left <= 0:
            del self._asks[board]
            return False
        return True

    def admit(self, board: str, seq: int, now: float | None = None) -> bool:
        """True when a ``replay`` event with ``seq`` answers the open ask (it then passes
        the flood gate); anything else goes through the gate as usual."""
        now = time.monotonic() if now is None else now
        ask = self._asks.get(board)
        if ask is None or not self.is_open(board, now) or seq < ask.next_seq:
            return False
        ask.next_seq, ask.at, ask.left = seq + 1, now, ask.left - 1
        self.admitted += 1
        return True

    def flowing(self, board: str, now: float | None = None, *, within_s: float = 2.0) -> bool:
        """Asked less than ``within_s`` ago, or a replayed event came since: asking again
        would only start the replay over (its events then dropped as repeats)."""
        ask = self._asks.get(board)
        now = time.monotonic() if now is None else now
        return ask is not None and now - ask.at < within_s


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
        # The station's decision key (signed_txn.py): a txn it signed and never logged (its
        # predecessor's, before a lost disk) is taken as its own ask when the event says it.
        self.signer: TxnSigner | None = None
        self.adopted = 0

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
        if ev.type == "ready":
            ev = self.pairing(board, ev)
        if not is_decision(ev):
            self.asks.note(key, ev.game, ev.type, ev.data)
            return ev
        if ev.txn is not None and self.signer is not None and not self.asks.knows(ev.txn):
            adopted = self.signer.ask_of(ev.txn, board, ev.game, ev.type, ev.data)
            if adopted is not None:
                self.asks.sent(ev.txn, board, adopted[0], adopted[1], SIGNED_BY)
                self.adopted += 1
        if self.asks.judge(ev.txn, key, ev.game, ev.type, ev.data):
            return ev
        proposal = self.as_proposal(ev)
        self.asks.note(key, proposal.game, proposal.type, proposal.data)
        return proposal

    def pairing(self, board: str, ev: EventEnvelope) -> EventEnvelope:
        """A ``ready`` event as stored: ``STATION_SET`` true only when its txn is this
        station's signed ``set_game`` for the game and players it says (what a rebuild makes a
        round from, ``domain/rebuild.py``); whatever a board put there itself is dropped."""
        data = {k: v for k, v in ev.data.items() if k != STATION_SET}
        asked = {"game": data.get("game"), "red": data.get("red"), "black": data.get("black")}
        if self.signer is not None and self.signer.signed(ev.txn, board, "set_game", asked):
            data[STATION_SET] = True
        return ev.model_copy(update={"data": data})

    @staticmethod
    def as_proposal(ev: EventEnvelope) -> EventEnvelope:
        data: dict[str, Any] = {**ev.data, "status": "pending", "unverified": True}
        return ev.model_copy(update={"data": data})
