"""One board: ClockFace ⇄ GameClock ⇄ Referee ⇄ journal, with the MQTT link as a listener.

Everything the players touch happens here, on the node, without the network: a press reaches
the clock core with the instant of its edge, the flag is a ``loop.call_at`` at the exact zero
instant, and the face is refreshed when the digits it shows change. Each fact the core or the
referee decides becomes one journaled event (seq from the journal) before anyone is told; a
journal whose disk refuses holds it (journal.py) and the face shows DISK: no clock stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from board_nodes.board_phase import IN_PROGRESS, BoardPhase, HeldBy, phase_of
from board_nodes.board_state import snapshot_of
from board_nodes.flag_guard import FlagGuard
from board_nodes.journal import Journal
from board_nodes.timesource import NodeTime
from clock_service import GameClock, Proposal, ProposalStatus, Referee, Regulation, Side
from firmware_bridge.face import ClockFace, FaceEvent, FaceEventKind, FaceView
from wire_contract import messages as wire
from wire_contract.wallclock import wall_ms

__all__ = ["Board", "NodeTime"]

log = logging.getLogger(__name__)

CHECKPOINT_VERSION = 1
# A move published at least this long after its press (a resend: the first try is acknowledged
# within 100 ms, docs/protocol.md §5) says how late in ``arrived_after_ms``.
LATE_MS = 100


class Board:
    """The per-board pipeline. Commands are applied by :mod:`board_nodes.commands`."""

    def __init__(
        self,
        board_id: str,
        *,
        venue: str,
        node: str,
        session: int,
        regulation: Regulation,
        face: ClockFace,
        journal: Journal,
        time_source: NodeTime | None = None,
    ) -> None:
        self.id = board_id
        self.venue = venue
        self.node = node
        self.session = session
        self.regulation = regulation
        self.face = face
        self.journal = journal
        self.now = time_source or NodeTime()
        # the game
        self.game: dict[str, Any] | None = None  # game, tc, black_tc, red, black, tiebreak
        self.clock: GameClock | None = None
        self.referee: Referee | None = None
        self.result: dict[str, Any] | None = None
        self.arbiter_mode = False
        self.round_start_ms: int | None = None
        self.power_off_ns: int | None = None
        # Who holds a stop (board_phase.HeldBy); None: a player's pause, the pause key resumes.
        self.held_by: HeldBy | None = None
        self.proposal_seq: dict[int, int] = {}  # referee proposal id -> seq of its first event
        # The station's command being applied: the events it causes carry its txn, which is
        # what lets the station tell an arbiter's decision from a board's proposal.
        self.command_txn: str | None = None
        self.last_seq = journal.board(board_id).last_seq
        # listeners: the MQTT link wakes on these
        self.on_event: Callable[[dict[str, Any]], None] = lambda payload: None
        self.on_state: Callable[[], None] = lambda: None
        # why the clock face cannot serve (it failed to open, refused, lost its link)
        self.clock_fault: str | None = None
        # timers
        self.flag = FlagGuard(face, clock=lambda: self.clock, stand=self._flag_stands)
        self._display_timer: asyncio.TimerHandle | None = None
        self._late_timer: asyncio.TimerHandle | None = None
        self._start_timer: asyncio.TimerHandle | None = None
        self.face_errors = 0
        self._dated: tuple[int, int] | None = None  # (seq, ts) of an event dated earlier

    def __repr__(self) -> str:
        return f"<Board {self.id} {self.phase} seq={self.last_seq}>"

    # -- derived ---------------------------------------------------------------------------------
    @property
    def phase(self) -> BoardPhase:
        return phase_of(self.game, self.clock, self.result)

    def side_on_move(self) -> Side | None:
        if self.clock is None or self.phase not in IN_PROGRESS:
            return None
        return self.clock.side_on_move

    def clock_part(self) -> wire.ClockPart:
        if self.clock is None:
            return wire.ClockPart(red_ms=0, black_ms=0, running=None)
        running = self.clock.running
        return wire.ClockPart(
            red_ms=self.clock.remaining_ms(Side.RED),
            black_ms=self.clock.remaining_ms(Side.BLACK),
            running=running.value if running else None,
        )

    def snapshot(self) -> wire.StateSnapshot:
        """The retained ``state`` of DESIGN.md §4 (built in ``board_state``)."""
        return snapshot_of(self)

    @property
    def dated(self) -> tuple[int, int] | None:
        """(seq, ts) of the latest event if it was dated before its publication."""
        return self._dated

    # -- the journal ------------------------------------------------------------------------------
    def checkpoint_data(self) -> dict[str, Any]:
        return {
            "v": CHECKPOINT_VERSION,
            "game": self.game,
            "clock": self.clock.snapshot() if self.clock else None,
            "referee": self.referee.snapshot() if self.referee else None,
            "result": self.result,
            "arbiter_mode": self.arbiter_mode,
            "round_start_ms": self.round_start_ms,
            "proposal_seq": {str(k): v for k, v in self.proposal_seq.items()},
            "power_off": self.power_off_ns is not None,
            "held_by": self.held_by,
        }

    def restore(self, checkpoint: dict[str, Any]) -> None:
        """Bring the board back from its last checkpoint, with the clock paused."""
        if checkpoint.get("v") != CHECKPOINT_VERSION:
            raise ValueError(f"board {self.id}: checkpoint version {checkpoint.get('v')!r}")
        self.game = checkpoint["game"]
        self.result = checkpoint["result"]
        self.arbiter_mode = bool(checkpoint["arbiter_mode"])
        self.round_start_ms = checkpoint["round_start_ms"]
        self.proposal_seq = {int(k): v for k, v in checkpoint["proposal_seq"].items()}
        self.held_by = HeldBy(checkpoint["held_by"]) if checkpoint.get("held_by") else None
        if self.game is not None and checkpoint["clock"] is not None:
            self.clock = GameClock.restore(checkpoint["clock"], now=self.now)
            if self.clock.running is not None:
                self.clock.pause()
            self.referee = Referee.restore(self.regulation, checkpoint["referee"])

    def emit(self, type_: str, data: dict[str, Any], *, at_ns: int | None = None) -> dict[str, Any]:
        """Journal one event (with the checkpoint it leads to), then tell the listeners.

        Its ``ts`` is the wall time of its instant (docs/wire.md, "Which instant a ts
        carries"): ``at_ns`` (a flag's deadline, a late press's own instant), else the board's
        time, which is the act's instant while a face event is applied, so ``ts`` and the
        ``clock`` part speak of the same instant however late the event is published.

        The envelope is built and checked by the contract's model: a field the contract does
        not know fails here, on the node, not silently at the station."""
        if type_ != "warning":  # a warning changes nothing on the clock: no floor
            self.now.mark()  # the clock's state changed: a later act cannot go before this
        checkpoint = self.checkpoint_data()
        clock = self.clock_part()
        game = self.game["game"] if self.game else None
        instant = self.now() if at_ns is None else at_ns
        ts = self.now.wall_ms_of(instant)

        def build(seq: int) -> dict[str, Any]:
            envelope = wire.EventEnvelope(
                board=self.id,
                node=self.node,
                game=game,
                session=self.session,
                seq=seq,
                ts=ts,
                type=type_,
                clock=clock,
                data=data,
                txn=self.command_txn,
            )
            return wire.to_payload(envelope)

        payload = self.journal.record(self.id, build, checkpoint=checkpoint, wall_ms=wall_ms())
        self.last_seq = payload["seq"]
        # An event dated before its publication: the state right after it says that instant
        # too (the flag's state is as of its deadline), until the next event.
        self._dated = (self.last_seq, ts) if self.now.lag_ms(instant) > 0 else None
        log.info("board %s seq %d %s %s", self.id, self.last_seq, type_, data)
        self.on_event(payload)
        return payload

    def emit_clock_events(self, events: Any, *, by: str | None = None) -> None:
        """Journal what the core decided. ``by`` names who paused or adjusted (an arbiter's
        command); from the board a pause is the arbiter's only in arbiter mode."""
        for event in events:
            data = event.data()
            at_ns = None
            if event.type == "paused":
                data = {"by": by or ("arbiter" if self.arbiter_mode else "board"), **data}
            elif event.type == "adjusted":
                data = {**data, "by": by or "arbiter"}
            elif event.type == "flag" and self.clock is not None:
                # Dated at the instant the time ran out; how long the proof (or the press
                # that settled it) took is a field of its own.
                at_ns = self.clock.flagged_ns
                if at_ns is not None:
                    data = {**data, "stood_after_ms": self.now.lag_ms(at_ns)}
            elif event.type == "move":
                late_ms = self.now.lag_ms(self.now())
                if late_ms >= LATE_MS:
                    data = {**data, "arrived_after_ms": late_ms}
            self.emit(event.type, data, at_ns=at_ns)
            if event.type == "flag" and self.referee is not None:
                proposals = self.referee.flag_fell(Side.parse(data["side"]))
                self.emit_proposals(proposals, at_ns=at_ns)  # the same fact, the same instant
            if event.type == "move" and self.referee is not None and self.clock is not None:
                moves = (self.clock.moves(Side.RED), self.clock.moves(Side.BLACK))
                self.emit_proposals(self.referee.moves_made(*moves))

    def emit_proposals(self, proposals: list[Proposal], *, at_ns: int | None = None) -> None:
        for proposal in proposals:
            type_, data = proposal.to_wire()
            first = proposal.id not in self.proposal_seq
            if not first:
                data = {**data, "ref": self.proposal_seq[proposal.id]}
            if type_ == "result":
                data["status"] = proposal.status.value
                if proposal.status is ProposalStatus.CONFIRMED:
                    self.finish(data)
            if type_ == "warning":
                data["status"] = proposal.status.value
            payload = self.emit(type_, data, at_ns=at_ns)
            if first:
                self.proposal_seq[proposal.id] = payload["seq"]

    def finish(self, result: dict[str, Any]) -> None:
        """A result stands: the clock stops where it is."""
        self.result = {"winner": result["winner"], "reason": result["reason"]}
        if self.clock is not None and self.clock.running is not None:
            self.clock.pause()
        self.cancel_timers()

    # -- the face ---------------------------------------------------------------------------------
    async def run_face(self) -> None:
        async for event in self.face.events():
            try:
                with self.now.pinned(event.mono_ns):
                    self.handle_face(event)
            except Exception:
                # A face fact the board could not apply must not stop the board.
                self.face_errors += 1
                log.exception("board %s: cannot apply %r", self.id, event)
            self.changed()

    def handle_face(self, event: FaceEvent) -> None:
        kind = event.kind
        if kind is FaceEventKind.PRESS:
            assert event.side is not None
            self.press(event.side)
        elif kind is FaceEventKind.PAUSE_KEY:
            self.pause_key()
        elif kind is FaceEventKind.ARBITER_KEY:
            self.arbiter_mode = not self.arbiter_mode
        elif kind is FaceEventKind.POWER_OFF:
            self.power_off(event.mono_ns)
        elif kind is FaceEventKind.POWER_ON:
            self.power_on(event.mono_ns)
        elif kind is FaceEventKind.CLOCK_REBOOTED:
            detail = "a new session of the clock: it restarted (or another clock was connected)"
            self.emit("warning", {"reason": kind.value, "detail": detail})
        else:
            if kind is FaceEventKind.LINK_LOST:
                error = getattr(self.face, "last_error", None)
                self.clock_fault = f"link lost: {error}" if error else "link lost"
            elif kind is FaceEventKind.LINK_RESTORED:
                self.clock_fault = None
            self.emit("warning", {"reason": kind.value})

    def press(self, side: Side) -> None:
        clock = self.clock
        if clock is None:
            return
        early_ms = self.flag.press_before_flag(side, self.now.act_ns)
        if early_ms is not None:
            # The flag stood unproven (the link was down) and this press was before it.
            # Dated at the press; the flag's ts less ``early_ms`` is the press's wall time.
            self.emit("warning", {
                "reason": "press_before_flag", "side": side.value, "status": "pending",
                "early_ms": early_ms,
                "detail": f"pressed {early_ms} ms before the flag; arrived after it stood",
            }, at_ns=self.now.act_ns)  # fmt: skip
            return
        if self.result is not None:
            return
        if self.phase is BoardPhase.READY and side is Side.BLACK and self._start_timer is None:
            # The usual way to start a clock: black presses, red's time runs.
            self.emit_clock_events(clock.start())
            return
        self.emit_clock_events(clock.press(side))

    def pause_key(self) -> None:
        clock = self.clock
        if clock is None or self.result is not None:
            return
        if clock.running is not None:
            side_on_move = clock.running
            self.emit_clock_events(clock.pause())
            if not self.arbiter_mode and self.referee is not None:
                self.emit_proposals(self.referee.board_paused(side_on_move))
        elif self.phase is BoardPhase.PAUSED and self.power_off_ns is None:
            if self.held_by is not None and not self.arbiter_mode:
                return  # held by the arbiter: the players cannot resume it themselves
            self.held_by = None
            self.emit_clock_events(clock.resume())

    def power_off(self, mono_ns: int) -> None:
        if self.power_off_ns is not None:
            return
        self.power_off_ns = mono_ns
        clock = self.clock
        if clock is None or self.phase not in IN_PROGRESS:
            return
        side_on_move = self.side_on_move()
        self.held_by = HeldBy.POWER_SWITCH
        if clock.running is not None:
            clock.pause()  # the shutdown event carries the stop; no separate pause foul
        self.emit_shutdown(HeldBy.POWER_SWITCH, 0, side_on_move, authorised=self.arbiter_mode)
        if self.referee is not None:
            proposals = self.referee.clock_switched_off(side_on_move, authorised=self.arbiter_mode)
            self.emit_proposals(proposals)

    def emit_shutdown(
        self, cause: HeldBy, duration_ms: int, side_on_move: Side | None, *, authorised: bool
    ) -> None:
        """The clock stopped without a player's press: the face lost power or the node died."""
        self.emit("shutdown", wire.ShutdownData(
            cause=cause.value,  # type: ignore[arg-type]
            duration_ms=duration_ms,
            side_on_move=side_on_move.value if side_on_move else None,
            authorised=authorised,
        ).model_dump())  # fmt: skip

    def power_on(self, mono_ns: int) -> None:
        if self.power_off_ns is None:
            return
        off_ms = max(0, mono_ns - self.power_off_ns) // 1_000_000
        self.power_off_ns = None
        if self.phase in IN_PROGRESS:
            self.emit("warning", {"reason": "power_restored", "detail": f"off for {off_ms} ms"})

    # -- timers -----------------------------------------------------------------------------------
    def changed(self) -> None:
        """After any change: reschedule the flag and the display, tell the link."""
        self._schedule_flag()
        self._refresh_display()
        self.on_state()

    def _schedule_flag(self) -> None:
        if self.result is not None:
            self.flag.cancel_timer()
            return
        self.flag.schedule()

    def _flag_stands(self) -> None:
        """No earlier press can still arrive (flag_guard): the flag falls for everyone."""
        if self.clock is None or self.result is not None:
            return
        self.emit_clock_events(self.clock.settle())
        self.changed()

    def _refresh_display(self) -> None:
        if self._display_timer is not None:
            self._display_timer.cancel()
            self._display_timer = None
        view = self.view()
        asyncio.get_running_loop().create_task(self._show(view))
        if view.running is None or view.flag is not None:
            return
        # Wake when the running side's digits next change: the next whole second, or the
        # next tenth below 20 s.
        remaining = view.red_ms if view.running is Side.RED else view.black_ms
        step = 100 if remaining <= 20_000 else 1000
        wait_ms = remaining % step or step
        loop = asyncio.get_running_loop()
        self._display_timer = loop.call_at(loop.time() + wait_ms / 1000, self._refresh_display)

    async def _show(self, view: FaceView) -> None:
        try:
            await self.face.show(view)
        except Exception:
            self.face_errors += 1
            log.warning("board %s: the face refused a view", self.id, exc_info=True)

    def view(self) -> FaceView:
        now = self.now()
        if self.clock is None:
            return FaceView(0, 0, text=f"b{self.id}"[:8], mono_ns=now)
        text = ""
        if self.power_off_ns is not None:
            text = "OFF"
        elif self.arbiter_mode:
            text = "ARB"
        elif self.phase is BoardPhase.PAUSED:
            text = "PAUSE"
        elif self.journal.failing_since is not None:
            text = "DISK"
        return FaceView(
            self.clock.remaining_ms(Side.RED),
            self.clock.remaining_ms(Side.BLACK),
            running=self.clock.running,
            flag=FlagGuard.standing(self.clock),  # only a flag that stands is shown
            text=text,
            mono_ns=now,
        )

    def schedule_start(self, at_wall_ms: int | None) -> None:
        """Start the clock now, or at a wall-clock instant (a round start announced ahead)."""
        self.round_start_ms = at_wall_ms or wall_ms()
        delay_s = max(0.0, (self.round_start_ms - wall_ms()) / 1000)
        loop = asyncio.get_running_loop()
        if self._start_timer is not None:
            self._start_timer.cancel()
        self._start_timer = loop.call_later(delay_s, self._start_due)
        self._schedule_late()

    def _start_due(self) -> None:
        self._start_timer = None
        if self.clock is not None and self.phase is BoardPhase.READY:
            self.emit_clock_events(self.clock.start())
        self.changed()

    def _schedule_late(self) -> None:
        if self._late_timer is not None:
            self._late_timer.cancel()
            self._late_timer = None
        if self.referee is None or self.round_start_ms is None:
            return
        due_ms = self.referee.late_deadline_ms(self.round_start_ms)
        delay_s = max(0.0, (due_ms - wall_ms()) / 1000)
        self._late_timer = asyncio.get_running_loop().call_later(delay_s, self._late_due)

    def _late_due(self) -> None:
        self._late_timer = None
        if self.referee is None or self.clock is None or self.round_start_ms is None:
            return
        sides = self.referee.late_sides(
            now_ms=wall_ms(),
            round_start_ms=self.round_start_ms,
            red_moves=self.clock.moves(Side.RED),
            black_moves=self.clock.moves(Side.BLACK),
        )
        for side in sides:  # both when neither has moved: a proposed double forfeit follows
            if self.result is None:
                self.emit("late", {"side": side.value})
                self.emit_proposals(self.referee.late(side))
        if sides:
            self.changed()

    def due_checkpoint(self) -> dict[str, Any] | None:
        """The checkpoint to write now, while a clock runs (the node writes them together)."""
        if self.clock is not None and self.clock.running is not None:
            return self.checkpoint_data()
        return None

    def set_game(
        self, game: dict[str, Any] | None, clock: GameClock | None, referee: Referee | None
    ) -> None:
        """A new game (``set_game``) or none (``reset``): all of the last one's state goes."""
        self.cancel_timers()
        self.flag.stood = None
        self.game, self.clock, self.referee = game, clock, referee
        self.result = self.round_start_ms = None
        self.proposal_seq = {}
        self.held_by = None

    def cancel_timers(self) -> None:
        self.flag.cancel_timer()
        for name in ("_late_timer", "_start_timer"):
            handle = getattr(self, name)
            if handle is not None:
                handle.cancel()
                setattr(self, name, None)

    def close(self) -> None:
        self.cancel_timers()
        self.flag.close()
        if self._display_timer is not None:
            self._display_timer.cancel()
            self._display_timer = None
        if self.clock is not None and self.clock.running is not None:
            self.journal.checkpoint(self.id, self.checkpoint_data(), wall_ms())
