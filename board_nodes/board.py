"""One board: ClockFace ⇄ GameClock ⇄ Referee ⇄ journal, with the MQTT link as a listener.

Everything the players touch happens here, on the node, without the network: a press reaches
the clock core with the instant of its edge, the flag is a ``loop.call_at`` at the exact zero
instant, and the face is refreshed when the digits it shows change. Each fact the core or the
referee decides becomes one journaled event (seq from the journal) before anyone is told; a
journal whose disk refuses holds it (journal.py) and the face shows DISK: no clock stops.

The board holds the game and decides; its timers are collaborators it creates and closes
(``FlagGuard``, ``FaceRefresher``, ``RoundStart``, ``LateWatch``), ``EventRecorder`` puts its
events in their envelope and journals them, its checkpoint is read and written in
``board_checkpoint.py`` and what others see of it is built in ``board_state.py``. The
station's commands are checked in ``commands.py`` and change the board only through its
methods (``set_game``, ``start``, ``pause`` ...), so each change keeps the board whole.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from board_nodes.board_checkpoint import checkpoint_of, saved_game
from board_nodes.board_phase import IN_PROGRESS, BoardPhase, HeldBy, phase_of
from board_nodes.board_state import clock_part_of, face_view_of, snapshot_of
from board_nodes.event_recorder import EventRecorder
from board_nodes.face_refresher import FaceRefresher
from board_nodes.flag_guard import FlagGuard
from board_nodes.journal import Journal
from board_nodes.round_timers import LateWatch, RoundStart
from board_nodes.timesource import NodeTime
from clock_service import GameClock, Proposal, ProposalStatus, Referee, Regulation, Side
from firmware_bridge.face import ClockFace, FaceEvent, FaceEventKind, FaceView
from wire_contract import messages as wire
from wire_contract.wallclock import wall_ms

__all__ = ["Board", "NodeTime"]

log = logging.getLogger(__name__)

# A move published at least this long after its press (a resend: the first try is acknowledged
# within 100 ms, docs/protocol.md §5) says how late in ``arrived_after_ms``.
LATE_MS = 100


class Board:
    """The per-board pipeline. Commands are checked by :mod:`board_nodes.commands`."""

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
        self.events = EventRecorder(
            journal, board_id=board_id, node=node, session=session, now=self.now
        )
        # listeners: the MQTT link wakes on these
        self.on_event: Callable[[dict[str, Any]], None] = lambda payload: None
        self.on_state: Callable[[], None] = lambda: None
        # why the clock face cannot serve (it failed to open, refused, lost its link)
        self.clock_fault: str | None = None
        # timers, each its own collaborator; ``close`` closes them all
        self.flag = FlagGuard(face, clock=lambda: self.clock, stand=self._flag_stands)
        self.face_refresher = FaceRefresher(face, view=self.view, board_id=board_id)
        self.round_start = RoundStart(start=self._round_starts)
        self.late_watch = LateWatch(late=self._sides_late)
        self._face_events_failed = 0  # face events the board could not apply
        self._closed = False

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

    def snapshot(self) -> wire.StateSnapshot:
        """The retained ``state`` of DESIGN.md §4 (built in ``board_state``)."""
        return snapshot_of(self)

    def view(self) -> FaceView:
        """What the clock face shows now (built in ``board_state``)."""
        return face_view_of(self)

    @property
    def last_seq(self) -> int:
        return self.events.last_seq

    @property
    def dated(self) -> tuple[int, int] | None:
        """(seq, ts) of the latest event if it was dated before its publication."""
        return self.events.dated

    @property
    def face_errors(self) -> int:
        """Face events the board could not apply, and views the face refused."""
        return self._face_events_failed + self.face_refresher.refused

    # -- the journal ------------------------------------------------------------------------------
    def checkpoint_data(self) -> dict[str, Any]:
        """What the journal keeps of this board's game (``board_checkpoint.py``)."""
        return checkpoint_of(self)

    def restore(self, checkpoint: dict[str, Any]) -> None:
        """Bring the board back from its last checkpoint, with the clock paused."""
        saved = saved_game(checkpoint, board_id=self.id, regulation=self.regulation, now=self.now)
        self.game = saved.game
        self.result = saved.result
        self.arbiter_mode = saved.arbiter_mode
        self.round_start_ms = saved.round_start_ms
        self.proposal_seq = saved.proposal_seq
        self.held_by = saved.held_by
        if saved.clock is not None:  # a checkpoint without a game leaves the clock as it is
            self.clock, self.referee = saved.clock, saved.referee

    def emit(self, type_: str, data: dict[str, Any], *, at_ns: int | None = None) -> dict[str, Any]:
        """Journal one event (with the checkpoint it leads to), then tell the listeners.

        Its ``ts`` is the wall time of its instant (docs/wire.md, "Which instant a ts
        carries"): ``at_ns`` (a flag's deadline, a late press's own instant), else the board's
        time, which is the act's instant while a face event is applied, so ``ts`` and the
        ``clock`` part speak of the same instant however late the event is published
        (``EventRecorder`` builds its envelope and journals it)."""
        if type_ != "warning":  # a warning changes nothing on the clock: no floor
            self.now.mark()  # the clock's state changed: a later act cannot go before this
        payload = self.events.record(
            type_,
            data,
            at_ns=at_ns,
            checkpoint=self.checkpoint_data(),  # the checkpoint and the clock as of the event
            clock=clock_part_of(self.clock),
            game=self.game["game"] if self.game else None,
        )
        self.on_event(payload)
        return payload

    def emit_clock_events(
        self, events: Any, *, by: str | None = None, moved_at: int | None = None
    ) -> None:
        """Journal what the core decided. ``by`` names who paused or adjusted (an arbiter's
        command); from the board a pause is the arbiter's only in arbiter mode. ``moved_at``:
        the instant of a move taken after its time (a late press), its ``ts``."""
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
                at_ns = moved_at
                late_ms = self.now.lag_ms(moved_at or self.now())
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
            if first:  # the seq it gets, in the checkpoint journaled with it: a restart knows it
                self.proposal_seq[proposal.id] = self.last_seq + 1
            self.emit(type_, data, at_ns=at_ns)

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
                self._face_events_failed += 1
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
        if self.phase is BoardPhase.READY and side is Side.BLACK and not self.round_start.pending:
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
        self.face_refresher.refresh()
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

    def _round_starts(self) -> None:
        """The announced round start is due (``RoundStart``)."""
        if self.clock is not None and self.phase is BoardPhase.READY:
            self.emit_clock_events(self.clock.start())
        self.changed()

    def _sides_late(self, sides: tuple[Side, ...]) -> None:
        """The late deadline passed (``LateWatch``) and these sides have not moved."""
        referee = self.referee
        assert referee is not None  # the watch is this game's: a new game or a reset cancels it
        for side in sides:  # both when neither has moved: a proposed double forfeit follows
            if self.result is None:
                self.emit("late", {"side": side.value})
                self.emit_proposals(referee.late(side))
        if sides:
            self.changed()

    def due_checkpoint(self) -> dict[str, Any] | None:
        """The checkpoint to write now, while a clock runs (the node writes them together)."""
        if self.clock is not None and self.clock.running is not None:
            return self.checkpoint_data()
        return None

    def cancel_timers(self) -> None:
        self.flag.cancel_timer()
        self.late_watch.cancel()
        self.round_start.cancel()

    def close(self) -> None:
        """Close every timer and journal a running clock's time; again, it does nothing."""
        if self._closed:
            return
        self._closed = True
        for timer in (self.flag, self.face_refresher, self.round_start, self.late_watch):
            timer.close()
        if self.clock is not None and self.clock.running is not None:
            self.journal.checkpoint(self.id, self.checkpoint_data(), wall_ms())

    # -- what the station and the node ask (checked in commands.py and node.py) -----------------
    def applying(self, txn: str | None) -> contextlib.AbstractContextManager[None]:
        """The station's command ``txn`` is being applied: the events it causes carry its txn,
        which is what lets the station tell an arbiter's decision from a board's proposal."""
        return self.events.applying(txn)

    def set_game(self, game: dict[str, Any], clock: GameClock, referee: Referee) -> None:
        """A new game: all of the last one's state goes, and ``ready`` says what is set."""
        self._forget_game()
        self.game, self.clock, self.referee = game, clock, referee
        data = {key: game[key] for key in ("game", "tc", "red", "black")}
        for optional in ("black_tc", "handicap"):
            if game[optional] is not None:
                data[optional] = game[optional]
        self.emit("ready", data)

    def reset(self) -> None:
        """No game: all of the last one's state goes, and the checkpoint says so at once."""
        self._forget_game()
        self.journal.checkpoint(self.id, self.checkpoint_data(), 0)

    def _forget_game(self) -> None:
        self.cancel_timers()
        self.flag.forget()
        self.game = self.clock = self.referee = None
        self.result = self.round_start_ms = None
        self.proposal_seq = {}
        self.held_by = None

    def start(self, at_wall_ms: int | None) -> None:
        """Start the clock now, or at a wall-clock instant (a round start announced ahead); the
        late deadline counts from that instant."""
        self.round_start_ms = at_wall_ms or wall_ms()
        self.round_start.schedule(self.round_start_ms)
        self.late_watch.watch(self.referee, self.clock, self.round_start_ms)

    def pause(self) -> None:
        """The arbiter's pause: the stop is held until the arbiter resumes it."""
        assert self.clock is not None
        self.held_by = HeldBy.ARBITER
        self.emit_clock_events(self.clock.pause(), by="arbiter")

    def resume(self) -> None:
        """The arbiter resumes, whoever held the stop."""
        assert self.clock is not None
        self.held_by = None
        self.emit_clock_events(self.clock.resume())

    def adjust(self, side: Side, delta_ms: int) -> None:
        """The arbiter gives ``side`` time (or takes it, ``delta_ms`` < 0)."""
        assert self.clock is not None
        self.emit_clock_events(self.clock.adjust(side, delta_ms), by="arbiter")

    def set_arbiter_mode(self, on: bool) -> None:
        self.arbiter_mode = on

    def resolve(self, proposal_id: int, status: ProposalStatus) -> None:
        """The arbiter confirms or rejects a proposal of the referee."""
        assert self.referee is not None
        self.emit_proposals(self.referee.resolve(proposal_id, status))

    def withdraw(self, proposal_id: int) -> None:
        """The arbiter takes back a confirmed foul; a loss it completed goes with it, and the
        game goes on from where its clock stopped (paused, held by the arbiter)."""
        assert self.referee is not None
        self.emit_proposals(self.referee.withdraw(proposal_id))
        standing = self.referee.result  # the result that stands now (an earlier one, or none)
        if standing is not None and standing.status is ProposalStatus.CONFIRMED:
            self.result = {"winner": standing.to_wire()[1]["winner"], "reason": standing.reason}
        elif self.result is not None:
            self.result = None
            self.held_by = HeldBy.ARBITER

    def enter_result(self, winner: Side | None, reason: str) -> None:
        """The arbiter enters a result (``winner`` None: a draw); the referee proposes it."""
        assert self.referee is not None and self.clock is not None
        moves = self.referee.full_moves(self.clock.moves(Side.RED), self.clock.moves(Side.BLACK))
        self.emit_proposals(self.referee.result_entered(winner, reason, moves=moves))

    def call_foul(self, side: Side, reason: str) -> None:
        assert self.referee is not None
        self.emit_proposals(self.referee.arbiter_foul(side, reason))

    def start_move_count(self, limit: int | None) -> None:
        assert self.referee is not None and self.clock is not None
        proposals = self.referee.start_move_count(
            red_moves=self.clock.moves(Side.RED),
            black_moves=self.clock.moves(Side.BLACK),
            limit=limit,
        )
        self.emit_proposals(proposals)

    def hold_after_restart(self, outage_ms: int) -> None:
        """The node restarted with this game paused: the stop is the arbiter's to lift, and a
        ``shutdown`` says how long the node was gone."""
        self.held_by = HeldBy.NODE_RESTART
        side = self.clock.side_on_move if self.clock is not None else None
        self.emit_shutdown(HeldBy.NODE_RESTART, outage_ms, side, authorised=False)

    def report_clock_fault(self, fault: str | None) -> None:
        """The clock face does not open (``fault`` says why) or opens again (None): the state
        and a journaled ``warning`` say so."""
        self.clock_fault = fault
        self.emit("warning", {"reason": "clock_fault", "detail": fault or "the clock face is back"})
        self.changed()
