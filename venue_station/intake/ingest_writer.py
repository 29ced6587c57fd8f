"""The single writer of the ingest: batches from its queue into the store, in arrival order.

``Ingest`` (ingest.py) handles each message as it arrives and puts what is to be stored on
``IngestWriter.queue``; the writer takes what queued up as one batch. A batch that fails is
retried item by item and an item the database refuses is set aside with its reason
(``containment``), and an alert raised through the ``raise_alert`` it was given; stored events
move the seq bookkeeping, settle rulings, update their games' outcomes and go out to the pages.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from venue_station.intake.containment import WriterHealth, describe_item, write_contained
from venue_station.intake.seqs import RangeSet, SeqTracker, watermark_after
from venue_station.live import alerts as alert_rules
from venue_station.live.fanout import EventFanout
from venue_station.live.metrics import Metrics
from venue_station.live.results import DECISIVE_TYPES, derive_game
from venue_station.store import alert_rows
from venue_station.store.database import Store
from wire_contract.messages import EventEnvelope
from wire_contract.wallclock import wall_ms

__all__ = ["IngestWriter", "key_of", "round_of"]

log = logging.getLogger(__name__)
_ROUND_RE = re.compile(r"^r(\d{1,3})-b")
_YIELD_EVERY = 64  # stored events handled between two turns of the event loop
_BATCH = 1000
SEQ_CLASH_KEPT = 500  # events kept aside a board and session for numbers the store holds


def key_of(ev: EventEnvelope) -> tuple[str, int, int]:
    return (ev.board, ev.session, ev.seq)


def round_of(game: str | None) -> int | None:
    m = _ROUND_RE.match(game or "")
    return int(m.group(1)) if m else None


class IngestWriter:
    """Stores what the ingest queues: ``("event", (envelope, received_ms))``, ``("alert",
    row)``, ``("alert_change", fields)``, ``("board", row)``, ``("expect", (board, seq))``.

    ``stored`` (every stored seq by board and session) and ``queued`` (the keys on their way)
    are how the ingest tells a duplicate at once; ``health`` is what ``/healthz`` shows of it.
    """

    def __init__(
        self,
        *,
        store: Store,
        metrics: Metrics,
        hub: EventFanout,
        seqs: SeqTracker,
        alert_ledger: alert_rules.AlertLedger,
        raise_alert: Callable[[alert_rules.AlertSpec], int | None],
    ) -> None:
        self.store = store
        self.metrics = metrics
        self.hub = hub
        self.seqs = seqs
        self.alert_ledger = alert_ledger
        self.raise_alert = raise_alert
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.stored: dict[tuple[str, int], RangeSet] = {}
        self.queued: set[tuple[str, int, int]] = set()
        self._aside: dict[tuple[str, int], set[tuple[int, int, str]]] = {}  # seq clashes kept
        self.health = WriterHealth()

    def is_duplicate(self, board: str, session: int, seq: int) -> bool:
        """Stored (or on its way to be) once already."""
        stored = self.stored.get((board, session))
        return (board, session, seq) in self.queued or (stored is not None and seq in stored)

    async def run(self) -> None:
        while True:
            batch = [await self.queue.get()]
            while len(batch) < _BATCH and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            try:
                await write_contained(batch, self._write, self._set_aside, self.health)
            finally:
                for kind, item in batch:
                    if kind == "event":
                        ev = item[0]
                        self.queued.discard((ev.board, ev.session, ev.seq))
                    self.queue.task_done()

    async def run_discard(self) -> None:
        """The writer of an ingest that only keeps the views (``deciding`` False): what it
        takes is not stored; the nodes replay it to the station that has a store."""
        while True:
            await self.queue.get()
            self.queue.task_done()

    async def _set_aside(self, kind: str, item: Any, exc: BaseException) -> None:
        """Keep an item the database refuses, with the reason; alert the arbiter; go on."""
        board, text = describe_item(kind, item)
        reason = f"{type(exc).__name__}: {str(exc)[:500]}"
        log.warning("set aside a %s of board %s that cannot be stored: %s", kind, board, reason)
        self.metrics.bad_payload(f"set_aside_{kind}")
        try:
            row_id = await self.store.set_aside(kind=kind, board=board, reason=reason, item=text)
        except Exception as again:  # not even that: the log line above is all that is left
            log.warning("could not keep the set-aside %s either: %s", kind, again)
            return
        if kind == "alert" and item.get("kind") == "set_aside":
            return
        self.raise_alert(
            alert_rules.AlertSpec(
                f"aside:{row_id}",
                "set_aside",
                (board or "-")[:32],
                wall_ms(),
                detail={"id": row_id, "kind": kind, "reason": reason},
            )
        )

    async def _write(self, batch: list[tuple[str, Any]]) -> None:
        events: list[tuple[EventEnvelope, int]] = [item for kind, item in batch if kind == "event"]
        board_rows: dict[str, dict[str, Any]] = {}
        alerts: list[dict[str, Any]] = [item for kind, item in batch if kind == "alert"]
        for kind, item in batch:
            if kind == "board":
                board_rows.setdefault(item["board"], {}).update(item)
        if events:  # the board rows go in the events' transaction
            await self._write_events(events, board_rows, alerts)
            board_rows = {}
        elif alerts:
            await self.store.insert_events([], alerts=alerts)
        self.alert_ledger.stored([a["id"] for a in alerts])
        for kind, item in batch:
            if kind == "alert_change":  # after the inserts: the alert may be in this batch
                changed = await alert_rows.change_alert(self.store.engine, **item)
                if changed is not None:
                    self.hub.publish("alert", {"alert": changed})
        mono = time.monotonic()
        for kind, item in batch:
            if kind != "expect":
                continue
            board, seq = item
            if self.seqs.expect(board, seq, mono).gap_opened:
                self.metrics.gaps_detected += 1
                log.info("board %s: its state names seq %d, not all stored", board, seq)
        if board_rows:
            await self.store.upsert_boards(list(board_rows.values()))

    async def _write_events(
        self,
        events: list[tuple[EventEnvelope, int]],
        board_rows: dict[str, dict[str, Any]],
        alerts: list[dict[str, Any]],
    ) -> None:
        rows: list[dict[str, Any]] = []
        unique: dict[tuple[str, int, int], EventEnvelope] = {}
        twins: list[tuple[EventEnvelope, int]] = []  # another event on a number in this batch
        for ev, received in events:
            key = (ev.board, ev.session, ev.seq)
            if key in unique:
                self.metrics.duplicates_dropped += 1
                if (unique[key].ts, unique[key].type) != (ev.ts, ev.type):
                    twins.append((ev, received))  # a clash, not a repeat: _clashes keeps it
                continue
            unique[key] = ev
            rows.append(
                {
                    "board": ev.board,
                    "session": ev.session,
                    "seq": ev.seq,
                    "node": ev.node,
                    "game": ev.game,
                    "round": round_of(ev.game),
                    "ts": ev.ts,
                    "type": ev.type,
                    "replay": ev.replay,
                    "red_ms": ev.clock.red_ms,
                    "black_ms": ev.clock.black_ms,
                    "running": ev.clock.running,
                    "data": ev.data,
                    "received_ms": received,
                }
            )

        # The batch's boards as the tracker holds them now: ``with_boards`` runs in the store's
        # writing thread (SQLite) and must not read the tracker the loop may touch meanwhile.
        marks = {board: self.seqs.mark(board) for board, _session, _seq in unique}

        def with_boards(inserted: set[tuple[str, int, int]]) -> list[dict[str, Any]]:
            # Each board's last_seq as it will be once its inserted events are tracked below.
            new: dict[str, list[int]] = {}
            for board, _session, seq in inserted:
                new.setdefault(board, []).append(seq)
            rows_out = {board: dict(row) for board, row in board_rows.items()}
            for board, seqs in new.items():
                last = watermark_after(marks[board], seqs)
                rows_out.setdefault(board, {"board": board})["last_seq"] = last
            return list(rows_out.values())

        # The batch's alerts and board rows in its events' transaction (one commit), before
        # any ruling below settles an alert.
        inserted = await self.store.insert_events(rows, alerts=alerts, boards=with_boards)
        self.metrics.duplicates_dropped += len(rows) - len(inserted)
        if len(inserted) < len(rows) or twins:
            await self._clashes([(ev, r) for ev, r in events if unique.get(key_of(ev)) is ev
                                 and key_of(ev) not in inserted] + twins)  # fmt: skip
        stored_ms = wall_ms()
        mono = time.monotonic()
        games: set[str] = set()
        for n, (key, ev) in enumerate(unique.items()):
            if n % _YIELD_EVERY == _YIELD_EVERY - 1:
                # A board's burst is hundreds of events in one batch: let a flag's ingest and the
                # arbiters' streams in between, rather than after all of them.
                await asyncio.sleep(0)
            if key not in inserted:
                continue
            self.stored.setdefault((ev.board, ev.session), RangeSet()).add(ev.seq)
            self.metrics.events_stored += 1
            self.metrics.observe_lag(max(0, stored_ms - ev.ts))
            step = self.seqs.add(ev.board, ev.seq, mono)
            if step.reordered:
                self.metrics.events_reordered += 1
            if step.gap_opened:
                self.metrics.gaps_detected += 1
                log.info(
                    "board %s: gap in seq, missing %s", ev.board, self.seqs.get(ev.board).missing(3)
                )
            if step.gap_closed:
                self.metrics.gaps_closed += 1
                log.info(
                    "board %s: gap closed at seq %d", ev.board, self.seqs.get(ev.board).watermark
                )
            ruling = alert_rules.ruling_of(ev)
            if ruling is not None:
                await self._settle(ev.board, *ruling)
                cause = alert_rules.settled_alert_kind(ev.type, ev.data)
                if cause is not None and ev.game is not None:
                    side = ev.data.get("side") if cause == "late" else None
                    alert = await alert_rows.find_open_alert(
                        self.store.engine, ev.board, cause, ev.game, side=side
                    )
                    await self._settle_row(alert, ruling[1])
            if ev.game and ev.type in DECISIVE_TYPES:
                games.add(ev.game)
            self.hub.publish("event", {"board": ev.board, "event": ev.model_dump(mode="json")})
        for game in games:
            await self.update_game(game)

    async def update_game(self, game: str) -> None:
        outcome = derive_game(await self.store.game_events(game, DECISIVE_TYPES))
        if await self.store.game(game) is None:
            return  # a game the station did not pair (a test game, a carry-over id)
        await self.store.set_game_result(
            game, outcome.winner if outcome.decided else None, outcome.result, outcome.reason
        )
        self.hub.publish(
            "game",
            {
                "game": game,
                "result": outcome.result,
                "reason": outcome.reason,
                "fouls": outcome.fouls,
                "status": outcome.status,  # a pending proposal is shown as one, never counted
                "proposed": outcome.proposed,
            },
        )

    async def _clashes(self, dropped: list[tuple[EventEnvelope, int]]) -> None:
        """Events not stored because their key is: a repeat (the same event again) is a quiet
        duplicate; one whose key holds another event (another time or type) is a node on
        numbers the station holds for another life of the board — a Pi replaced when the
        broker could not tell it where the board was. Dropped, its game was lost without a
        word: it is kept aside (nothing lost) and one alert a board and session says so."""
        stamps = await self.store.reads.event_stamps(key_of(ev) for ev, _ in dropped)
        for ev, received in dropped:
            stored = stamps.get(key_of(ev))
            if stored is None or stored == (ev.ts, ev.type):
                continue
            self.metrics.bad_payload("seq_clash")
            # each clashing event kept once, at most SEQ_CLASH_KEPT a board and session: the
            # same one sent again, or a board's account flooding forged ones, fills nothing
            kept = self._aside.setdefault((ev.board, ev.session), set())
            if (ev.seq, ev.ts, ev.type) in kept or len(kept) >= SEQ_CLASH_KEPT:
                continue
            kept.add((ev.seq, ev.ts, ev.type))
            reason = (
                f"seq clash: board {ev.board} session {ev.session} seq {ev.seq} holds another "
                f"event ({stored[1]} at {stored[0]}); this {ev.type} at {ev.ts} is kept here"
            )
            log.warning("set aside: %s", reason)
            _, text = describe_item("event", (ev, received))
            await self.store.set_aside(kind="event", board=ev.board, reason=reason, item=text)
            self.raise_alert(alert_rules.seq_clash_alert(ev.board, ev.session, ev.node, wall_ms()))

    async def _settle(self, board: str, seq: int, status: str) -> None:
        kinds = ("foul_pending", "forfeit_pending", "warning")
        await self._settle_row(await self.store.find_alert(board, kinds, seq), status)

    async def _settle_row(self, alert: dict[str, Any] | None, status: str) -> None:
        if alert is not None and alert["status"] in ("open", "acked"):
            updated = await self.store.update_alert(
                alert["id"], status=status, by="board", only_open=True
            )
            if updated is not None:
                self.hub.publish("alert", {"alert": updated})
