"""A board's MQTT link: status with its will, retained state, the outbox drain, commands.

The only module of the node that speaks aiomqtt. One connection per board: MQTT gives a
connection one will, and DESIGN.md §4 wants a will (``lost``) on every board's status topic.
The link never blocks the board: events wait in the journal's outbox and are drained in
order whenever a connection is up; what was journaled before the connection came up goes out
with ``replay: true``.

Told truthfully to the station (docs/wire.md "Status order" and "Clock probe"):

- every connection has an epoch (``conn``: the wall ms it was built at, strictly increasing
  within the process) carried by its will and every status it publishes, so the station orders
  a will after the ``online`` of its own connection although the will's ``ts`` was stamped
  first (it is built before connecting);
- ``clock_probe`` is answered with this node's wall clock at receipt and at answer, so the
  station measures the clock's offset apart from the network's delay;
- a connection attempt gives up after ``connect_timeout_s`` and reconnects back off, with
  jitter, to at most ``reconnect_max_s`` (2 s): a board is back within seconds of its link;
- a rebirth's replay runs in its own task beside the command loop (one at a time per board,
  a new rebirth replaces it), so other commands to the board are answered meanwhile;
- at most ``MAX_INFLIGHT`` publishes wait for their acknowledgement at once (a backlog goes
  out as a sliding window, in order), below aiomqtt's "pending publish calls" warning.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

import aiomqtt

from board_nodes.board import Board
from board_nodes.commands import CommandError, apply_command
from board_nodes.config import BrokerConfig
from board_nodes.identity_clash import ClashWatch
from board_nodes.journal import Journal
from board_nodes.publish_window import MAX_INFLIGHT, PUBLISH_TIMEOUT_S, PublishWindow
from board_nodes.reconnect import broker_keepalive, reconnect_delays
from wire_contract import bounds
from wire_contract import messages as wire
from wire_contract.broker import mqtt_client
from wire_contract.wallclock import wall_ms

__all__ = ["MAX_INFLIGHT", "BoardLink", "broker_keepalive", "reconnect_delays"]

log = logging.getLogger(__name__)

DRAIN_BATCH = 64
# A rebirth's replay (a fresh station rebuilding from the whole journal) at most this many
# events a second: the station lets an asked replay past its flood gate, the node keeps it
# to what the station's writer stores comfortably (20,000 kept events: ~20 s).
REPLAY_RATE_PER_S = 1000.0
SEND_ALL_POLL_S = 0.01  # a clean stop looks this often whether the broker has everything


class _OutageIsNotAnError(logging.Filter):
    """paho logs a dropped socket at ERROR; for a node built to ride out outages it is a
    WARNING (the link logs the outage itself)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.ERROR:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


_paho_log = logging.getLogger("board_nodes.link.paho")
_paho_log.addFilter(_OutageIsNotAnError())


class BoardLink:
    def __init__(
        self,
        board: Board,
        *,
        broker: BrokerConfig,
        journal: Journal,
        outbox_capacity: int = 100_000,
        outbox_alarm_ratio: float = 0.8,
    ) -> None:
        self.board = board
        self.broker = broker
        self.journal = journal
        self.topics = wire.Topics(board.venue)
        self.outbox_capacity = outbox_capacity
        self.outbox_alarm_at = int(outbox_capacity * outbox_alarm_ratio)
        self.client: aiomqtt.Client | None = None
        self.connected = asyncio.Event()
        self.counters: Counter[str] = Counter()
        self._wake = asyncio.Event()
        self._state_dirty = asyncio.Event()
        self._status_dirty = False  # the journal's health changed: publish the status again
        self._backlog_upto = 0
        self._station_session: int | None = None
        self._alarmed = False
        self._closed = False  # ``close`` said offline: nothing more to say
        self._finishing = False  # a clean stop: no command is applied any more (``send_all``)
        self.conn = 0  # the epoch of the latest connection attempt (wall ms, increasing)
        self.window = PublishWindow(board.id)  # every publish of this board takes a turn in it
        self.clash = ClashWatch(board.id, board.node, started_ms=wall_ms())
        self._tasks: asyncio.TaskGroup | None = None  # the live connection's tasks
        self._replay: asyncio.Task[None] | None = None  # a rebirth's replay in flight
        # The drain's client while the drain waits with nothing in flight (``durable`` may
        # then publish at once, ``PublishWindow.launch``).
        self._parked: aiomqtt.Client | None = None
        board.on_event = self._event_journaled
        board.on_state = self._state_changed

    # -- listeners on the board ---------------------------------------------------------------
    def _event_journaled(self, payload: dict[str, Any]) -> None:
        # Given to the journal's writer, not yet on disk: the drain wakes once it is
        # (``durable``); the state after it waits as long.
        self._state_dirty.set()

    def durable(self) -> None:
        """The journal committed events of this board: send them.

        While the drain waits with nothing in flight, they are published here, in the call
        that says they are on disk (the socket takes them before it returns): woken, the
        drain would publish them only a turn of the loop later, after whatever else this turn
        holds (the flag's result, the next state: ~0.5 ms of a flag's way to the arbiter,
        issue 30). The drain then waits for their acknowledgements and marks them sent, as
        for its own."""
        client = self._parked
        try:
            if client is not None and not self.window.launched:
                self._parked = None  # until the drain has taken these over
                rows = self.journal.unsent(self.board.id, limit=MAX_INFLIGHT)
                topic = self.topics.event(self.board.id)
                self.window.launch(client, topic, rows, replayed_upto=self._backlog_upto)
        except Exception:  # (a card that fails the read): never into the board's turn
            log.exception("board %s: publishing at once failed", self.board.id)
        finally:
            self._wake.set()  # the drain sends what was not launched

    def _state_changed(self) -> None:
        self._state_dirty.set()
        self._wake.set()

    def journal_changed(self) -> None:
        """The journal began or ceased to refuse writes: say so in the status, and send what
        it now holds on disk."""
        self._status_dirty = True
        self._state_changed()

    # -- payloads ------------------------------------------------------------------------------
    def _status(self, state: str, *, ts: int | None = None) -> bytes:
        status = wire.BoardStatus(
            state=state,  # type: ignore[arg-type]
            node=self.board.node,
            session=self.board.session,
            ts=wall_ms() if ts is None else ts,
            conn=self.conn,
            journal="failing" if self.journal.failing_since is not None else None,
            clash=True if self.clash.remembered(wall_ms()) else None,
        )
        return wire.encode(status)

    def _client(self) -> aiomqtt.Client:
        b = self.broker
        # A new connection, a new will: both carry its epoch. Wall ms, so that a node on a fresh
        # journal (session 1 again) still outranks what its predecessor left retained.
        self.conn = max(wall_ms(), self.conn + 1)
        self.clash.connecting(self.conn)
        # The will's ts is its connection's epoch itself (docs/wire.md "Status order"), not a
        # second clock reading that may already be a millisecond later.
        will = aiomqtt.Will(
            self.topics.status(self.board.id),
            self._status("lost", ts=self.conn),
            qos=1,
            retain=True,
        )
        # One account per board connection (``{username}.{board}``, same password): the broker
        # makes each connection's client id its username, so no one can take a board's id.
        username = f"{b.username}.{self.board.id}" if b.username else None
        client = mqtt_client(
            b.model_copy(update={"username": username}),
            identifier=f"{self.board.node}.{self.board.id}",
            keepalive_s=broker_keepalive(b.keepalive_s),
            connect_timeout_s=b.connect_timeout_s,
            will=will,
            timeout=PUBLISH_TIMEOUT_S,
            logger=_paho_log,
            max_inflight_messages=MAX_INFLIGHT,
            write_at_once=True,  # an event on disk goes out in the turn it is published
        )
        return client

    # -- the connection loop ------------------------------------------------------------------
    async def run(self) -> None:
        b = self.broker
        delays = reconnect_delays(b.reconnect_min_s, b.reconnect_max_s)
        while True:
            self.window.reset()  # no slot left held by a dead connection
            try:
                async with self._client() as client:
                    self.client = client
                    delays = reconnect_delays(b.reconnect_min_s, b.reconnect_max_s)
                    try:
                        await self._connected(client)
                    except asyncio.CancelledError:
                        await self._say_gone(client)
                        raise
            except* aiomqtt.MqttError as group:
                self.counters["disconnects"] += 1
                log.warning("board %s: broker link down: %s", self.board.id, group.exceptions[0])
            finally:
                self.client = None
                self.connected.clear()
            await asyncio.sleep(max(next(delays), self.clash.pause_s(wall_ms())))

    async def _connected(self, client: aiomqtt.Client) -> None:
        board = self.board
        unsent = self.journal.unsent(board.id, limit=1 << 30)
        self._backlog_upto = unsent[-1].id if unsent else 0
        # Subscribed before saying online: a command sent the moment the board is seen online
        # is heard (it was lost when sent between the status and the subscription).
        # (its own status read back: another node connected as this board, identity_clash.py)
        self.clash.connected()
        for topic in (self.topics.cmd(board.id), self.topics.venue_cmd,
                      self.topics.station_status, self.topics.status(board.id)):  # fmt: skip
            await client.subscribe(topic, qos=1)
        await self._say_online(client)
        self._state_dirty.set()
        self._wake.set()
        self.connected.set()
        self.counters["connects"] += 1
        log.info("board %s: online (%d events to send)", board.id, len(unsent))
        try:
            async with asyncio.TaskGroup() as tg:  # a replay joins it (``_rebirth_asked``)
                self._tasks = tg
                tg.create_task(self._drain(client), name=f"drain-{board.id}")
                tg.create_task(self._receive(client), name=f"receive-{board.id}")
        finally:
            self._tasks = self._replay = None

    async def _drain(self, client: aiomqtt.Client) -> None:
        """Send the outbox in order, then the state: a state never names a seq not yet sent."""
        topic = self.topics.event(self.board.id)
        while True:
            if self.window.launched:  # published by ``durable``: see them acknowledged
                launched = await self.window.settle()
                self.journal.mark_sent([row.id for row in launched])
                self.counters["events_sent"] += len(launched)
                continue
            rows = self.journal.unsent(self.board.id, limit=DRAIN_BATCH)
            if rows:
                await self.window.events(
                    client, topic, rows, replay=lambda r: r.id <= self._backlog_upto
                )
                self.journal.mark_sent([row.id for row in rows])
                self.counters["events_sent"] += len(rows)
                continue
            if self._state_dirty.is_set() and not self.journal.holds(self.board.id):
                # A state names the last seq: not while that event is held off the disk.
                self._state_dirty.clear()
                await self._send_state(client)
                continue
            if self._status_dirty:
                self._status_dirty = False
                await self._say_online(client)
                continue
            self._wake.clear()
            self._parked = client
            try:
                await self._wake.wait()
            finally:
                self._parked = None

    def check_outbox(self) -> int:
        """Warn once the unsent backlog passes the alarm mark; returns the backlog."""
        backlog = self.journal.unsent_count(self.board.id)
        if backlog >= self.outbox_alarm_at and not self._alarmed:
            self._alarmed = True
            log.warning(
                "board %s: outbox holds %d unsent events (capacity %d): is the broker reachable?",
                self.board.id, backlog, self.outbox_capacity,
            )  # fmt: skip
        elif backlog < self.outbox_alarm_at:
            self._alarmed = False
        return backlog

    async def _say_online(self, client: aiomqtt.Client) -> None:
        status = self._status("online")
        await self.window.send(client, self.topics.status(self.board.id), status, retain=True)

    async def _send_state(self, client: aiomqtt.Client) -> None:
        body = wire.encode(self.board.snapshot())
        await self.window.send(client, self.topics.state(self.board.id), body, retain=True)

    async def rebirth(self, client: aiomqtt.Client, from_seq: int | None = None) -> None:
        """Publish status and state again, and replay journaled events for the station."""
        await self._say_online(client)
        self._state_changed()
        if from_seq is not None:
            await self._replay_from(client, from_seq)

    async def _rebirth_asked(self, client: aiomqtt.Client, from_seq: int | None) -> None:
        """A ``rebirth`` command: status and state now, the replay in its own task, so the
        board's other commands are not kept waiting behind a day's journal (~4 s paced). A
        rebirth asked while a replay flows replaces it (the station asked from a new seq)."""
        board = self.board
        await self._say_online(client)
        self._state_changed()
        if from_seq is None:
            return
        if self._replay is not None and not self._replay.done():
            self._replay.cancel()
            self.counters["replays_replaced"] += 1
        if self._tasks is None:  # not inside a connection (a direct call): replay inline
            await self._replay_from(client, from_seq)
            return
        self._replay = self._tasks.create_task(
            self._replay_from(client, from_seq), name=f"replay-{board.id}"
        )

    async def _replay_from(self, client: aiomqtt.Client, from_seq: int) -> None:
        board = self.board
        rows = self.journal.events_from(board.id, from_seq)
        topic = self.topics.event(board.id)
        loop = asyncio.get_running_loop()
        began = loop.time()
        for start in range(0, len(rows), DRAIN_BATCH):
            batch = rows[start : start + DRAIN_BATCH]
            await self.window.events(client, topic, batch, replay=lambda r: True)
            ahead = began + (start + len(batch)) / REPLAY_RATE_PER_S - loop.time()
            if ahead > 0:  # paced: a long journal is a steady stream, not a burst
                await asyncio.sleep(ahead)
        self.counters["events_replayed"] += len(rows)

    # -- incoming --------------------------------------------------------------------------------
    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            topic = str(message.topic)
            payload = message.payload if isinstance(message.payload, bytes | str) else b""
            try:
                if topic == self.topics.station_status:
                    await self._station_status(client, payload)
                elif topic == self.topics.status(self.board.id):
                    if self.clash.heard(payload, retained=message.retain, now_ms=wall_ms()):
                        self._status_dirty = True  # say ``clash`` in the status now
                        self._wake.set()
                elif self._finishing and topic in (self.topics.cmd(self.board.id),
                                                   self.topics.venue_cmd):  # fmt: skip
                    # unanswered, as if the node had already gone (the station says so)
                    self.counters["commands_left_stopping"] += 1
                elif topic == self.topics.cmd(self.board.id):
                    await self._command(client, payload, venue_wide=False)
                elif topic == self.topics.venue_cmd:
                    await self._command(client, payload, venue_wide=True)
                else:
                    self.counters["unexpected_topic"] += 1
                    log.warning("board %s: message on unexpected topic %s", self.board.id, topic)
            except aiomqtt.MqttError:
                raise
            except Exception:
                self.counters["handler_errors"] += 1
                log.exception("board %s: failed to handle a message on %s", self.board.id, topic)

    async def _station_status(self, client: aiomqtt.Client, payload: bytes | str) -> None:
        try:
            status = wire.decode(wire.StationStatus, payload)
        except wire.WireError as exc:
            self.counters["bad_station_status"] += 1
            log.warning("board %s: bad station status: %s", self.board.id, exc)
            return
        if status.state == "online" and status.session != self._station_session:
            self._station_session = status.session
            await self.rebirth(client)
        elif status.state != "online":
            self._station_session = None

    async def _command(
        self, client: aiomqtt.Client, payload: bytes | str, *, venue_wide: bool
    ) -> None:
        board = self.board
        received = wall_ms()  # a clock probe's rx: as close to the arrival as we can stamp
        txn = wire.txn_of(payload)
        if txn is not None:
            earlier = self.journal.reply_for(board.id, txn)
            if earlier is not None:
                # At most once per txn: the same answer again, nothing applied twice.
                self.counters["commands_repeated"] += 1
                await self.window.send(client, self.topics.reply(board.id), earlier.encode())
                return
        try:
            command, args = wire.parse_command(payload, venue_wide=venue_wide)
            if command.cmd == "clock_probe":
                # Changes nothing, so it is neither journaled nor remembered (one every few
                # seconds would fill the journal): a repeat is simply answered again.
                self.counters["clock_probes"] += 1
                probe = wire.Reply(
                    txn=command.txn, ok=True, clock=wire.ProbeTimes(rx=received, tx=wall_ms())
                )
                await self.window.send(client, self.topics.reply(board.id), wire.encode(probe))
                return
            if command.cmd == "rebirth":
                assert isinstance(args, wire.RebirthArgs)
                await self._rebirth_asked(client, args.from_seq)
            else:
                with board.applying(command.txn):
                    apply_command(board, command.cmd, args, venue_wide=venue_wide)
            reply = wire.Reply(txn=command.txn, ok=True)
            self.counters["commands_applied"] += 1
        except (wire.WireError, CommandError) as exc:
            self.counters["commands_rejected"] += 1
            log.warning("board %s: command rejected: %s", board.id, exc)
            if txn is None:
                return
            code = "bad_command" if isinstance(exc, wire.WireError) else exc.code
            reasons: dict[str, str | int] = {} if isinstance(exc, wire.WireError) else exc.args_
            # bounded as the wire bounds it: a long reason (a validation's) still gets its reply
            error = str(exc)[: bounds.MAX_DETAIL_LEN]
            reply = wire.Reply(txn=txn, ok=False, error=error, code=code, args=reasons or None)
        body = wire.encode(reply)
        self.journal.remember_reply(board.id, reply.txn, body.decode())
        await self.window.send(client, self.topics.reply(board.id), body)

    async def _say_gone(self, client: aiomqtt.Client) -> None:
        """The link ends without a clean stop (the node is ending on an error): its
        DISCONNECT would be clean, so the broker would drop the will and the board would look
        online. Say ``lost`` itself first, as the will would have (docs/wire.md)."""
        if self._closed:
            return  # ``offline`` said already
        try:
            async with asyncio.timeout(1.0):
                await client.publish(
                    self.topics.status(self.board.id), self._status("lost"), qos=1, retain=True,
                    timeout=1,
                )  # fmt: skip
        except (aiomqtt.MqttError, TimeoutError) as exc:
            log.warning("board %s: could not say lost: %s", self.board.id, exc)

    async def send_all(self, *, timeout_s: float) -> bool:
        """A clean stop's last sending: from now on no command is applied (the station hears
        no answer, as from a node already gone), and this waits until the broker has every
        event journaled for the board and the state after the last of them. False (they go
        at the next start, as after any stop) when the link is down or ``timeout_s`` passes
        first.

        Without it, what the board journaled in its last moments stayed in the journal: a
        node put away after the round may not start again that day, and the station never
        held the end of the game (found by the station-faults chaos check)."""
        self._finishing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        board, journal = self.board.id, self.journal
        while (
            journal.holds(board)
            or journal.unsent(board, limit=1)
            or self.window.launched
            or self._state_dirty.is_set()
        ):
            if not self.connected.is_set() or loop.time() >= deadline:
                return False
            self._wake.set()
            await asyncio.sleep(SEND_ALL_POLL_S)
        return True

    async def close(self) -> None:
        """Say ``offline`` before a clean stop, if a connection is up."""
        self._closed = True
        client = self.client
        if client is not None:
            try:
                await client.publish(
                    self.topics.status(self.board.id), self._status("offline"), qos=1, retain=True,
                    timeout=2,
                )  # fmt: skip
            except aiomqtt.MqttError as exc:
                log.warning("board %s: could not say offline: %s", self.board.id, exc)
