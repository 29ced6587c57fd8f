"""The station's bounds on the hub's asks (venue_station/domain/resend.py), each sent past:
at most ``QUEUE_BOUND`` asks wait, the same ask is answered once per ``AGAIN_S``, and a copy
the wire no longer takes is refused, not sent. The whole way through a real bridge is
tests/federation/test_federation_mending.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from support.station import envelope

from venue_station.domain import resend
from venue_station.domain.resend import QUEUE_BOUND, Resender
from wire_contract.messages import Topics


def ask(board: str, first: int, last: int) -> bytes:
    return json.dumps({"v": 1, "board": board, "from_seq": first, "to_seq": last, "ts": 1}).encode()


def row(seq: int, **data: Any) -> dict[str, Any]:
    ev = envelope("1", seq, game="r1-b1")
    return {
        "board": "1", "node": ev["node"], "game": ev["game"], "session": 1, "seq": seq,
        "ts": ev["ts"], "type": "move", "red_ms": 1, "black_ms": 2, "running": "red",
        "data": {**ev["data"], **data},
    }  # fmt: skip


async def test_past_the_queue_bound_asks_are_refused_and_counted() -> None:
    resender = Resender(Topics("va"), lambda *_: asyncio.sleep(0, []))  # type: ignore[arg-type,return-value]
    for i in range(QUEUE_BOUND + 6):
        resender.take(ask("1", i + 1, i + 1))
    assert resender.asks == QUEUE_BOUND and resender.refused == {"full": 6}


async def test_the_same_ask_is_answered_once_per_again_s_and_a_bad_copy_is_not_sent(
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(resend, "EVENTS_PER_S", 10_000)
    rows = [row(5), row(6, unverified=True), row(7, extra="not on the wire")]
    reads: list[tuple[str, int, int]] = []

    async def read(board: str, first: int, last: int) -> list[dict[str, Any]]:
        reads.append((board, first, last))
        return rows

    sent: list[tuple[str, dict[str, Any]]] = []

    async def publish(topic: str, payload: bytes) -> None:
        sent.append((topic, json.loads(payload)))

    connected = asyncio.Event()
    connected.set()
    resender = Resender(Topics("va"), read)
    task = asyncio.create_task(resender.run(publish, connected))
    try:
        for _ in range(3):
            resender.take(ask("1", 5, 7))  # the hub asking the same again at once
        resender.take(ask("1", 9, 9))  # another hole is another ask
        async with asyncio.timeout(5):
            while sum(resender.refused.values()) < 3 or len(reads) < 2:
                await asyncio.sleep(0.01)
    finally:
        task.cancel()
    assert reads == [("1", 5, 7), ("1", 9, 9)]
    assert resender.refused == {"again": 2, "unsendable": 2}
    # the station's mark is left out; the copy the wire no longer takes is never sent
    assert [(t, p["seq"], p["replay"], "unverified" in p["data"]) for t, p in sent] == [
        ("qz/v1/va/resent/board/1/event", 5, True, False),
        ("qz/v1/va/resent/board/1/event", 6, True, False),
    ] * 2
