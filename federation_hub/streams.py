"""The federation's JetStream streams and the hubs' shared durable consumers.

Venue bridges publish plain MQTT QoS 1; NATS turns each into a message on a subject
(``fed/qz/v1/a/board/1/event`` → ``fed.qz.v1.a.board.1.event``). Two streams capture them:
- ``QZ_FED_EVENTS``: every event, kept ``max_age`` (the archive's source until the hub stored it).
- ``QZ_FED_STATE``: state and status, only the newest per subject (a board's current view).
Replicated over the cluster (R3 on three nodes) so one node's death loses nothing stored.
Each has one durable pull consumer that every hub process binds to: JetStream hands each message
to one hub, redelivers what was not acked within ``ack_wait``, and stops handing out more once
``max_ack_pending`` are unacked — the hub's memory bound under overload (work waits in the stream).
"""

from __future__ import annotations

from dataclasses import dataclass

from nats.js import JetStreamContext
from nats.js.api import (
    AckPolicy,
    ConsumerConfig,
    DeliverPolicy,
    DiscardPolicy,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import NotFoundError

__all__ = ["EVENTS_STREAM", "STATE_STREAM", "StreamPlan", "ensure_streams"]

EVENTS_STREAM = "QZ_FED_EVENTS"
STATE_STREAM = "QZ_FED_STATE"
EVENTS_DURABLE = "qz-hub-events"
STATE_DURABLE = "qz-hub-state"
DAY_S = 24 * 3600


@dataclass(frozen=True, slots=True)
class StreamPlan:
    """Sizes of the streams and consumers (docs/federation.md lists them as bounds)."""

    prefix: str = "fed"
    replicas: int = 1
    max_age_days: int = 30
    max_bytes: int = 8 * 1024**3  # the events stream; past it new events are refused, not old lost
    max_ack_pending: int = 1000
    ack_wait_s: float = 30.0

    def subject(self, kind: str) -> str:
        return f"{self.prefix.replace('/', '.')}.qz.v1.*.board.*.{kind}"

    def resent_subject(self) -> str:
        """The venue stations' copies of events the hubs asked again (federation_hub/mender.py)."""
        return f"{self.prefix.replace('/', '.')}.qz.v1.*.resent.board.*.event"

    def decision_subject(self) -> str:
        """The venue stations' decisions ride the events stream (issue 27)."""
        return f"{self.prefix.replace('/', '.')}.qz.v1.*.station.decision"


def _events(plan: StreamPlan) -> StreamConfig:
    return StreamConfig(
        name=EVENTS_STREAM,
        subjects=[plan.subject("event"), plan.decision_subject(), plan.resent_subject()],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        num_replicas=plan.replicas,
        max_age=plan.max_age_days * DAY_S,
        max_bytes=plan.max_bytes,
        # Refusing new at the limit makes the venue's bridge queue them (its outbox); dropping
        # old would lose events the hub may not have stored yet.
        discard=DiscardPolicy.NEW,
        duplicate_window=120,
    )


def _state(plan: StreamPlan) -> StreamConfig:
    return StreamConfig(
        name=STATE_STREAM,
        subjects=[plan.subject("state"), plan.subject("status")],
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        num_replicas=plan.replicas,
        max_msgs_per_subject=1,
        max_age=plan.max_age_days * DAY_S,
        discard=DiscardPolicy.OLD,
    )


def consumer_config(durable: str, plan: StreamPlan) -> ConsumerConfig:
    return ConsumerConfig(
        durable_name=durable,
        deliver_policy=DeliverPolicy.ALL,
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=plan.ack_wait_s,
        max_deliver=-1,  # never give an event up: a stuck one shows as pending, not as lost
        max_ack_pending=plan.max_ack_pending,
        max_waiting=512,
    )


async def ensure_streams(js: JetStreamContext, plan: StreamPlan) -> None:
    """Create (or bring up to date) both streams and both durable consumers; idempotent."""
    for config in (_events(plan), _state(plan)):
        try:
            await js.stream_info(config.name or "")
        except NotFoundError:
            await js.add_stream(config)
        else:
            await js.update_stream(config)
    for stream, durable in ((EVENTS_STREAM, EVENTS_DURABLE), (STATE_STREAM, STATE_DURABLE)):
        try:
            await js.consumer_info(stream, durable)
        except NotFoundError:
            await js.add_consumer(stream, consumer_config(durable, plan))
