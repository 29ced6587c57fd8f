"""The venues' game records, checked and forwarded to the public pages (issue 29).

A venue's station publishes a board's whole record on ``qz/v1/{venue}/station/record/{board}``
(retained at the venue, wire ``GameRecord``); the bridge delivers it to the centre as the
subject ``{prefix}.qz.v1.{venue}.station.record.{board}``. Nothing from a venue is trusted: each
payload is decoded against the contract's bounds and the moves are replayed by
``clock_service.xiangqi`` from the start position. A payload that fails is counted (by reason)
and dropped. A good one becomes the public view (the position after the last move as ten rows
of FEN letters, every move in Chinese notation with its clock, at most ``MAX_PAYLOAD_BYTES``
as JSON: the public page's own bound), kept per board (at most
``max_boards``; past it new boards are counted and dropped) and published on
``{prefix}.live.{venue}.record.{board}``, which the public account may read and no venue account
may write. ``GET /api/live/records`` hands a newly opened page the views kept.

Every hub process subscribes on its own (core NATS, not a stream): each publishes the same view
for the same record, and a page keeps the newest by ``ts`` and plies, so two hubs do no harm.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

import nats
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from clock_service.handicap import Handicap
from clock_service.side import Side
from clock_service.xiangqi import FenError, IllegalMove, Move, Position, chinese, wxf
from clock_service.xiangqi.record import after_move
from federation_hub.centre_conf import record_subjects
from federation_hub.errors import RecordError
from wire_contract.bounds import MAX_PAYLOAD_BYTES
from wire_contract.messages import WireError, check_id, decode
from wire_contract.records import GameRecord

__all__ = ["LiveRecords", "public_view"]

log = logging.getLogger(__name__)
REASONS = ("bad_subject", "bad_payload", "illegal_move", "too_many_boards")


class RecordRefused(RecordError):
    """A venue's game record the hub will not show; ``reason`` is the counter's name."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _rows(position: Position) -> list[str]:
    """Ten rows from Black's back rank (top) to Red's, nine FEN letters or '.' each."""
    return [
        "".join(position.squares[rank * 9 + file] or "." for file in range(9))
        for rank in range(9, -1, -1)
    ]


def public_view(venue: str, record: GameRecord) -> dict[str, Any]:
    """What the public page draws; raises ``RecordRefused`` for a move the rules refuse."""
    try:
        position = Position.from_fen(record.start_fen)
    except FenError as exc:
        raise RecordRefused("illegal_move", f"start_fen: {exc}") from None
    handicap = None if record.handicap is None else Handicap.parse(record.handicap.model_dump())
    made = {Side.RED: 0, Side.BLACK: 0}  # each side's moves, for a 让二先 receiver's given ones
    moves = []
    for ply, (text, clock) in enumerate(zip(record.moves, record.clocks, strict=True), 1):
        try:
            move = Move.from_iccs(text)
            if not position.is_legal(move):
                raise IllegalMove(position.explain_illegal(move))
        except (IllegalMove, ValueError) as exc:
            raise RecordRefused("illegal_move", f"ply {ply} ({text}): {exc}") from None
        # [Chinese, WXF, used_ms, left_ms]: compact, so 360 plies stay under the page's 16 KiB bound
        times = (clock.used, clock.left) if clock else (None, None)
        moves.append([chinese(position, move), wxf(position, move), *times])
        mover = position.to_move
        position = after_move(position, move, handicap, made[mover])
        made[mover] += 1
    return {
        "venue": venue,
        "board": record.board,
        "game": record.game,
        "round": record.round,
        "ply": len(moves),
        "to_move": position.to_move.value,
        "rows": _rows(position),
        "last": [record.moves[-1][:2], record.moves[-1][2:]] if record.moves else None,
        "moves": moves,
        "ts": record.ts,
    }


def encode_view(view: dict[str, Any]) -> bytes:
    return json.dumps(view, ensure_ascii=False, separators=(",", ":")).encode()


class LiveRecords:
    """Subscribe to the venues' records, check them, keep and republish the public views."""

    def __init__(
        self,
        servers: Sequence[str],
        *,
        user: str,
        password: str,
        prefix: str = "fed",
        max_boards: int = 1000,
        name: str = "hub",
    ) -> None:
        self.servers, self.user, self.password = list(servers), user, password
        self.prefix = prefix.replace("/", ".")
        self.max_boards, self.name = max_boards, name
        self.views: dict[tuple[str, str], dict[str, Any]] = {}
        self.counts = {"records_forwarded": 0, **{f"records_dropped_{r}": 0 for r in REASONS}}
        self.ready = asyncio.Event()
        self._nc: NatsClient | None = None

    def counters(self) -> dict[str, int]:
        return dict(self.counts)

    def check(self, subject: str, data: bytes) -> dict[str, Any]:
        """The public view of one delivered record; ``RecordRefused`` says why not."""
        head = f"{self.prefix}.qz.v1."
        parts = subject[len(head) :].split(".") if subject.startswith(head) else []
        if len(parts) != 4 or parts[1:3] != ["station", "record"]:
            raise RecordRefused("bad_subject", f"{subject!r} is not a record subject")
        try:
            venue, board = check_id("venue", parts[0]), check_id("board", parts[3])
            record = decode(GameRecord, data)
        except WireError as exc:
            raise RecordRefused("bad_payload", str(exc)) from None
        if record.board != board:
            raise RecordRefused("bad_payload", f"board {record.board!r} on {board!r}'s subject")
        view = public_view(venue, record)
        if len(encode_view(view)) > MAX_PAYLOAD_BYTES:  # cannot happen within MAX_RECORD_PLIES
            raise RecordRefused("bad_payload", "the public view is over the payload bound")
        key = (venue, board)
        if key not in self.views and len(self.views) >= self.max_boards:
            raise RecordRefused("too_many_boards", f"past {self.max_boards} boards")
        return view

    async def _on_message(self, msg: Msg) -> None:
        try:
            view = self.check(msg.subject, msg.data)
        except RecordRefused as exc:
            self.counts[f"records_dropped_{exc.reason}"] += 1
            log.warning("record dropped (%s): %s", exc.reason, str(exc)[:300])
            return
        except Exception:  # never let one payload stop the relay
            self.counts["records_dropped_bad_payload"] += 1
            log.exception("record dropped: %s", msg.subject[:200])
            return
        key = (view["venue"], view["board"])
        kept = self.views.get(key)
        if kept is not None and kept["game"] == view["game"] and kept["ts"] > view["ts"]:
            return  # an older record overtaken by a newer one
        self.views[key] = view
        self.counts["records_forwarded"] += 1
        if self._nc is not None:
            subject = f"{self.prefix}.live.{view['venue']}.record.{view['board']}"
            await self._nc.publish(subject, encode_view(view))

    async def run(self) -> None:
        self._nc = await nats.connect(
            self.servers,
            user=self.user,
            password=self.password,
            name=f"{self.name}-records",
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            connect_timeout=5,
            allow_reconnect=True,
        )
        try:
            await self._nc.subscribe(record_subjects(self.prefix), cb=self._on_message)
            await self._nc.flush()
            self.ready.set()
            await asyncio.Event().wait()
        finally:
            await self._nc.close()
