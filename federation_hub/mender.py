"""The hub mends its archive: it asks a venue again for the events it lacks.

NATS acknowledges a bridge's QoS 1 message before the events stream has it: a centre node
killed with messages in flight to the stream's leader (or a leader killed before they were
replicated) loses them, and the venue's bridge, having its PUBACKs, never sends them again
(measured: tests/federation/test_federation_acceptance.py lost 1–296 events this way). A
board's seq rises by one per event, so the hub can see each hole (``HoleFinder``: between
stored events, and past the last one up to the seq the board's newest state names).

Every ``every_s`` the mender reads the holes. A hole is not yet a loss while its events may
still wait in the stream for a hub (behind a backlog, or fetched by a hub that died and
redelivered after ``ack_wait``): the mender notes the stream's position when it first sees a
hole and asks only once the hubs have stored everything up to it (the consumer's ack floor) and
the hole is still there. Then it is asked for on ``{prefix}.qz.v1.{venue}.station.resend`` (wire
``ResendAsk``, at most ``MAX_RESEND_EVENTS`` seqs an ask; the venue's bridge brings it in, its
station answers with its stored copies as the board's events) and asked again every
``again_s`` while it stays open. At most ``max_asks`` asks a pass. Core NATS, no ack: an ask
lost is asked again; several hubs asking the same is harmless (the store keeps a key once).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from federation_hub.centre_conf import resend_subject
from federation_hub.store import HubStore
from wire_contract.bounds import MAX_RESEND_EVENTS
from wire_contract.messages import ResendAsk, encode
from wire_contract.wallclock import wall_ms

__all__ = ["GapMender", "HoleFinder"]

log = logging.getLogger(__name__)
Publish = Callable[[str, bytes], Awaitable[None]]
# (the events stream's position now, the position up to which every message is stored)
Mark = Callable[[], Awaitable[tuple[int, int]]]
Hole = tuple[str, str, int, int]


SCAN_LIMIT = 2_000  # seqs read past a board's contiguous mark in one pass
PACE = 20  # the next pass waits at least this many times the last one took


@dataclass
class _Mark:
    session: int
    upto: int  # every seq of the board up to here is stored (or was before the hub knew it)


class HoleFinder:
    """The holes in each board's stored seqs, read incrementally: per board the hub remembers
    the seq up to which its events are contiguous and reads only past it (one index range of
    the events' primary key), so a pass costs the events stored since the last one, not the
    archive (``gaps()`` over 5 M events took 4.6-6.9 s; this is what runs every few seconds).
    A board first met starts at its first stored seq (no asks for what came before the hub);
    a new session goes on from the old mark (a board's seq rises across sessions)."""

    def __init__(self, store: HubStore, *, limit: int = SCAN_LIMIT) -> None:
        self.store, self.limit = store, limit
        self._marks: dict[tuple[str, str], _Mark] = {}

    async def holes(self) -> list[Hole]:
        found: list[Hole] = []
        for venue, board, session, top in await self.store.board_heads():
            mark = self._marks.get((venue, board))
            if mark is None or mark.session != session:
                first = await self.store.first_seq(venue, board, session)
                upto = top if first is None else first - 1
                if mark is not None:  # a new session of a board the hub knew
                    upto = mark.upto if first is None else min(mark.upto, first - 1)
                mark = self._marks[(venue, board)] = _Mark(session, upto)
            if top <= mark.upto:
                continue
            seqs = await self.store.seqs_after(venue, board, session, mark.upto, self.limit)
            expected, contiguous = mark.upto + 1, True
            for seq in seqs:
                if seq > expected:
                    found.append((venue, board, expected, seq - 1))
                    contiguous = False
                expected = seq + 1
                if contiguous:
                    mark.upto = seq
            if len(seqs) < self.limit and top >= expected:
                found.append((venue, board, expected, top))  # the tail the state names
        return found


class GapMender:
    def __init__(
        self,
        store: HubStore,
        *,
        prefix: str = "fed",
        every_s: float = 5.0,
        again_s: float = 10.0,
        max_asks: int = 100,
    ) -> None:
        if every_s <= 0 or again_s < every_s:
            raise ValueError(f"every_s {every_s}, again_s {again_s}: 0 < every_s <= again_s")
        self.finder, self.prefix = HoleFinder(store), prefix
        self.every_s, self.again_s, self.max_asks = every_s, again_s, max_asks
        self._first: dict[Hole, int] = {}  # open hole -> the stream's position when first seen
        self._asked_at: dict[Hole, float] = {}

    def __repr__(self) -> str:
        return f"<GapMender open={len(self._first)} asked_lately={len(self._asked_at)}>"

    async def run(self, publish: Publish, mark: Mark) -> None:
        took = 0.0
        while True:
            # Paced by its own cost too: at most ~5 % of the time reading the store.
            await asyncio.sleep(max(self.every_s, PACE * took))
            started = time.monotonic()
            try:
                await self.mend(publish, mark)
            except Exception as exc:  # the store or NATS away: the holes wait for the next pass
                log.warning("mender: pass failed: %s", exc)
            took = time.monotonic() - started

    async def mend(self, publish: Publish, mark: Mark) -> int:
        """One pass; returns how many asks it sent."""
        position, stored = await mark()
        holes = set(await self.finder.holes())
        seen = self._first
        self._first = {h: seen.get(h, position) for h in holes}
        # Seen in the pass before, and every message the stream held then is stored: lost.
        due = sorted(h for h in holes if h in seen and seen[h] <= stored)
        now = time.monotonic()
        self._asked_at = {h: t for h, t in self._asked_at.items() if h in holes}
        sent = 0
        for hole in due:
            if sent >= self.max_asks:
                break
            if now - self._asked_at.get(hole, -self.again_s) < self.again_s:
                continue
            venue, board, first, last = hole
            ask = ResendAsk(
                board=board,
                from_seq=first,
                to_seq=min(last, first + MAX_RESEND_EVENTS - 1),
                ts=wall_ms(),
            )
            await publish(resend_subject(self.prefix, venue), encode(ask))
            self._asked_at[hole] = now
            sent += 1
        if sent:
            log.info("mender: asked the venues again for %d holes", sent)
        return sent
