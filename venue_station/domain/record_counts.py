"""The natural move limit and the early-draw check on the game records (录谱, issue 29).

The node counts presses: its ``move_count`` ``reached`` event (自然限着) and its pending
``draw_too_early`` warning (Wulong 三、1) raise alerts on the clock's count. Where a game has a
record, the station counts its moves instead (clock_service.xiangqi.counts): the ingest hands
those two alerts of a recorded game to ``CountDesk.hold`` instead of raising them, and the
desk raises each once the record says so, its detail naming the count used (``count``:
``record`` or ``presses``, the fallback).

- **The move limit**: counted from the presses before the count's ``started`` event, on the
  record while it agrees with the presses (a move or two behind is waited for; a record ahead,
  its presses on their way, is counted up to the presses), the claimant's checks per the
  profile (``move_limit.claimant_checks_counted``). The claimant is the one the arbiter named
  when starting the count (``move_count`` ``claimant``, kept in the station's command log; none
  named: no check is left out). A held limit is looked at again after every change of the
  record and every second (the presses go on); a game decided meanwhile, or a count the arbiter
  started again, needs no alert any more (logged).
- **The early draw**: the record's full moves where the record matches the presses, else the
  clock's; raised at once.

A held alert keeps the key of the event that raised it, so it is raised once, also across a
restart: at start the desk holds again every stored fact whose alert the ledger does not know.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from clock_service.handicap import handicap_of
from clock_service.regulation import Regulation
from clock_service.side import Side
from clock_service.xiangqi import START_FEN, Move, Press, Record, pair_with_presses
from clock_service.xiangqi.counts import early_draw_count, natural_move_count
from venue_station.domain.exports import clock_log
from venue_station.live.alerts import AlertSpec, fact_alert
from venue_station.live.results import derive_game

if TYPE_CHECKING:
    from venue_station.store.database import Store

__all__ = ["CountDesk", "counted_on_record"]

log = logging.getLogger(__name__)
_MOVES = re.compile(r"\bmoves=(\d+)")


def counted_on_record(spec: AlertSpec) -> bool:
    """Is this alert one the record can count: a move limit reached, an early draw?"""
    if spec.kind == "move_limit":
        return True
    return spec.kind == "warning" and spec.detail.get("reason") == "draw_too_early"


class CountDesk:
    """The move-limit and early-draw alerts of recorded games, held until counted."""

    def __init__(
        self,
        store: Callable[[], Store],
        regulation: Regulation,
        raise_alert: Callable[[AlertSpec], int | None],
        flush: Callable[[], Any],
    ) -> None:
        self._store = store
        self.regulation = regulation
        self._raise = raise_alert
        self._flush = flush
        self.held: dict[str, AlertSpec] = {}  # alert key -> the alert waiting on the count
        self._recorded: set[str] = set()  # games with a recorded move
        self._wake = asyncio.Event()
        self._deciding = asyncio.Lock()  # one decision at a time: the loop's, or a caller's

    async def load(self, known: Callable[[str], bool]) -> None:
        """At start: the recorded games, and the facts held when the station stopped (stored,
        their alert never raised: ``known`` is the alert ledger's)."""
        store = self._store()
        self._recorded = await store.duties.recorded_games()
        for row in await store.duties.count_facts():
            spec = fact_alert(row)
            if spec is not None and counted_on_record(spec) and not known(spec.key):
                self.held[spec.key] = spec
        if self.held:
            log.info("%d move-count alerts held again for their records", len(self.held))
            self._wake.set()

    # -- from the ingest and the record desk (synchronous) ------------------------------------
    def hold(self, spec: AlertSpec) -> bool:
        """Take an alert the record counts (True), or leave it to be raised at once."""
        if spec.game is None or spec.game not in self._recorded or not counted_on_record(spec):
            return False
        self.held[spec.key] = spec
        self._wake.set()
        return True

    def record_changed(self, view: Any) -> None:
        """A RecordDesk listener: which games have a record, and a held count to look at."""
        if view.ply:
            self._recorded.add(view.game)
        else:
            self._recorded.discard(view.game)
        if self.held:
            self._wake.set()

    # -- deciding -----------------------------------------------------------------------------
    async def run(self, every_s: float = 1.0) -> None:
        """Look at the held alerts when woken, and every ``every_s`` while any is held."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(every_s):
                    await self._wake.wait()
            self._wake.clear()
            if self.held:
                await self.decide()

    async def decide(self) -> list[int]:
        """Raise every held alert its count now decides; the ids raised."""
        async with self._deciding:  # two at once would both judge, and raise, the same alert
            await self._flush()  # the presses the ingest holds are stored first
            raised = []
            for key, spec in list(self.held.items()):
                out = await self._judge(spec)
                if out is None:
                    continue
                del self.held[key]
                if isinstance(out, AlertSpec):
                    alert_id = self._raise(out)
                    if alert_id is not None:
                        raised.append(alert_id)
            if raised:
                await self._flush()
            return raised

    async def _judge(self, spec: AlertSpec) -> AlertSpec | Literal[False] | None:
        """The alert to raise, False to drop it, None to keep holding it."""
        assert spec.game is not None
        store = self._store()
        events = await store.game_events(spec.game)
        moves = clock_log(events)
        presses = [Press(Side(r.side), r.used_ms, r.remaining_ms) for r in moves]
        stored = await store.record_rows.record(spec.game)
        record = None
        if stored is not None and stored["moves"]:
            record = Record(
                start_fen=str(stored["start_fen"] or START_FEN),
                moves=tuple(Move.from_iccs(m) for m in stored["moves"]),
                handicap=handicap_of(events),  # 让二先: the receiver's given moves in a row
            )
        pairing = None if record is None else pair_with_presses(record, presses)
        if spec.kind == "warning":
            found = _MOVES.search(str(spec.detail.get("detail") or ""))
            by_clock = int(found.group(1)) if found else len(presses) // 2
            source, full = early_draw_count(record, pairing, press_full_moves=by_clock)
            minimum = self.regulation.draw.min_moves
            return _with(spec, count=source, full_moves=full, min_moves=minimum)
        if derive_game(events, self.regulation).decided:
            log.info("move limit of %s: the game was decided meanwhile, no alert", spec.game)
            return False
        start = _count_start(events, spec.seq)
        latest = _count_start(events, None)
        if latest is not None and (start is None or latest["seq"] != start["seq"]):
            log.info("move limit of %s: the arbiter started a new count, no alert", spec.game)
            return False
        start_ply = 0
        claimant = None
        if start is not None:
            start_ply = sum(1 for e in events if e["type"] == "move" and e["seq"] < start["seq"])
            claimant = await store.duties.move_count_claimant(
                spec.board, before_ms=int(start["received_ms"])
            )
        count = natural_move_count(
            record,
            pairing,
            presses=len(presses),
            start_ply=start_ply,
            limit=int(spec.detail.get("limit") or self.regulation.move_limit.moves),
            claimant=None if claimant is None else Side.parse(claimant),
            checks_counted=self.regulation.move_limit.claimant_checks_counted,
        )
        if not count.reached:
            return None
        # reached with the last press counted (later than the node's count, on a record)
        last = max((int(e["ts"]) for e in events if e["type"] == "move"), default=spec.ts)
        return dataclasses.replace(_with(spec, **count.as_detail()), ts=max(spec.ts, last))


def _with(spec: AlertSpec, **detail: Any) -> AlertSpec:
    return dataclasses.replace(spec, detail={**spec.detail, **detail})


def _count_start(
    events: Sequence[Mapping[str, Any]], before: int | None
) -> Mapping[str, Any] | None:
    """The move count's ``started`` event that the reached one ended (the last before it)."""
    started = [
        e
        for e in events
        if e["type"] == "move_count"
        and e["data"].get("status") == "started"
        and (before is None or e["seq"] < before)
    ]
    return started[-1] if started else None
