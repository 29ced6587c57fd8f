"""The station's one MQTT client: a persistent session that feeds ``Ingest`` and sends commands.

MQTT 5, ``clean_start=False`` with a session expiry and a stable client id, so the broker keeps
the station's subscription and queues its QoS 1 messages while it is away; the subscription is
no-local, so the station never hears its own commands. The station status is retained:
``online`` after connecting, the will ``lost`` on a broken connection, ``offline`` on a clean stop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from venue_station.config import BrokerConfig
from venue_station.intake.ingest import Ingest
from venue_station.intake.read_gate import ReadGateQueue, gated_queue
from venue_station.live.alerts import broker_down_alert
from wire_contract.aiomqtt_adapter import (
    GONE,
    end_queue_when_gone,
    gate_reading,
    link_gone,
    paho_client,
    socket_reader,
)
from wire_contract.broker import mqtt_client
from wire_contract.messages import StationStatus, Topics, encode
from wire_contract.wallclock import wall_ms

__all__ = ["Collector"]

log = logging.getLogger(__name__)
BACKLOG_MS = 5000  # after a (re)connect, messages may be the broker's queue for us, not live
# Bounded intake (issue 18): past ~500 boards at 10x the receive side grew to 1.2 GB, because
# paho acks each QoS 1 message on arrival and the broker sends the next at once. Now a message
# is acked only once the writer's queue has room, and the broker keeps at most RECEIVE_WINDOW
# unacked messages in flight to us (MQTT 5 Receive Maximum; Mosquitto's max_inflight_messages
# caps it too): the rest waits at the broker (its queue is sized for an outage). Mosquitto
# 2.0 skips the Receive Maximum when it resumes a session with a backlog, so the socket is not
# read while RECEIVE_WINDOW messages wait for the collector (read_gate.py): the same bound.
RECEIVE_WINDOW = 1000
WRITER_QUEUE_BOUND = 5000
ROOM_POLL_S = 0.005  # only while the writer is full
HANDLE_BURST = 256  # messages handled in one turn of the loop at most (~10-20 ms)


class Collector:
    def __init__(
        self, config: BrokerConfig, topics: Topics, ingest: Ingest, *, session: int
    ) -> None:
        self.config = config
        self.topics = topics
        self.ingest = ingest
        self.session = session
        self.client_id = config.client_id or f"qz-station-{topics.venue}"
        self.connected = asyncio.Event()
        self._client: aiomqtt.Client | None = None
        self._gate: type[ReadGateQueue] | None = None  # the current client's queue class
        self.connections = 0
        # Wall ms since when the station has had no broker (from its start until the first
        # connection): every page shows it, and the boards' views are not live meanwhile.
        self.down_since_ms: int | None = wall_ms()
        self.up_since_ms: int | None = None  # wall ms the current connection was made

    def _lost(self, *, stopping: bool = False) -> None:
        """The link is gone: the arbiter is alerted, unless the station itself is stopping
        (a clean stop is no broker lost: every restart left a false alarm)."""
        if self.connected.is_set() or self.down_since_ms is None:
            self.down_since_ms = wall_ms()
            if not stopping:
                self.ingest.raise_alert(broker_down_alert(self.topics.venue, self.down_since_ms))
        self._client = None
        self.connected.clear()

    def _status(self, state: str) -> bytes:
        return encode(StationStatus(state=state, session=self.session, ts=wall_ms()))  # type: ignore[arg-type]

    def _make_client(self) -> aiomqtt.Client:
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = self.config.session_expiry_s
        props.ReceiveMaximum = RECEIVE_WINDOW
        will = aiomqtt.Will(self.topics.station_status, self._status("lost"), qos=1, retain=True)
        # Paused only past the window, i.e. only when the broker broke its Receive Maximum:
        # a paused socket also holds back the PUBACKs of the station's own commands.
        self._gate = gate = gated_queue(RECEIVE_WINDOW + 1, RECEIVE_WINDOW // 2)
        client = mqtt_client(
            self.config,
            identifier=self.client_id,
            clean_start=False,
            properties=props,
            will=will,
            timeout=10,
            max_queued_outgoing_messages=100_000,
            queue_type=gate,
        )
        # aiomqtt has no option for it: ack each message ourselves, after it found room.
        paho_client(client).manual_ack_set(True)
        return client

    async def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> None:
        client = self._client
        if client is None:
            raise ConnectionError("the station is not connected to the broker")
        await client.publish(topic, payload, qos=1, retain=retain)

    async def run(self) -> None:
        """Connect, subscribe, feed the ingest; reconnect with back-off until cancelled."""
        delay = 0.2
        while True:
            try:
                async with self._make_client() as client:
                    await self._serve(client)
            except aiomqtt.MqttError as exc:
                self._lost()
                log.warning(
                    "broker connection %s: %s; reconnecting in %.1f s", self.config.url, exc, delay
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
            else:
                return

    async def _serve(self, client: aiomqtt.Client) -> None:
        # Subscribe before announcing online: nodes replay when they see us online.
        await client.subscribe(
            f"{self.topics.root}/#", options=SubscribeOptions(qos=1, noLocal=True)
        )
        await client.publish(self.topics.station_status, self._status("online"), qos=1, retain=True)
        self._client = client
        sock, queue = paho_client(client).socket(), self._gate.made if self._gate else None
        if queue is not None and sock is not None:
            queue.attach(sock.fileno(), socket_reader(client))
            gate_reading(client, lambda: not queue.paused)
        self.ingest.live_after_ms = wall_ms() + BACKLOG_MS
        self.connections += 1
        self.down_since_ms = None
        self.up_since_ms = wall_ms()
        self.connected.set()
        log.info(
            "station connected to %s as %s (session %d)",
            self.config.url,
            self.client_id,
            self.session,
        )
        handle, ingest = self.ingest.handle, self.ingest
        ack = paho_client(client).ack
        assert queue is not None  # the client's queue is the gate's (``_make_client``)
        end_queue_when_gone(client, queue)
        try:
            while True:
                # The queue itself is waited on (aiomqtt's iterator costs a task and a few
                # turns of the loop a message), and what queued up meanwhile is taken in the
                # same turn: one pass handles a burst, its PUBACKs go out in one write, the
                # writer gets it as one batch (issue 30). GONE: the link broke.
                burst = [await queue.get()]
                while len(burst) < HANDLE_BURST and not queue.empty():
                    burst.append(queue.get_nowait())
                for message in burst:
                    if message is GONE:
                        raise link_gone(client)
                    payload: Any = message.payload
                    if isinstance(payload, str):
                        payload = payload.encode()
                    elif not isinstance(payload, bytes | bytearray):
                        payload = b"" if payload is None else str(payload).encode()
                    handle(
                        str(message.topic),
                        bytes(payload),
                        received_ms=wall_ms(),
                        retained=bool(message.retain),
                    )
                    # A poll, not an Event: it keeps the change in the collector (the writer
                    # knows nothing of it) and only runs while the writer is full.
                    while ingest.pending() >= WRITER_QUEUE_BOUND:  # noqa: ASYNC110
                        await asyncio.sleep(ROOM_POLL_S)
                    if message.qos:
                        ack(message.mid, message.qos)
        except asyncio.CancelledError:
            self._lost(stopping=True)
            raise
        finally:
            self._lost()

    async def say_offline(self) -> None:
        """The clean-stop announcement; best effort (the will covers a failure)."""
        client = self._client
        if client is None:
            return
        try:
            async with asyncio.timeout(2.0):  # not wait_for: see commands.py
                await client.publish(
                    self.topics.station_status, self._status("offline"), qos=1, retain=True
                )
        except (aiomqtt.MqttError, TimeoutError) as exc:
            log.warning("could not publish the station's offline status: %s", exc)
