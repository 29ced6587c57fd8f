"""The hub's asks for events it lacks, answered from the station's store (docs/federation.md).

A NATS node that dies holding events it had acknowledged to the venue's bridge (in flight to
the stream's leader, or not yet replicated) loses them for the centre: the bridge saw them
acked and never sends them again. The hub finds the hole (a board's seqs rise by one) and asks
on ``qz/v1/{venue}/station/resend`` (``ResendAsk``, the one topic the bridge brings in). The
station answers with the copies it stored, on ``qz/v1/{venue}/resent/board/{board}/event``,
which the bridge carries out as the board's own events; the hub keeps each key once.

Bounded: at most ``QUEUE_BOUND`` asks wait (more are dropped and counted: the hub asks again),
the same ask is answered at most once every ``AGAIN_S``, an ask names at most
``MAX_RESEND_EVENTS`` seqs (the wire model refuses more), and at most ``EVENTS_PER_S`` copies
go out a second (the venue's own traffic first: a centre asking too much only waits). A bad
ask is counted and logged, never acted on. The copy is the station's: its own marks
(``unverified``, ``station_set``) are left out, since the wire takes none of them; a proposal
the station made of a board's unasked decision stays ``pending`` (the hub counts it as one
either way).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from venue_station.intake.signed_txn import STATION_SET
from wire_contract.messages import EventEnvelope, ResendAsk, Topics, WireError, decode, encode

__all__ = ["Resender", "answer_resend_asks"]

log = logging.getLogger(__name__)
Publish = Callable[[str, bytes], Awaitable[None]]
Read = Callable[[str, int, int], Awaitable[list[dict[str, Any]]]]

QUEUE_BOUND = 64
AGAIN_S = 5.0  # the same ask answered at most this often (the hub asks again every ~10 s)
EVENTS_PER_S = 200  # copies a second at most (~80 KB/s: a hall on a 4G uplink keeps its own)
STATION_MARKS = ("unverified", STATION_SET)


def wire_copy(row: dict[str, Any]) -> EventEnvelope:
    """The wire event of a stored row (``replay`` true: it is sent again)."""
    data = {k: v for k, v in (row["data"] or {}).items() if k not in STATION_MARKS}
    return EventEnvelope.model_validate(
        {
            "board": row["board"],
            "node": row["node"],
            "game": row["game"],
            "session": row["session"],
            "seq": row["seq"],
            "ts": row["ts"],
            "type": row["type"],
            "replay": True,
            "clock": {
                "red_ms": row["red_ms"],
                "black_ms": row["black_ms"],
                "running": row["running"],
            },
            "data": data,
        }
    )


class Resender:
    def __init__(self, topics: Topics, read: Read) -> None:
        self.topics = topics
        self._read = read
        self._queue: asyncio.Queue[ResendAsk] = asyncio.Queue(QUEUE_BOUND)
        self._answered: dict[tuple[str, int, int], float] = {}
        self.asks = 0
        self.sent = 0
        self.refused: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"<Resender asks={self.asks} sent={self.sent} refused={self.refused}>"

    def _refuse(self, why: str, detail: str) -> None:
        self.refused[why] = self.refused.get(why, 0) + 1
        level = logging.INFO if why == "again" else logging.WARNING
        log.log(level, "resend ask refused (%s): %s", why, detail[:200])

    def take(self, payload: bytes) -> None:
        """One ask as it came in (from the ingest, on the loop): never raises."""
        try:
            ask = decode(ResendAsk, payload)
        except WireError as exc:
            return self._refuse("bad", str(exc))
        try:
            self._queue.put_nowait(ask)
        except asyncio.QueueFull:
            return self._refuse("full", f"board {ask.board}: {QUEUE_BOUND} asks wait already")
        self.asks += 1

    async def run(self, publish: Publish, connected: asyncio.Event) -> None:
        while True:
            ask = await self._queue.get()
            key = (ask.board, ask.from_seq, ask.to_seq)
            now = time.monotonic()
            if now - self._answered.get(key, -AGAIN_S) < AGAIN_S:
                self._refuse("again", f"board {ask.board} seqs {ask.from_seq}-{ask.to_seq}")
                continue
            if len(self._answered) > 4 * QUEUE_BOUND:  # only the recent ones matter
                self._answered = {k: t for k, t in self._answered.items() if now - t < AGAIN_S}
            self._answered[key] = now
            rows = await self._read(ask.board, ask.from_seq, ask.to_seq)
            sent = await self._send(rows, self.topics.resent_event(ask.board), publish, connected)
            log.info(
                "board %s: %d of %d stored events of seqs %d-%d sent again for the hub",
                ask.board, sent, len(rows), ask.from_seq, ask.to_seq,
            )  # fmt: skip

    async def _send(
        self,
        rows: list[dict[str, Any]],
        topic: str,
        publish: Publish,
        connected: asyncio.Event,
    ) -> int:
        sent = 0
        for row in rows:
            try:
                payload = encode(wire_copy(row))
            except ValidationError as exc:  # a stored event the contract no longer takes
                self._refuse("unsendable", f"{row['board']}/{row['seq']}: {exc}")
                continue
            await connected.wait()
            try:
                await publish(topic, payload)
            except Exception as exc:  # the broker went away: the hub asks again
                log.info("resent event not sent (%s): the hub will ask again", exc)
                break
            sent += 1
            self.sent += 1
            await asyncio.sleep(1 / EVENTS_PER_S)  # paced: the venue's own traffic goes first
        return sent


def answer_resend_asks(station: Any, collector: Any) -> Resender:
    """Answer the hub's asks that reach ``station.ingest`` from ``station.store``, through
    ``collector`` (the station's MQTT session), under the station's supervisor; the counts are
    on ``station.resender``."""
    resender = station.resender = Resender(station.topics, station.store.board_events)
    station.ingest.on_resend = resender.take
    station.supervisor.start("resend", lambda: resender.run(collector.publish, collector.connected))
    return resender
