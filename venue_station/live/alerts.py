"""Alerts for the arbiters, derived from events and board status (pure; the collector stores them).

Each alert has a key made from the fact that raised it (board, session, seq or status ts), so a
replayed event or a re-delivered retained status never raises it twice. Status of an alert:
``open`` → ``acked`` → ``confirmed`` | ``dismissed``; a ruling event from the board (a foul,
forfeit, result or warning with ``ref``) settles the matching pending alert by itself: the
proposal's own (``foul_pending``, ``forfeit_pending``, a pending ``warning``) or the one its
cause raised (``flag``, ``late``, ``shutdown``; these carry their proposal, so a lateness or a
switched-off clock raises one alert, not a second ``forfeit_pending`` beside it).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wire_contract.messages import BoardStatus, EventEnvelope

__all__ = [
    "ALERT_KINDS",
    "ALERT_STATUSES",
    "AlertLedger",
    "AlertSpec",
    "alert_for_status",
    "alerts_for_event",
    "broker_down_alert",
    "fact_alert",
    "identity_clash_alert",
    "ruling_of",
    "seq_clash_alert",
    "settled_alert_kind",
    "store_failing_alert",
    "unverified_alert",
]

ALERT_KINDS = (
    "flag",
    "foul_pending",
    "forfeit_pending",
    "shutdown",
    "node_restart",
    "late",
    "move_limit",
    "board_offline",
    "board_lost",
    "journal_failing",
    "broker_down",
    "board_silent",
    "store_failing",
    "unverified_decision",
    "warning",
    "clock_offset",
    "gap",
    "flood",
    "set_aside",
    # 录谱: a required record missing (or late) when its grace ended; carries the profile's
    # pending not_recording foul against the responsible player (domain/record_duties.py)
    "record_missing",
    # two node processes connected as one node's boards (a cloned SD card): the node says so
    # in its status (``clash``, board_nodes/identity_clash.py); one alert a node a day
    "identity_clash",
    # events on numbers the station holds for other events (a Pi replaced when the broker had
    # lost what it retained: intake/ingest_writer.py): kept aside, one alert a board and session
    "seq_clash",
)
# "cleared": closed by the station because its cause is gone (a board back online, a clock
# back in time; intake/outages.py), not ruled by anyone.
ALERT_STATUSES = ("open", "acked", "confirmed", "dismissed", "cleared")


@dataclass(frozen=True)
class AlertSpec:
    key: str
    kind: str
    board: str
    ts: int
    game: str | None = None
    side: str | None = None
    seq: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def row(self, now: int) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "board": self.board,
            "game": self.game,
            "side": self.side,
            "seq": self.seq,
            "ts": self.ts,
            "status": "open",
            "detail": self.detail,
            "updated_ms": now,
            "by": None,
        }


class AlertLedger:
    """Which alerts exist, and the id of the next one: the station decides an alert (and shows
    it) the moment its fact arrives, before the store has it.

    The station is the only writer of alerts, so after ``load`` the ledger knows every key the
    store holds; a key seen again (a replay, a re-delivered status) decides nothing. An alert
    stays ``unstored`` until the writer commits it, so the API can still find it meanwhile.
    """

    def __init__(self) -> None:
        self._keys: set[str] = set()
        self._next_id = 1
        self._unstored: dict[int, dict[str, Any]] = {}

    def load(self, keys: set[str], max_id: int) -> None:
        self._keys = set(keys)
        self._next_id = max_id + 1

    def decide(self, spec: AlertSpec, now: int) -> dict[str, Any] | None:
        """The new alert's row (with its id), or None when its key is already known."""
        if spec.key in self._keys:
            return None
        self._keys.add(spec.key)
        row = {"id": self._next_id, **spec.row(now)}
        self._next_id += 1
        self._unstored[row["id"]] = row
        return row

    def has(self, key: str) -> bool:
        """Is there an alert (or a note) with this key already?"""
        return key in self._keys

    def know(self, key: str) -> bool:
        """Note a key without raising an alert for it (a board that joined another alert);
        False when it was known already."""
        if key in self._keys:
            return False
        self._keys.add(key)
        return True

    def stored(self, ids: list[int]) -> None:
        for i in ids:
            self._unstored.pop(i, None)

    def is_unstored(self, alert_id: int) -> bool:
        return alert_id in self._unstored

    def unstored(self) -> list[dict[str, Any]]:
        """Decided but not yet committed, newest first."""
        return [dict(row) for row in reversed(self._unstored.values())]


def alerts_for_event(ev: EventEnvelope) -> list[AlertSpec]:
    spec = _event_alert(ev.board, ev.session, ev.seq, ev.ts, ev.game, ev.type, ev.data)
    return [] if spec is None else [spec]


def fact_alert(row: Mapping[str, Any]) -> AlertSpec | None:
    """The alert a stored event row raised (or would have): the record counts' restart."""
    return _event_alert(
        str(row["board"]), int(row["session"]), int(row["seq"]), int(row["ts"]),
        row["game"], str(row["type"]), dict(row["data"]),
    )  # fmt: skip


def _event_alert(
    board: str, session: int, seq: int, ts: int, game: str | None, type_: str, data: dict[str, Any]
) -> AlertSpec | None:
    kind: str | None = None
    side = data.get("side")
    detail = dict(data)
    if type_ == "flag":
        kind = "flag"
    elif type_ == "foul" and data["status"] == "pending":
        kind = "foul_pending"
    elif type_ == "forfeit" and data["status"] == "pending" and not _carried(data):
        kind = "forfeit_pending"
    elif type_ == "shutdown" and not data["authorised"]:
        kind = "shutdown" if data["cause"] == "power_switch" else "node_restart"
        side = data.get("side_on_move")
    elif type_ == "late":
        kind = "late"
    elif type_ == "move_count" and data["status"] == "reached":
        kind = "move_limit"
        detail["count"] = "presses"  # the clock's count (a record's: domain/record_counts.py)
    elif type_ == "warning":
        kind = "warning"
        if data.get("reason") == "draw_too_early":
            detail["count"] = "presses"
    if kind is None:
        return None
    key = f"ev:{board}:{session}:{seq}:{kind}"
    return AlertSpec(key, kind, board, ts, game, side, seq, detail)


def _carried(data: dict[str, Any]) -> bool:
    """A pending forfeit whose cause raised its own alert, which carries it (one decision,
    one alert): a lateness (``late``), a clock switched off (``shutdown``)."""
    return bool(data.get("reason") in ("late", "power_switch") and not data.get("ref"))


def ruling_of(ev: EventEnvelope) -> tuple[int, str] | None:
    """(seq of the pending fact, new status) when the event rules on an earlier proposal
    (a foul, a forfeit, a proposed result, a pending warning)."""
    if ev.type not in ("foul", "forfeit", "result", "warning") or not ev.data.get("ref"):
        return None
    if ev.data.get("status") in ("confirmed", "dismissed"):
        return int(ev.data["ref"]), str(ev.data["status"])
    return None


def settled_alert_kind(ev_type: str, data: dict[str, Any]) -> str | None:
    """The alert kind, raised by the cause, that a ruling on its proposal settles: a flag's
    loss ruled settles the ``flag`` alert, a lateness forfeit the ``late`` alert (of that
    side), a switched-off clock's forfeit the ``shutdown`` alert."""
    reason = data.get("reason")
    if ev_type == "result" and reason == "flag":
        return "flag"
    if ev_type == "forfeit" and reason == "late":
        return "late"
    if ev_type == "forfeit" and reason == "power_switch":
        return "shutdown"
    return None


def alert_for_status(
    board: str, status: BoardStatus, *, received_ms: int | None = None
) -> AlertSpec | None:
    """``board_offline``/``board_lost`` for a status that says so. A will (``lost``) is stamped
    when its connection was made, not when it was lost: the alert is dated by its arrival."""
    if status.state == "online":
        if status.journal != "failing":
            return None
        # The board's node cannot write its journal: its clocks run, but its events wait on
        # the node (not published) until the card has room again. One alert per connection.
        key = f"jf:{board}:{status.session}:{status.conn or status.ts}"
        return AlertSpec(
            key, "journal_failing", board, received_ms or status.ts,
            detail={"node": status.node, "session": status.session},
        )  # fmt: skip
    kind = "board_offline" if status.state == "offline" else "board_lost"
    key = f"st:{board}:{status.session}:{status.state}:{status.ts}"
    when = received_ms if status.state == "lost" and received_ms is not None else status.ts
    detail: dict[str, Any] = {"node": status.node, "session": status.session}
    if status.conn is not None:
        detail["conn"] = status.conn
    return AlertSpec(key, kind, board, when, detail=detail)


def identity_clash_alert(board: str, status: BoardStatus, received_ms: int) -> AlertSpec:
    """Another node process is connected as ``status.node`` (its boards taken from each other):
    one alert for the node a day, not one per takeover."""
    day = time.strftime("%Y%m%d", time.localtime(received_ms / 1000))  # the hall's day, not UTC's
    key = f"clash:{status.node}:{day}"
    return AlertSpec(key, "identity_clash", board, received_ms, detail={"node": status.node})


def seq_clash_alert(board: str, session: int, node: str, at_ms: int) -> AlertSpec:
    """A node publishes events on (board, session, seq) the station holds with other events:
    one alert a board and session (the node named is the first one's: a name is the sender's
    word, so it is no part of the key); the events are kept aside."""
    detail = {"node": node, "session": session}
    return AlertSpec(f"seqclash:{board}:{session}", "seq_clash", board, at_ms, detail=detail)


def store_failing_alert(venue: str, since_ms: int, error: str | None) -> AlertSpec:
    """The store refuses writes (a full disk, a failing writer): one alert per spell, stored
    once it writes again (it is on the pages at once)."""
    detail = {"venue": venue, "error": (error or "")[:200]}
    return AlertSpec(f"store:{since_ms}", "store_failing", "*", since_ms, detail=detail)


def unverified_alert(ev: EventEnvelope) -> AlertSpec:
    """A decision a node says was made (a confirmed result, foul, forfeit) that no command of
    this station asked: stored as a proposal, ``unverified`` (a replay into a new station);
    the arbiter confirms it again or enters the right one."""
    detail: dict[str, Any] = {
        k: ev.data[k] for k in ("winner", "side", "reason", "ref") if k in ev.data
    }
    return AlertSpec(
        f"unverified:{ev.board}:{ev.session}:{ev.seq}", "unverified_decision", ev.board, ev.ts,
        ev.game, ev.data.get("side"), ev.seq, {"type": ev.type, **detail},
    )  # fmt: skip


def broker_down_alert(venue: str, since_ms: int) -> AlertSpec:
    """The station lost its broker: no board's news arrives, every clock shown is stale. One
    alert per outage (keyed by its start); the board field names the venue (no one board)."""
    return AlertSpec(f"broker:{since_ms}", "broker_down", "*", since_ms, detail={"venue": venue})
