"""A board link's publishes: QoS 1, at most ``MAX_INFLIGHT`` awaiting their PUBACK at once.

Every publish of a board (events, state, status, replies) takes a turn in one window, first
come first served (the semaphore wakes its waiters in order), so paho sends them in call order
and overlapping round trips keep the events' order. aiomqtt warns past 10 pending calls
(subscribes included): the window stays below it.

``launch`` is the way out for events the link learns are on disk while its drain is idle
(``BoardLink.durable``): published in that very call (``publish_now``; the board's client
writes to the socket in the call that publishes), their acknowledgements left for the drain
to await (``settle``) and mark sent. A task would publish them only a turn of the loop later,
after whatever else the turn holds (for a flag: its result, the next state; issue 30). They
take no turn in the window: at most ``MAX_INFLIGHT`` of them, launched only while nothing of
the drain's is in flight; beside a replay or a reply in flight paho queues what passes its
own limit of ``MAX_INFLIGHT``, in order, and aiomqtt never counts them as pending calls.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

import aiomqtt

from board_nodes.journal import OutboxRow
from wire_contract.aiomqtt_adapter import publish_now

__all__ = ["MAX_INFLIGHT", "PUBLISH_TIMEOUT_S", "PublishWindow", "as_replay"]

log = logging.getLogger(__name__)

# QoS 1 publishes awaiting their PUBACK per connection. aiomqtt warns on every call past 10
# pending calls (subscribes included), so stay below it; 8 overlapping round trips already
# keep a 200 ms link busy at 40 events/s, far beyond a board's rate.
MAX_INFLIGHT = 8
PUBLISH_TIMEOUT_S = 10  # a PUBACK (or CONNACK) not back by then: the connection is dead


class PublishWindow:
    """One connection's window of publishes; ``reset`` for the next connection."""

    def __init__(self, board_id: str) -> None:
        self.board_id = board_id
        self._slots = asyncio.Semaphore(MAX_INFLIGHT)
        # published by ``launch``, not yet seen acknowledged (by ``settle``)
        self.launched: list[tuple[OutboxRow, asyncio.Future[None]]] = []

    def reset(self) -> None:
        """A new connection: no slot held by a dead one, nothing of it in flight (what it
        launched is unsent still and goes out again)."""
        self._slots = asyncio.Semaphore(MAX_INFLIGHT)
        self.launched = []

    async def send(
        self, client: aiomqtt.Client, topic: str, payload: bytes, *, retain: bool = False
    ) -> None:
        """One QoS 1 publish, waiting its turn among at most ``MAX_INFLIGHT``."""
        async with self._slots:
            await client.publish(topic, payload, qos=1, retain=retain)

    async def events(
        self,
        client: aiomqtt.Client,
        topic: str,
        rows: list[OutboxRow],
        *,
        replay: Callable[[OutboxRow], bool],
    ) -> None:
        """Publish journaled events, marked ``replay`` where asked, overlapping their round
        trips in the window."""

        def body(row: OutboxRow) -> bytes:
            return (as_replay(row.payload) if replay(row) else row.payload).encode()

        if len(rows) == 1:  # a live event: published in this turn, not a task's turn later
            await self.send(client, topic, body(rows[0]))
            return
        await asyncio.gather(*(self.send(client, topic, body(r)) for r in rows))

    def launch(
        self, client: aiomqtt.Client, topic: str, rows: list[OutboxRow], *, replayed_upto: int
    ) -> None:
        """Publish ``rows`` now, in order, up to the first one that is a replay (ids up to
        ``replayed_upto``: the drain marks those so). Only with nothing in flight: the caller
        (the link, while its drain waits) sees to that."""
        try:
            for row in rows:
                if row.id <= replayed_upto:
                    break
                ack = publish_now(client, topic, row.payload.encode())
                self.launched.append((row, ack))
        except aiomqtt.MqttError:  # the connection is going: the drain will hear it
            pass
        except Exception:  # never into the board's turn: the drain sends them instead
            log.exception("board %s: publishing at once failed", self.board_id)

    async def settle(self) -> list[OutboxRow]:
        """What ``launch`` published, once the broker has acknowledged all of it (else the
        connection is dead: aiomqtt's own error for a publish not acknowledged in time)."""
        launched, self.launched = self.launched, []
        try:
            async with asyncio.timeout(PUBLISH_TIMEOUT_S):
                await asyncio.gather(*(ack for _, ack in launched))
        except TimeoutError:
            raise aiomqtt.MqttError("Operation timed out") from None
        return [row for row, _ in launched]


def as_replay(payload: str) -> str:
    obj = json.loads(payload)
    obj["replay"] = True
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
