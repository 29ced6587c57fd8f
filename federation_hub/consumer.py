"""The hub's reading loop: pull from the shared durable consumers, store, then ack.

Order per batch: fetch ≤ ``batch`` messages → validate each (a bad one is logged, counted and
terminated: it can never become valid) → one database transaction → ack. A crash before the
ack means JetStream redelivers after ``ack_wait`` (to this hub or another), and the unique key
makes the second insert a no-op: exactly once in the store, at least once on the wire. Several
hub processes bind the same durable consumers, so JetStream shares the work and a killed
hub's unacked messages go to the others. Memory is bounded by ``batch`` here and by the
consumer's ``max_ack_pending`` at the server; the rest waits in the stream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from sqlalchemy.exc import SQLAlchemyError

from federation_hub.errors import RecordError
from federation_hub.mender import GapMender
from federation_hub.records import (
    DecisionRecord,
    is_decision_subject,
    is_resent_subject,
    parse_decision,
    parse_event,
    parse_resent,
    parse_state,
)
from federation_hub.store import HubStore
from federation_hub.streams import (
    EVENTS_DURABLE,
    EVENTS_STREAM,
    STATE_DURABLE,
    STATE_STREAM,
    StreamPlan,
    ensure_streams,
)

__all__ = ["HubConsumer", "HubCounters"]

log = logging.getLogger(__name__)
MAX_BATCH = 1000
MAX_WORKERS = 8  # event readers per process; each holds ≤ 2 batches
RETRY_S = 0.5
TOO_BIG_RETRY_S = 5.0


def _too_big(exc: Exception) -> bool:
    """JetStream refused the events stream for its size (err_code 10047, "insufficient
    storage resources available")."""
    if not isinstance(exc, nats.js.errors.APIError):
        return False
    return exc.err_code == 10047 or "insufficient" in str(exc.description or "").lower()


@dataclass
class HubCounters:
    stored: int = 0
    duplicates: int = 0
    bad: dict[str, int] = field(default_factory=dict)
    states: int = 0
    store_failures: int = 0
    mend_asks: int = 0
    mended: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "stored": self.stored,
            "duplicates": self.duplicates,
            "bad": dict(self.bad),
            "states": self.states,
            "store_failures": self.store_failures,
            "mend_asks": self.mend_asks,
            "mended": self.mended,
        }


class HubConsumer:
    def __init__(
        self,
        *,
        servers: Sequence[str],
        user: str,
        password: str,
        store: HubStore,
        plan: StreamPlan,
        batch: int = 200,
        workers: int = 1,
        name: str = "hub",
        mend_every_s: float | None = 5.0,
    ) -> None:
        if not servers:
            raise ValueError("servers: give at least one nats:// URL")
        if not 1 <= batch <= MAX_BATCH:
            raise ValueError(f"batch {batch}: must be 1..{MAX_BATCH}")
        if not 1 <= workers <= MAX_WORKERS:
            raise ValueError(f"workers {workers}: must be 1..{MAX_WORKERS}")
        self.workers = workers
        self.servers = list(servers)
        self.user, self.password = user, password
        self.store, self.plan, self.batch, self.name = store, plan, batch, name
        self.counters = HubCounters()
        # Asks the venues again for the events a dying centre node lost (None: never).
        self.mender = None
        if mend_every_s is not None:
            self.mender = GapMender(
                store, prefix=plan.prefix, every_s=mend_every_s, again_s=2 * mend_every_s
            )
        self.ready = asyncio.Event()
        self._nc: NatsClient | None = None

    async def run(self) -> None:
        """Connect (reconnecting for ever), make sure the streams exist, read until cancelled."""
        self._nc = await nats.connect(
            self.servers,
            user=self.user,
            password=self.password,
            name=self.name,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            connect_timeout=5,
            allow_reconnect=True,
        )
        try:
            js = self._nc.jetstream(timeout=5)
            told = False
            while True:
                try:
                    await ensure_streams(js, self.plan)
                    # Several readers of the one durable consumer in this process, as several
                    # hubs would be: one parses while another waits for its commit.
                    events = [
                        await js.pull_subscribe_bind(EVENTS_DURABLE, EVENTS_STREAM)
                        for _ in range(self.workers)
                    ]
                    states = await js.pull_subscribe_bind(STATE_DURABLE, STATE_STREAM)
                    break
                except (nats.errors.Error, nats.js.errors.Error, TimeoutError) as exc:
                    if _too_big(exc):  # a setting, not a moment: said once, by its name
                        if not told:
                            log.error(
                                "hub %s: the centre's JetStream cannot hold the events "
                                "stream's bound of %d MB (max_bytes_mb in the hub's file, "
                                "--max-bytes-mb): lower it, or give the centre's JetStream "
                                "more file store (max_file_store); retrying every %g s (%s)",
                                self.name, self.plan.max_bytes // 2**20, TOO_BIG_RETRY_S, exc,
                            )  # fmt: skip
                            told = True
                        await asyncio.sleep(TOO_BIG_RETRY_S)
                        continue
                    log.warning("hub %s: streams not ready (%s); retrying", self.name, exc)
                    await asyncio.sleep(RETRY_S)
            self.ready.set()
            async with asyncio.TaskGroup() as tg:
                for sub in events:
                    tg.create_task(self._loop(sub, self._store_events))
                tg.create_task(self._loop(states, self._store_states))
                if self.mender is not None:
                    mark = lambda: _stream_mark(js)  # noqa: E731
                    tg.create_task(self.mender.run(self._ask, mark), name="mender")
        finally:
            await self.close()

    async def _ask(self, subject: str, payload: bytes) -> None:
        if self._nc is None:
            raise ConnectionError("the hub is not connected to NATS")
        await self._nc.publish(subject, payload)
        self.counters.mend_asks += 1

    async def close(self) -> None:
        nc, self._nc = self._nc, None
        if nc is not None and not nc.is_closed:
            # close, not drain: a drain cut short by cancellation leaves a failed future behind;
            # anything fetched and not acked is simply redelivered.
            await nc.close()

    async def _loop(self, sub: Any, handle: Callable[[list[Msg]], Awaitable[None]]) -> None:
        # The next batch is fetched while this one is stored (two batches in memory at most):
        # the database and JetStream wait for each other only when one of them is the bottleneck.
        ahead: asyncio.Task[list[Msg]] = asyncio.ensure_future(sub.fetch(self.batch, timeout=1.0))
        try:
            while True:
                try:
                    msgs = await ahead
                except (TimeoutError, nats.errors.TimeoutError):
                    msgs = []
                except (nats.errors.Error, nats.js.errors.Error) as exc:
                    # A node died / a leader is being elected / reconnecting: the messages wait.
                    log.warning("hub %s: fetch failed: %s", self.name, exc)
                    await asyncio.sleep(RETRY_S)
                    msgs = []
                _raise_if_cancelling()
                ahead = asyncio.ensure_future(sub.fetch(self.batch, timeout=1.0))
                if msgs:
                    await handle(msgs)
        finally:
            ahead.cancel()
            await asyncio.gather(ahead, return_exceptions=True)

    def _bad(self, msg: Msg, exc: RecordError) -> None:
        kind = msg.subject.rsplit(".", 1)[-1] if msg.subject.count(".") > 3 else "subject"
        self.counters.bad[kind] = self.counters.bad.get(kind, 0) + 1
        log.warning("hub %s: dropped a bad message: %s", self.name, exc)

    async def _store_events(self, msgs: list[Msg]) -> None:
        good, keep, resent = [], [], []
        decided: list[DecisionRecord] = []
        for m in msgs:
            try:
                if is_decision_subject(m.subject, self.plan.prefix):
                    decided.append(parse_decision(m.subject, m.data, self.plan.prefix))
                elif is_resent_subject(m.subject, self.plan.prefix):
                    resent.append(parse_resent(m.subject, m.data, self.plan.prefix))
                else:
                    good.append(parse_event(m.subject, m.data, self.plan.prefix))
                keep.append(m)
            except RecordError as exc:
                self._bad(m, exc)
                await _quietly(m.term())
        try:
            await self.store.add_decisions(decided)
            new = await self.store.add_events(good)
            mended, refused = await self.store.add_resent(resent)
        except (SQLAlchemyError, OSError) as exc:
            # Not acked: JetStream hands them out again after ack_wait (or at once with nak).
            self.counters.store_failures += 1
            log.warning(
                "hub %s: store failed (%s); %d messages left to redeliver",
                self.name,
                exc,
                len(keep),
            )
            for m in keep:
                await _quietly(m.nak(delay=1.0))
            await asyncio.sleep(RETRY_S)
            return
        self.counters.stored += new + mended
        self.counters.duplicates += len(good) - new + len(resent) - mended - refused
        self.counters.mended += mended
        if refused:  # a station's copy past what its board numbered: never stored
            self.counters.bad["resent_unnumbered"] = (
                self.counters.bad.get("resent_unnumbered", 0) + refused
            )
            log.warning(
                "hub %s: %d resent events past their board's seq refused", self.name, refused
            )
        for m in keep:
            await _quietly(m.ack())

    async def _store_states(self, msgs: list[Msg]) -> None:
        good, keep = [], []
        for m in msgs:
            try:
                rec = parse_state(m.subject, m.data, self.plan.prefix)
            except RecordError as exc:
                self._bad(m, exc)
                await _quietly(m.term())
                continue
            keep.append(m)
            if rec is not None:
                good.append(rec)
        try:
            await self.store.put_states(good)
        except (SQLAlchemyError, OSError) as exc:
            self.counters.store_failures += 1
            log.warning("hub %s: state store failed (%s)", self.name, exc)
            for m in keep:
                await _quietly(m.nak(delay=1.0))
            return
        self.counters.states += len(good)
        for m in keep:
            await _quietly(m.ack())


async def _stream_mark(js: Any) -> tuple[int, int]:
    """The events stream's position as the hubs' consumer sees it (delivered + pending), and
    the position up to which every message is acked, i.e. stored (the mender's test of a loss)."""
    info = await js.consumer_info(EVENTS_STREAM, EVENTS_DURABLE)
    delivered = info.delivered.stream_seq or 0
    return delivered + (info.num_pending or 0), info.ack_floor.stream_seq or 0


def _raise_if_cancelling() -> None:
    # nats-py's fetch waits with asyncio.wait_for, which on Python 3.11 can lose a cancel that
    # arrives as its wait completes: the fetch then returns and the cancel would be forgotten.
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def _quietly(op: Awaitable[None]) -> None:
    # An ack/nak lost with the connection is harmless: the message is redelivered and stored
    # once (the unique key); the hub must not stop for it.
    try:
        await op
    except (nats.errors.Error, nats.js.errors.Error) as exc:
        log.info("ack not sent: %s", exc)
