"""What an arbiter's confirm / dismiss of an alert tells the board (pure; no I/O).

The system detects and proposes; the arbiter decides (DESIGN.md §3.5). An alert is raised by
the fact that caused it (a ``flag``, a ``late``, a ``shutdown`` …), but the board's proposal
it carries is a later event of its own seq (the flag's pending ``result``, the lateness's
pending ``forfeit``). ``plan_ruling`` finds that proposal among the game's events and says
which command settles it, or why the ruling is refused (a code the pages translate):

- ``already_ruled``: the alert, or the proposal it carries, is ruled already;
- ``already_decided``: confirming would decide a game that already has a confirmed result;
- ``no_proposal``: the board has not (yet) sent the proposal this alert carries.

Alerts that carry no proposal (a board lost, an offset, a clock rebooted) are only closed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from venue_station.errors import StationError

__all__ = ["RULED", "Ruling", "RulingRefused", "decides", "plan_ruling"]

RULED = ("confirmed", "dismissed")
_STATUS = {"confirm": "confirmed", "dismiss": "dismissed"}
# The alert kinds whose proposal is the event that raised them.
_SELF = ("foul_pending", "forfeit_pending")
MOVE_LIMIT_DRAW = "move_limit_draw"


class RulingRefused(StationError, ValueError):
    """The ruling cannot be made: ``code`` (for the page to translate) and its ``args``."""

    def __init__(self, code: str, message: str, **args: Any) -> None:
        super().__init__(message)
        self.code, self.message, self.args_ = code, message, args


@dataclass(frozen=True)
class Ruling:
    """The alert's new status, and the command that tells the board (None: nothing to tell)."""

    status: str
    cmd: str | None = None
    args: dict[str, Any] = field(default_factory=dict)


def _pending(ev: Mapping[str, Any]) -> bool:
    return ev["data"].get("status") == "pending" and not ev["data"].get("ref")


def _ruled(events: Sequence[Mapping[str, Any]], seq: int) -> str | None:
    """The status a later ruling (an event with ``ref`` = seq) gave the proposal, if any."""
    for ev in events:
        if ev["data"].get("ref") == seq and ev["data"].get("status") in RULED:
            return str(ev["data"]["status"])
    return None


def _first(
    events: Sequence[Mapping[str, Any]], type_: str, *, after: int, **match: Any
) -> Mapping[str, Any] | None:
    for ev in events:
        if ev["type"] != type_ or ev["seq"] <= after or not _pending(ev):
            continue
        if all(ev["data"].get(k) == v for k, v in match.items()):
            return ev
    return None


def _proposal(alert: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> Any:
    """The pending proposal event the alert carries (None: not arrived or none)."""
    kind, seq = alert["kind"], int(alert["seq"] or 0)
    if kind in _SELF or (kind == "warning" and alert["detail"].get("status") == "pending"):
        return next((ev for ev in events if ev["seq"] == seq), None)
    if kind == "flag":
        return _first(events, "result", after=seq, reason="flag")
    if kind == "late":
        return _first(events, "forfeit", after=seq, reason="late", side=alert["side"])
    if kind == "shutdown":
        return _first(events, "forfeit", after=seq, reason="power_switch")
    return None


def decides(alert: Mapping[str, Any]) -> bool:
    """Whether ruling ``alert`` decides anything: it carries a proposal (a foul, a forfeit, a
    flag's or a lateness's loss, a pending warning), a move limit's draw or a missing record's
    foul. The others only inform: confirming or dismissing one closes it, and the arbiter's
    page puts it away once acknowledged (arbiter.js ``decides``, pinned to this one by
    tests/web/test_informing_alerts.py)."""
    kind = alert["kind"]
    if kind in (*_SELF, "flag", "late", "shutdown", "move_limit", "record_missing"):
        return True
    detail = alert.get("detail") or {}
    return kind == "warning" and (
        detail.get("status") == "pending" or detail.get("reason") == "press_before_flag"
    )


def plan_ruling(
    alert: Mapping[str, Any],
    action: str,
    events: Sequence[Mapping[str, Any]],
    *,
    decided: bool,
) -> Ruling:
    """The ruling of ``action`` (ack | confirm | dismiss) on ``alert``, given the events of
    its game on its board (seq order) and whether the game has a confirmed result."""
    if alert["status"] in RULED:
        raise RulingRefused(
            "already_ruled", f"alert {alert['id']} is already {alert['status']}",
            status=alert["status"], by=alert.get("by") or "station",
        )  # fmt: skip
    if alert["status"] == "cleared" and alert["kind"] == "record_missing":
        # the chief's consent cleared the duty (record_duties.py): nothing is left to rule
        raise RulingRefused(
            "already_ruled", f"alert {alert['id']} is cleared", status=alert["status"],
            by=alert.get("by") or "station",
        )  # fmt: skip
    if action == "ack":
        return Ruling("acked")
    status = _STATUS[action]
    kind = alert["kind"]
    board_events = [ev for ev in events if ev.get("board", alert["board"]) == alert["board"]]
    if kind == "move_limit":
        if status == "dismissed":
            return Ruling(status)
        if decided:
            raise RulingRefused("already_decided", "the game already has a result")
        return Ruling(status, "result", {"winner": None, "reason": MOVE_LIMIT_DRAW})
    if kind == "warning" and alert["detail"].get("reason") == "press_before_flag":
        # The press was before the flag: confirming it takes the flag's loss away.
        if status == "dismissed":
            return Ruling(status)
        flag_loss = _first(board_events, "result", after=0, reason="flag")
        if flag_loss is None or _ruled(board_events, int(flag_loss["seq"])):
            raise RulingRefused("no_proposal", "there is no pending flag loss to take away")
        return Ruling(status, "resolve", {"seq": int(flag_loss["seq"]), "status": "dismissed"})
    carries = kind in (*_SELF, "flag", "late", "shutdown") or (
        kind == "warning" and alert["detail"].get("status") == "pending"
    )
    if not carries:
        # it informs, or (a missing record) its status is the decision: nothing to tell a board
        return Ruling(status)
    proposal = _proposal(alert, board_events)
    if proposal is None:
        raise RulingRefused("no_proposal", f"the board has sent no proposal for this {kind}")
    seq = int(proposal["seq"])
    earlier = _ruled(board_events, seq)
    if earlier is not None:
        raise RulingRefused(
            "already_ruled", f"the board's proposal {seq} is already {earlier}", status=earlier,
            by="",
        )  # fmt: skip
    decides = proposal["type"] in ("result", "forfeit")
    if status == "confirmed" and decides and decided:
        raise RulingRefused("already_decided", "the game already has a result")
    return Ruling(status, "resolve", {"seq": seq, "status": status})
