"""The boards' game records to the federation (issue 29, docs/federation.md "Live records").

After every stored change of a record (``RecordDesk.listen``) the board's whole record goes out
as a wire ``GameRecord`` on ``qz/v1/{venue}/station/record/{board}``, retained, QoS 1: only the
station account may publish there, and the venue bridge carries it to the centre, where the hub
checks it before the public ``/live`` page draws it. Only the newest record of each board
waits while the broker is away (a newer one replaces it: the record is whole each time).
A record past the wire's ``MAX_RECORD_PLIES`` is not sent (counted in ``too_long``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from wire_contract.messages import Topics, encode
from wire_contract.records import GameRecord
from wire_contract.wallclock import wall_ms

__all__ = ["RecordRelay", "relay_records", "wire_record"]

log = logging.getLogger(__name__)
Publish = Callable[..., Awaitable[None]]


def wire_record(view: Any) -> GameRecord:
    """The wire form of a ``RecordView`` (venue_station/domain/records.py)."""
    moves = view.moves()
    return GameRecord.model_validate(
        {
            "board": view.board,
            "game": view.game,
            "round": view.round,
            "start_fen": view.record.start_fen,
            "moves": [m["iccs"] for m in moves],
            "clocks": [
                None
                if m["clock"] is None
                else {"used": m["clock"]["used_ms"], "left": m["clock"]["remaining_ms"]}
                for m in moves
            ],
            "ts": wall_ms(),
            **({"handicap": handicap.as_dict()} if (handicap := view.record.handicap) else {}),
        }
    )


class RecordRelay:
    def __init__(self, topics: Topics) -> None:
        self.topics = topics
        self.sent = 0
        self.too_long = 0
        self._waiting: dict[str, bytes] = {}
        self._wake = asyncio.Event()

    def put(self, view: Any) -> None:
        try:
            payload = encode(wire_record(view))
        except ValidationError as exc:  # e.g. past MAX_RECORD_PLIES: the page still has it
            self.too_long += 1
            log.warning("record of board %s not relayed: %s", view.board, exc.errors()[:1])
            return
        self._waiting[view.board] = payload
        self._wake.set()

    def waiting(self) -> int:
        return len(self._waiting)

    async def run(self, publish: Publish, connected: asyncio.Event) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._waiting:
                board, payload = next(iter(self._waiting.items()))
                await connected.wait()
                try:
                    await publish(self.topics.station_record(board), payload, retain=True)
                except Exception as exc:  # the broker went away meanwhile: again once back
                    log.info("record of board %s not sent yet (%s)", board, exc)
                    await asyncio.sleep(0.5)
                    continue
                if self._waiting.get(board) is payload:
                    del self._waiting[board]
                self.sent += 1


def relay_records(station: Any, collector: Any) -> RecordRelay:
    """Start relaying ``station.records``' changes through ``collector`` (the station's MQTT
    session) under the station's supervisor; the relay's counts are on ``station.record_relay``."""
    relay = station.record_relay = RecordRelay(station.topics)
    station.records.listen(relay.put)
    station.supervisor.start(
        "records-out", lambda: relay.run(collector.publish, collector.connected)
    )
    return relay
