"""Commands to the boards: a fresh txn, publish, wait for the reply(ies), log it all.

A board command waits for that board's reply; a venue command waits for a reply from every
board online when it was sent. A reply whose txn the station did not send (or that comes from
another board than the one asked) is ignored, logged and counted.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from venue_station.live.metrics import Metrics
from venue_station.store.database import Store
from wire_contract.messages import Command, Reply, Topics, WireError, decode, encode, parse_command
from wire_contract.wallclock import wall_ms

__all__ = ["BOARD_OUTCOMES", "NOT_NEEDED", "CommandBus", "CommandResult", "board_outcome"]

log = logging.getLogger(__name__)
Publish = Callable[[str, bytes], Awaitable[None]]


# What a board that says no to a venue command may mean by it: nothing was needed (a finished
# game needs no pause; a spare board with no game needs no start). Not a refusal.
NOT_NEEDED: dict[str, frozenset[str]] = {
    "pause": frozenset({"finished", "already_paused", "no_game"}),
    "resume": frozenset({"finished", "already_running", "no_game"}),
    "start": frozenset({"finished", "already_started", "no_game"}),
}
BOARD_OUTCOMES = ("done", "not_needed", "refused", "no_answer")


def reply_code(reply: dict[str, Any]) -> str | None:
    """A reply's code; for a node that predates codes, read from its English reason."""
    if reply.get("code"):
        return str(reply["code"])
    error = str(reply.get("error") or "")
    if "(finished)" in error or error == "the game is finished":
        return "finished"
    if error.startswith("no game is set"):
        return "no_game"
    return None


def board_outcome(cmd: str, reply: dict[str, Any] | None) -> str:
    """done | not_needed | refused | no_answer of one board's reply to ``cmd``."""
    if reply is None:
        return "no_answer"
    if reply["ok"]:
        return "done"
    return "not_needed" if reply_code(reply) in NOT_NEEDED.get(cmd, ()) else "refused"


@dataclass
class CommandResult:
    txn: str
    cmd: str
    board: str | None
    # "ok" (every board did it or needed nothing) | "rejected" (a board refused) | "timeout"
    # (a board did not answer) | "sent" (not waited for)
    outcome: str
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def boards(self) -> list[dict[str, Any]]:
        """Each board's outcome (done, not_needed, refused, no_answer) with its code."""
        out: list[dict[str, Any]] = []
        for board in sorted({*self.replies, *self.missing}, key=_board_order):
            reply = self.replies.get(board)
            row: dict[str, Any] = {"board": board, "outcome": board_outcome(self.cmd, reply)}
            if reply is not None and not reply["ok"]:
                row["code"] = reply_code(reply)
                row["args"] = reply.get("args") or {}
                row["error"] = reply.get("error")
            out.append(row)
        return out

    def as_dict(self) -> dict[str, Any]:
        boards = self.boards()
        out: dict[str, Any] = {
            "txn": self.txn,
            "cmd": self.cmd,
            "board": self.board,
            "outcome": self.outcome,
            "ok": self.ok,
            "replies": self.replies,
            "missing": self.missing,
            "summary": {k: sum(1 for b in boards if b["outcome"] == k) for k in BOARD_OUTCOMES},
            "boards": boards,
        }
        if self.board is not None:
            reply = self.replies.get(self.board)
            out["error"] = reply.get("error") if reply else None
            out["code"] = reply_code(reply) if reply and not reply["ok"] else None
            out["args"] = (reply.get("args") or {}) if reply and not reply["ok"] else {}
        return out


def _board_order(board: str) -> tuple[int, int, str]:
    return (0, int(board), board) if board.isdigit() else (1, 0, board)


@dataclass
class _Pending:
    board: str | None
    expect: set[str]
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)
    done: asyncio.Event = field(default_factory=asyncio.Event)


class CommandBus:
    def __init__(
        self, topics: Topics, store: Store, metrics: Metrics, *, timeout_s: float = 3.0
    ) -> None:
        self.topics = topics
        self.store = store
        self.metrics = metrics
        self.timeout_s = timeout_s
        self.publish: Publish | None = None  # set by the collector while connected
        # A decision command's txn signed with the station's key (intake/signed_txn.py): what
        # a new station trusts on the boards' replay after this one's disk is lost. It is
        # signed for the game the board plays (``playing``): the board's state says it, but
        # the reply to a ``set_game`` comes before the state after it, so the game this bus
        # last set (or reset) on a board is the one its next decision is of.
        self.sign: Callable[[str, str, dict[str, Any], str | None], str | None] | None = None
        self.board_game: Callable[[str], str | None] = lambda board: None
        self._games_set: dict[str, str | None] = {}
        # Told of every txn and what it asks before it is published (the ingest's authority:
        # only an event that says what a decision command asked decides a game).
        self.on_sent: Callable[[str, str | None, str, dict[str, Any], str | None], None] | None = (
            None
        )
        self._pending: dict[str, _Pending] = {}
        self._expired: dict[str, float] = {}
        self._unwaited: dict[str, str | None] = {}  # txn -> board, for commands not waited for

    @staticmethod
    def validate(cmd: str, args: dict[str, Any], *, venue_wide: bool = False) -> None:
        """Raise ``WireError`` for a command the boards would refuse anyway (before sending)."""
        parse_command(encode(Command(txn="check", cmd=cmd, args=args)), venue_wide=venue_wide)

    async def send(
        self,
        board: str | None,
        cmd: str,
        args: dict[str, Any] | None = None,
        *,
        user: str | None = None,
        expect: Collection[str] = (),
        wait: bool = True,
        timeout_s: float | None = None,
    ) -> CommandResult:
        """Send ``cmd`` to ``board`` (None: the venue topic) and wait for the replies."""
        args = dict(args or {})
        self.validate(cmd, args, venue_wide=board is None)
        if self.publish is None:
            raise ConnectionError("the station is not connected to the broker")
        signed = None
        if self.sign is not None and board:
            signed = self.sign(board, cmd, args, self.playing(board))
        txn = signed or f"st-{secrets.token_hex(8)}"
        expected = {board} if board is not None else set(expect)
        pending = _Pending(board, expected)
        if wait:
            self._pending[txn] = pending
        else:
            self._unwaited[txn] = board
        topic = self.topics.cmd(board) if board is not None else self.topics.venue_cmd
        if self.on_sent is not None:
            self.on_sent(txn, board, cmd, args, user)
        await self.store.log_command(
            {
                "txn": txn,
                "board": board,
                "cmd": cmd,
                "args": args,
                "user": user,
                "sent_ms": wall_ms(),
                "replies": None,
                "outcome": "sent",
            }
        )
        try:
            await self.publish(topic, encode(Command(txn=txn, cmd=cmd, args=args)))
            if not wait:
                return CommandResult(txn, cmd, board, "sent")
            if expected:
                # asyncio.timeout, not wait_for: on 3.11 wait_for swallows a cancellation that
                # lands in the same pass as the reply (gh-86296), and a stop would hang on it.
                try:
                    async with asyncio.timeout(timeout_s or self.timeout_s):
                        await pending.done.wait()
                except TimeoutError:
                    pass
        finally:
            if wait:
                self._pending.pop(txn, None)
                self._expired[txn] = time.monotonic()
        missing = sorted(expected - set(pending.replies))
        if missing:
            outcome = "timeout"
        elif all(r["ok"] for r in pending.replies.values()) or (
            board is None
            and all(board_outcome(cmd, r) != "refused" for r in pending.replies.values())
        ):
            # Venue-wide, a board that needed nothing (a finished game's pause, a spare
            # board's start) is no refusal; a board asked by name says what it did.
            outcome = "ok"
        else:
            outcome = "rejected"
        self.metrics.commands[outcome] += 1
        if board is not None and cmd in ("set_game", "reset"):
            if outcome == "ok":
                self._games_set[board] = args.get("game") if cmd == "set_game" else None
            else:  # refused or unanswered: the board's state says what it plays
                self._games_set.pop(board, None)
        await self.store.finish_command(txn, outcome=outcome, replies=pending.replies)
        return CommandResult(txn, cmd, board, outcome, dict(pending.replies), missing)

    def playing(self, board: str) -> str | None:
        """The game ``board`` plays: the last this bus set on it, else its state's."""
        if board in self._games_set:
            return self._games_set[board]
        return self.board_game(board)

    def on_reply(self, board: str, payload: bytes) -> None:
        try:
            reply = decode(Reply, payload)
        except WireError as exc:
            self.metrics.bad_payload("bad_reply")
            log.warning("dropped a reply from board %s: %s", board, exc)
            return
        if reply.txn in self._unwaited and self._unwaited[reply.txn] in (None, board):
            if self._unwaited[reply.txn] is not None:
                del self._unwaited[reply.txn]
            log.debug(
                "board %s: reply to %s: ok=%s %s", board, reply.txn, reply.ok, reply.error or ""
            )
            return
        pending = self._pending.get(reply.txn)
        if pending is None or (pending.board is not None and pending.board != board):
            if reply.txn in self._expired:
                self.metrics.bad_payload("late_reply")
                log.warning("board %s replied to txn %s after the time-out", board, reply.txn)
            else:
                self.metrics.bad_payload("unsolicited_reply")
                log.warning(
                    "board %s sent a reply to txn %r the station never sent", board, reply.txn
                )
            return
        pending.replies[board] = {"ok": reply.ok, "error": reply.error}
        if reply.code is not None:
            pending.replies[board].update(code=reply.code, args=reply.args or {})
        if pending.expect and pending.expect <= set(pending.replies):
            pending.done.set()
        if len(self._expired) > 10_000:
            self._expired.clear()
