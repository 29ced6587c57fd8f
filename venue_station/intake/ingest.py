"""From MQTT messages to the store: validate, keep every board's current view, store once.

``Ingest.handle(topic, payload, ...)`` is synchronous and never raises: a message that breaks
the contract is logged at WARNING, counted by kind in the metrics and dropped. Good messages
update the in-memory board views at once (the API and SSE read those) and go on one queue to a
single writer task, which stores them in batches — in arrival order, so the seq bookkeeping
sees what the store sees. An alert is decided and sent to the pages the moment its fact
arrives (the arbiter hears of a flag within a second even while the writer is busy with a
round's start); it goes on the same queue and is stored in its event's transaction.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clock_service.regulation import Regulation
from venue_station.intake.clock_probe import ClockProbes, RoundTrip
from venue_station.intake.clock_truth import ClockTruth
from venue_station.intake.guard import AskedReplays, Authority, DropLog, FloodGate, is_decision
from venue_station.intake.ingest_writer import IngestWriter
from venue_station.intake.outages import Outage, Outages
from venue_station.intake.seqs import RangeSet, SeqTracker
from venue_station.intake.silence import SilentBoards
from venue_station.intake.status_order import is_older
from venue_station.live import alerts as alert_rules
from venue_station.live.fanout import EventFanout
from venue_station.live.metrics import Metrics
from venue_station.store.database import Store, board_key
from wire_contract.messages import (
    BoardStatus,
    EventEnvelope,
    StateSnapshot,
    Topics,
    WireError,
    decode,
    parse_topic,
)
from wire_contract.wallclock import wall_ms

__all__ = ["BoardView", "Ingest"]

log = logging.getLogger(__name__)
OFFSET_LIMIT_MS = 100


@dataclass
class BoardView:
    """What the station knows about a board now."""

    board: str
    status: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    # min(received - ts) over recent live messages (clock_truth.ClockTruth): the node's clock
    # offset plus the smallest network delay seen, an upper bound of how far it is behind.
    offset_ms: int | None = None
    heard_ms: int | None = None  # wall ms of its last message of any kind (silence.py)

    def as_dict(self, seqs: Any = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "board": self.board,
            "status": self.status,
            "state": self.state,
            "online": bool(self.status and self.status["state"] == "online"),
            "clock_offset_ms": self.offset_ms,
        }
        if seqs is not None:
            out["last_seq"] = seqs.watermark
            out["missing"] = [list(r) for r in seqs.missing()]
        return out


class Ingest:
    """Every message from the broker: checked, the board views kept, what is to be stored
    handed to its ``writer`` (ingest_writer.py), the silent boards judged by its ``silence``
    (silence.py), alerts decided the moment their fact arrives."""

    def __init__(
        self,
        store: Store,
        *,
        venue: str,
        metrics: Metrics,
        hub: EventFanout,
        known_boards: frozenset[str] = frozenset(),
        on_reply: Callable[[str, bytes], None] | None = None,
        clock_probe_s: float = 5.0,
        regulation: Regulation | None = None,
    ) -> None:
        self.store = store
        self.venue = venue
        self.metrics = metrics
        self.hub = hub
        self.on_reply = on_reply
        self.on_resend: Callable[[bytes], None] | None = None  # the hub asks (domain/resend.py)
        self._configured = known_boards
        self.paired: set[str] = set()  # every board any round paired (is_known)
        self.boards: dict[str, BoardView] = {}
        self.seqs = SeqTracker()
        self.clock_truth = ClockTruth(limit_ms=OFFSET_LIMIT_MS, window=32, min_samples=8)
        self.clock_probes = ClockProbes(Topics(venue), interval_s=clock_probe_s)
        self.alert_ledger = alert_rules.AlertLedger()
        self.outages = Outages()
        self.drops = DropLog(metrics)
        self.flood = FloodGate()
        self.replays = AskedReplays()  # the rebirths the station asked: paced, not gated
        self.authority = Authority(regulation)  # what the arbiter's commands asked
        self.writer = IngestWriter(
            store=store,
            metrics=metrics,
            hub=hub,
            seqs=self.seqs,
            alert_ledger=self.alert_ledger,
            raise_alert=self.raise_alert,
        )
        self.silence = SilentBoards(
            boards=self.boards,
            hub=hub,
            outages=self.outages,
            probe_targets=self.probe_targets,
            change_alert=self.change_alert,
            outage=self._outage,
        )
        # Messages before this (wall ms) may be a backlog the broker queued while we were away:
        # their age says nothing about a node's clock. The collector moves it on each connect.
        self.live_after_ms = 0
        # A retained status older than this, for a board the station has no business with, is
        # an earlier event's leftover: shown, not alerted (_left_from_before).
        self.started_ms = wall_ms()
        # False while the station waits for its store (a full disk at start): the views are
        # kept live, nothing is decided or stored (the nodes' journals keep it; station.py).
        self.deciding = True
        # Takes an alert the station decides later (True): a move limit or an early draw of a
        # recorded game, which the record counts (domain/record_counts.py).
        self.hold: Callable[[alert_rules.AlertSpec], bool] | None = None

    async def load(self) -> None:
        """Rebuild the views and the seq bookkeeping from the store (at start)."""
        self.seqs.load(await self.store.seqs_by_board(), time.monotonic())
        for key, seqs in (await self.store.seqs_by_session()).items():
            stored = self.writer.stored[key] = RangeSet()
            for seq in seqs:
                stored.add(seq)
        self.authority.load(
            await self.store.games_boards(),
            await self.store.reads.asking_commands(),
            await self.store.reads.ruling_events(),
        )
        for row in await self.store.boards():
            self.boards[row["board"]] = BoardView(row["board"], row["status"], row["state"])
        self.paired = {p["board"] for p in await self.store.pairings()}
        self.alert_ledger.load(*await self.store.alert_index())
        self.metrics.gauges["qz_boards_online"] = lambda: sum(
            1 for v in self.boards.values() if v.status and v.status["state"] == "online"
        )
        self.metrics.gauges["qz_gaps_open"] = lambda: len(self.seqs.open_gaps())
        self.metrics.gauges["qz_writer_queue"] = lambda: self.writer.queue.qsize()

    def add_paired_boards(self, boards: set[str]) -> None:
        self.paired |= boards

    def is_known(self, board: str) -> bool:
        if not self._configured:
            return True  # no roster configured: every board of the venue (the broker's ACL vouches)
        return board in self._configured or board in self.paired

    # -- reading messages -------------------------------------------------------------------
    def _reject(self, kind: str, topic: str, reason: str) -> None:
        self.drops.drop(kind, topic, reason)

    def handle(
        self, topic: str, payload: bytes, *, received_ms: int | None = None, retained: bool = False
    ) -> None:
        """Take one message; never raises (whatever one message does is contained to it)."""
        try:
            self._handle(topic, payload, received_ms=received_ms, retained=retained)
        except Exception as exc:  # a bug met by a message: drop it, keep the station
            log.warning("message on %s broke the ingest", topic[:200], exc_info=True)
            self._reject("internal", topic[:200], f"{type(exc).__name__}: {exc}")

    def _handle(
        self, topic: str, payload: bytes, *, received_ms: int | None, retained: bool
    ) -> None:
        received_ms = wall_ms() if received_ms is None else received_ms
        try:
            name = parse_topic(topic)
        except WireError as exc:
            return self._reject("topic", topic, str(exc))
        if name.venue != self.venue:
            return self._reject(
                "topic", topic, f"venue {name.venue!r} is not this station's {self.venue!r}"
            )
        if name.kind == "station" and name.leaf == "resend":
            if self.on_resend is not None:  # the hub's ask, brought in by the bridge
                self.on_resend(payload)
            return None
        if name.kind in ("station", "resent"):
            return None  # another station's status (or a stale will), a copy sent again: not ours
        if name.kind == "venue" or name.leaf == "cmd":
            # Our own commands never come back (no-local subscription): someone else sent this.
            return self._reject("foreign_cmd", topic, "a command the station did not send")
        board = name.board
        assert board is not None
        if not payload:
            return None  # a cleared retained message
        if not self.is_known(board):
            return self._reject(
                "unknown_board", topic, f"board {board!r} is not in the roster or any pairing"
            )
        early = self._asked_replay(board, name.leaf, payload)
        if (early is None or not self.replays.admit(board, early.seq)) and not self.flood.admit(
            board
        ):
            self._flooded(board)
            return self._reject("flood", topic, f"board {board!r} sends faster than a clock can")
        if name.leaf == "reply":
            self.silence.heard(board, received_ms)  # a board the station knows: it answers
            answer = self.clock_probes.take_reply(board, payload, received_ms)
            if answer is not None:
                return self._on_probe_answer(board, answer, received_ms)
            if self.on_reply is not None:
                self.on_reply(board, payload)
            return None
        models: dict[str, type[BoardStatus | StateSnapshot | EventEnvelope]] = {
            "status": BoardStatus,
            "state": StateSnapshot,
            "event": EventEnvelope,
        }
        model = models[name.leaf]
        try:
            msg: Any = early if early is not None else decode(model, payload)
        except WireError as exc:
            text = str(exc)
            if text.startswith("too large"):
                kind = "too_large"  # over a byte-level bound: never parsed
            elif text.startswith(("not JSON", "expected a JSON object")):
                kind = "not_json"
            else:
                kind = f"bad_{name.leaf}"
            return self._reject(kind, topic, str(exc))
        if name.leaf != "status" and msg.board != board:
            return self._reject("board_mismatch", topic, f"payload names board {msg.board!r}")
        heard_before = self._view(board).heard_ms
        self.silence.heard(board, received_ms)
        live = received_ms >= self.live_after_ms
        if live and not retained and not getattr(msg, "replay", False):
            self._observe_offset(board, msg.ts, received_ms, getattr(msg, "node", None))
        if name.leaf == "status":
            self._on_status(board, msg, received_ms, retained=retained, heard_before=heard_before)
        elif name.leaf == "state":
            self._on_state(board, msg)
        else:
            self._on_event(board, topic, msg, received_ms)
        return None

    def _asked_replay(self, board: str, leaf: str, payload: bytes) -> EventEnvelope | None:
        """A replayed event, decoded before the flood gate only while the station's own ask
        for this board's rebirth is open (else None: the gate judges it undecoded)."""
        if leaf != "event" or not self.replays.is_open(board):
            return None
        try:
            ev = decode(EventEnvelope, payload)
        except WireError:
            return None
        return ev if ev.replay and ev.board == board else None

    def _on_event(self, board: str, topic: str, ev: EventEnvelope, received_ms: int) -> None:
        if not self.authority.may_name(board, ev.game):
            return self._reject(
                "game_board_mismatch", topic, f"game {ev.game!r} is not bound to board {board!r}"
            )
        judged = self.authority.judge(board, ev)
        unverified = is_decision(ev) and bool(judged.data.get("unverified"))
        if unverified:
            # Only what the arbiter's command asked decides; the board's word is a proposal.
            self.drops.drop(
                "unverified_decision",
                topic,
                f"a {ev.type} that no command of the station asked: stored as a proposal",
                what="kept as a proposal",
            )
        ev = judged
        duplicate = self.writer.is_duplicate(ev.board, ev.session, ev.seq)
        self.writer.queued.add((ev.board, ev.session, ev.seq))
        self.writer.queue.put_nowait(("event", (ev, received_ms)))
        if duplicate:
            return None  # stored (or about to be) once already: it raises nothing again
        if unverified:
            self.raise_alert(alert_rules.unverified_alert(ev))
        for spec in alert_rules.alerts_for_event(ev):
            if self.deciding and self.hold is not None and self.hold(spec):
                continue  # a game record counts it first (domain/record_counts.py)
            self.raise_alert(spec)
        return None

    def _flooded(self, board: str) -> None:
        minute = wall_ms() // 60_000
        spec = alert_rules.AlertSpec(
            f"flood:{board}:{minute}",
            "flood",
            board,
            wall_ms(),
            detail={"rate_per_s": self.flood.rate, "burst": self.flood.burst},
        )
        self.raise_alert(spec)

    def _view(self, board: str) -> BoardView:
        view = self.boards.get(board)
        if view is None:
            view = self.boards[board] = BoardView(board)
        return view

    def _on_status(
        self,
        board: str,
        status: BoardStatus,
        received_ms: int,
        *,
        retained: bool = False,
        heard_before: int | None = None,
    ) -> None:
        view = self._view(board)
        old = view.status
        if old is not None and is_older(status, old):
            return  # an older status than the one we hold (a late retained copy)
        view.status = status.model_dump(exclude_none=True)
        # A board whose node is gone: its clock stands where the node left it (a node restarted
        # comes back from its last checkpoint, charging no one for the outage), so the pages run
        # no clock on past the last message before this one (a will comes up to 1.5 keepalives
        # later); for a status kept from before, past its state's ts (common.js ``asOf``).
        same = old is not None and all(old.get(k) == v for k, v in view.status.items())
        if status.state != "online" and heard_before is not None and not retained:
            view.status["away_since_ms"] = min(heard_before, received_ms)
        elif same and old is not None and "away_since_ms" in old:
            view.status["away_since_ms"] = old["away_since_ms"]  # the same news (a reconnect's)
        if old is not None and (old["node"], old["session"]) != (status.node, status.session):
            self.clock_truth.forget_answers(board)  # another node, or restarted: ask again
        self.writer.queue.put_nowait(
            ("board", {"board": board, "node": status.node, "status": view.status})
        )
        self.hub.publish("status", {"board": board, "status": view.status})
        spec = alert_rules.alert_for_status(board, status, received_ms=received_ms)
        if spec is not None and not (retained and self._left_from_before(board, status)):
            self._outage(board, (status.node, status.session, status.state), spec, received_ms)
        elif status.state == "online":
            for outage in self.outages.back(board):
                self.change_alert(
                    outage.alert_id, status="cleared", detail_add={"cleared": "back_online"}
                )
        if status.clash and not retained:  # two nodes with one identity: named once a day
            self.raise_alert(alert_rules.identity_clash_alert(board, status, received_ms))
        self._expect_from(view)

    def _outage(
        self, board: str, of: tuple[str, int, str], spec: alert_rules.AlertSpec, at_ms: int
    ) -> None:
        """One alert per node's outage: a board of a node already down joins its alert."""
        node, session, state = of
        outage = self.outages.joining(node, session, state, at_ms)
        if outage is not None:
            if self.alert_ledger.know(spec.key) and board not in outage.boards:
                outage.boards.add(board)
                outage.down.add(board)
                outage.detail = {**outage.detail, "boards": sorted(outage.boards, key=board_key)}
                self.change_alert(outage.alert_id, detail_add={"boards": outage.detail["boards"]})
            return
        spec = dataclasses.replace(spec, detail={**spec.detail, "boards": [board]})
        alert_id = self.raise_alert(spec)
        if alert_id is not None:
            self.outages.start(
                Outage(alert_id, node, session, state, at_ms, dict(spec.detail), {board}, {board})
            )

    def change_alert(self, alert_id: int, **fields: Any) -> None:
        """Change an alert the station raised (its detail, or cleared): through the writer,
        after its insert; an alert an arbiter has ruled keeps its ruling."""
        self.writer.queue.put_nowait(("alert_change", {"id": alert_id, **fields}))

    def _left_from_before(self, board: str, status: BoardStatus) -> bool:
        """Whether a retained status is an earlier event's leftover: said before this station
        started, of a board it has no business with (no pairing, no game bound to it, no event
        stored from it). A board that went offline in last month's event is shown offline but
        raises no alert; one of today's games found offline at a restart still alerts."""
        if status.ts >= self.started_ms:
            return False
        in_use = (
            board in self.paired
            or any(board in boards for boards in self.authority.game_boards.values())
            or any(key[0] == board for key in self.writer.stored)
        )
        if not in_use:
            log.info(
                "board %s: %s status left from before this station: no alert", board, status.state
            )
        return not in_use

    def _expect_from(self, view: BoardView) -> None:
        """The events a live board's state names are due (closes a trailing gap by rebirth).

        Only from a node that is online in the same session as its state: it is the one that
        can replay them. In the writer, after the events received before this state — a node
        publishes a state only once the events it names are sent."""
        status, state = view.status, view.state
        if status is None or state is None or status["state"] != "online":
            return
        if status["session"] != state["session"] or status["node"] != state["node"]:
            return
        self.writer.queue.put_nowait(("expect", (view.board, int(state["seq"]))))

    def _on_state(self, board: str, state: StateSnapshot) -> None:
        view = self._view(board)
        old = view.state
        if old is not None and (old["seq"], old["ts"]) > (state.seq, state.ts):
            return
        view.state = state.model_dump(mode="json")
        self.metrics.states_stored += 1
        self._expect_from(view)
        self.writer.queue.put_nowait(
            ("board", {"board": board, "node": state.node, "state": view.state})
        )
        self.hub.publish("state", {"board": board, "state": view.state})

    def _observe_offset(self, board: str, ts: int, received_ms: int, node: str | None) -> None:
        truth = self.clock_truth
        spec = truth.observe(board, ts=ts, received_ms=received_ms, node=node)
        self._view(board).offset_ms = truth.offset_ms(board)
        self._offset_verdict(board, spec)
        if truth.wanted:
            for wanted in truth.wanted:
                self.clock_probes.want(wanted)
            truth.wanted.clear()

    def _on_probe_answer(self, board: str, answer: RoundTrip | str, received_ms: int) -> None:
        view = self._view(board)
        node = view.status["node"] if view.status else None
        truth = self.clock_truth
        if isinstance(answer, RoundTrip):
            spec = truth.observe_round_trip(
                board,
                delay_ms=answer.delay_ms,
                behind_ms=answer.behind_ms,
                at_ms=received_ms,
                node=node,
            )
        else:
            spec = truth.refused(board, at_ms=received_ms, node=node)
        view.offset_ms = truth.offset_ms(board)
        self._offset_verdict(board, spec)

    def _offset_verdict(self, board: str, spec: alert_rules.AlertSpec | None) -> None:
        """Raise a clock_offset alert, or clear the open one when the clock is back in time."""
        if spec is not None:
            alert_id = self.raise_alert(spec)
            if alert_id is not None:
                self.outages.offsets[board] = alert_id
        elif board in self.outages.offsets and not self.clock_truth.is_off(board):
            alert_id = self.outages.offsets.pop(board)
            self.change_alert(alert_id, status="cleared", detail_add={"cleared": "offset_ok"})

    def probe_targets(self) -> list[str]:
        """The boards to probe: every board heard of that is not offline or lost, except those
        whose node refused a probe (an older node journals every command it answers)."""
        truth = self.clock_truth.boards
        return [
            b
            for b, v in self.boards.items()
            if (v.status is None or v.status["state"] == "online")
            and (b not in truth or truth[b].answers is not False)
        ]

    def raise_alert(self, spec: alert_rules.AlertSpec) -> int | None:
        """Decide an alert now: to the pages at once, to the store through the writer.

        Returns its id, or None when the fact already raised it (a replay).
        """
        if not self.deciding:
            return None  # the facts are in the nodes' journals: judged once they are replayed
        row = self.alert_ledger.decide(spec, wall_ms())
        if row is None:
            return None
        self.metrics.alerts_raised += 1
        self.hub.publish("alert", {"alert": row})
        self.writer.queue.put_nowait(("alert", row))
        return int(row["id"])

    # -- the writer -------------------------------------------------------------------------
    async def flush(self) -> None:
        """Wait until everything handled so far is stored."""
        await self.writer.queue.join()

    def pending(self) -> int:
        return self.writer.queue.qsize()
