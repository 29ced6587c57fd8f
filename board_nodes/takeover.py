"""A node whose journal holds nothing of a board takes it over from its predecessor.

``seq`` increases by one per event of a board across its whole life (DESIGN.md §4), and the
station orders a board's statuses by session. A Pi replaced by a new one (a fresh SD card, the
same node.toml), or a board moved to another Pi, would start both at 1 again: the station would
take the new events for ones it has stored (the same seqs: dropped as duplicates) and the new
states and statuses for old news, and show the dead Pi's clock running on. So before its boards
say anything, a node reads what the broker retained of each board its journal does not know —
the predecessor's last ``state`` and ``status`` (the ACL lets a node read its own boards'), and
its journal goes on from there (``Journal.take_over``): the board's next seq after the state's,
and a session after every one seen. Without a broker at start, or without a retained state, the
board starts from 1, as a new board does (the station then keeps its first events aside as
numbers it holds for others and raises ``seq_clash``: docs/node.md says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass

import aiomqtt

from wire_contract import messages as wire
from wire_contract.broker import BrokerSettings, mqtt_client

__all__ = ["TAKEOVER_S", "Predecessor", "read_predecessors"]

log = logging.getLogger(__name__)

TAKEOVER_S = 3.0  # at most this long at the node's start, broker unreachable included
DRAIN_S = 0.05  # to take what has arrived (it has: see below), not to wait for more
LEAVES = ("state", "status")
MAX_TAKEN = 2**31  # a seq or session above it is not a predecessor's: its successor would overflow


@dataclass(frozen=True, slots=True)
class Predecessor:
    """What the broker retained of one board: the last seq its state counted, its node, and
    the highest session its state and status said."""

    board: str
    last_seq: int
    session: int
    node: str
    has_state: bool  # a state was retained (a status alone may be a finished test's or tool's)


async def read_predecessors(
    broker: BrokerSettings,
    *,
    venue: str,
    node: str,
    boards: Iterable[str],
    timeout_s: float = TAKEOVER_S,
) -> dict[str, Predecessor]:
    """The retained ``state`` and ``status`` of ``boards``, read with the node's account;
    boards without a retained state that counted events are left out (a board never played,
    or whose state was cleared); {} when the broker cannot be reached."""
    wanted = set(boards)
    if not wanted:
        return {}
    topics = wire.Topics(venue)
    found: dict[str, Predecessor] = {}
    try:
        async with asyncio.timeout(timeout_s):
            async with mqtt_client(
                broker, identifier=f"{node}-takeover", clean_start=True
            ) as client:
                leaves = [(topics.board(b, leaf), 1) for b in sorted(wanted) for leaf in LEAVES]
                await client.subscribe(leaves)
                # The broker sends a subscription's retained copies before it answers the
                # next one: once this one is granted, every copy is here, or there is none.
                await client.subscribe(topics.station_status, qos=1)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(DRAIN_S):
                        async for message in client.messages:
                            _take(found, wanted, topics, message)
    except (TimeoutError, aiomqtt.MqttError) as exc:
        log.warning("takeover: the broker's retained boards could not be read (%r)", exc)
        return {}
    return {b: p for b, p in found.items() if p.has_state}


def _take(
    found: dict[str, Predecessor],
    wanted: set[str],
    topics: wire.Topics,
    message: aiomqtt.Message,
) -> None:
    if not message.retain:
        return  # live news of someone else is not the predecessor's last word
    topic = str(message.topic)
    leaf = topic.rsplit("/", 1)[-1]
    board = next((b for b in wanted if topic == topics.board(b, leaf)), None)
    if board is None or not isinstance(message.payload, (bytes, bytearray)):
        return
    try:
        if leaf == "state":
            state = wire.decode(wire.StateSnapshot, bytes(message.payload))
            if state.board != board:
                return
            last_seq, session, node = state.seq, state.session, state.node
        else:
            status = wire.decode(wire.BoardStatus, bytes(message.payload))
            last_seq, session, node = 0, status.session, status.node
    except wire.WireError as exc:
        log.warning("takeover: board %s: retained %s refused: %s", board, leaf, exc)
        return
    if max(last_seq, session) > MAX_TAKEN:  # numbers no node reaches: a forged or broken copy
        log.warning("takeover: board %s: retained %s out of range, not taken", board, leaf)
        return
    has_state = leaf == "state"
    before = found.get(board)
    if before is not None:
        node = before.node if before.last_seq >= last_seq else node
        last_seq = max(last_seq, before.last_seq)
        session = max(session, before.session)
        has_state = has_state or before.has_state
    found[board] = Predecessor(board, last_seq, session, node, has_state)
