"""The mender's rules (federation_hub/mender.py): when a hole is a loss, how often it is asked,
how a long one is cut (pure: the holes and the stream's marks are given by the test), and where
the holes are (``HoleFinder`` on the hub's real PostgreSQL store).
tests/federation/test_federation_mending.py runs it all with the real parts."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from federation_hub.mender import GapMender, HoleFinder
from federation_hub.records import EventRecord, StateRecord
from federation_hub.store import HubStore


class Holes:
    def __init__(self) -> None:
        self.now: list[tuple[str, str, int, int]] = []

    async def holes(self) -> list[tuple[str, str, int, int]]:
        return list(self.now)


def mender_of(holes: Holes, **kw: Any) -> GapMender:
    mender = GapMender(None, **kw)  # type: ignore[arg-type]
    mender.finder = holes  # type: ignore[assignment]
    return mender


class Wire:
    def __init__(self) -> None:
        self.asks: list[tuple[str, dict[str, Any]]] = []

    async def publish(self, subject: str, payload: bytes) -> None:
        self.asks.append((subject, json.loads(payload)))


def marks(position: int, stored: int) -> Any:
    async def mark() -> tuple[int, int]:
        return position, stored

    return mark


async def test_a_hole_is_asked_only_once_the_stream_before_it_is_stored() -> None:
    holes, wire = Holes(), Wire()
    mender = mender_of(holes, every_s=1, again_s=10)
    holes.now = [("va", "1", 5, 7)]
    assert await mender.mend(wire.publish, marks(100, 40)) == 0  # first seen at 100
    assert await mender.mend(wire.publish, marks(120, 99)) == 0  # 100 not all stored yet
    assert await mender.mend(wire.publish, marks(130, 100)) == 1  # it is: the hole is a loss
    subject, ask = wire.asks[0]
    assert subject == "fed.qz.v1.va.station.resend"
    assert (ask["board"], ask["from_seq"], ask["to_seq"]) == ("1", 5, 7)


async def test_a_hole_that_fills_is_never_asked() -> None:
    holes, wire = Holes(), Wire()
    mender = mender_of(holes, every_s=1, again_s=10)
    holes.now = [("va", "1", 5, 7)]
    await mender.mend(wire.publish, marks(100, 100))
    holes.now = []  # its events came (they were on their way)
    assert await mender.mend(wire.publish, marks(100, 100)) == 0
    holes.now = [("va", "1", 5, 7)]  # the same seqs missing again later: a new hole
    assert await mender.mend(wire.publish, marks(100, 100)) == 0
    assert await mender.mend(wire.publish, marks(100, 100)) == 1


async def test_an_open_hole_is_asked_again_only_after_again_s(monkeypatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr("federation_hub.mender.time.monotonic", lambda: clock[0])
    holes, wire = Holes(), Wire()
    mender = mender_of(holes, every_s=1, again_s=10)
    holes.now = [("va", "1", 5, 7)]
    counts = []
    for _ in range(14):
        counts.append(await mender.mend(wire.publish, marks(10, 10)))
        clock[0] += 1
    assert counts == [0, 1] + [0] * 9 + [1, 0, 0]


async def test_a_long_hole_is_asked_a_thousand_at_a_time_and_asks_are_bounded() -> None:
    holes, wire = Holes(), Wire()
    mender = mender_of(holes, every_s=1, again_s=10, max_asks=3)
    holes.now = [("va", "1", 1, 5000)] + [("vb", str(b), 1, 1) for b in range(10)]
    await mender.mend(wire.publish, marks(1, 1))
    assert await mender.mend(wire.publish, marks(1, 1)) == 3
    long = next(a for s, a in wire.asks if s == "fed.qz.v1.va.station.resend")
    assert (long["from_seq"], long["to_seq"]) == (1, 1000)


def test_the_timing_is_checked() -> None:
    with pytest.raises(ValueError, match="every_s"):
        GapMender(Holes(), every_s=10, again_s=5)  # type: ignore[arg-type]


def test_a_resent_copy_is_read_as_its_boards_event_and_nothing_else() -> None:
    from support.station import envelope

    from federation_hub.errors import RecordError
    from federation_hub.records import is_resent_subject, parse_resent

    body = json.dumps(envelope("7", 12, game="r1-b7", replay=True)).encode()
    rec = parse_resent("fed.qz.v1.va.resent.board.7.event", body, "fed")
    assert (rec.venue, rec.board, rec.seq) == ("va", "7", 12)
    assert not is_resent_subject("fed.qz.v1.va.board.7.event", "fed")
    for subject in (
        "fed.qz.v1.va.resent.board.8.event",  # the payload speaks for board 7
        "fed.qz.v1.va.x.resent.board.7.event",  # not a venue id
        "fed.qz.v1.va.resent.board.7.state",  # not an event
        "fed.qz.v1.va.resent.board.7.8.event",
    ):
        with pytest.raises(RecordError):
            parse_resent(subject, body, "fed")


# -- where the holes are: HoleFinder on the hub's store (PostgreSQL) ----------------------------
async def _stored(store: HubStore, board: str, session: int, seqs: Iterable[int]) -> None:
    await store.add_events(
        [EventRecord("va", board, session, s, "move", None, s, {"seq": s}) for s in seqs]
    )


async def _state(store: HubStore, board: str, session: int, seq: int) -> None:
    await store.put_states([StateRecord("va", board, session, seq, seq, {"seq": seq})])


@pytest.mark.postgres
async def test_the_finder_reads_holes_between_events_and_the_tail_the_state_names(
    hub_db: str,
) -> None:
    store = await HubStore.open(hub_db)
    try:
        finder = HoleFinder(store, limit=50)
        await _stored(store, "1", 1, [*range(10, 20), *range(23, 30)])
        await _state(store, "1", 1, 33)
        await _stored(store, "2", 1, range(1, 6))
        await _state(store, "2", 1, 5)
        await _state(store, "3", 1, 9)  # a state, no event yet: where it began is not known
        # board 1 began (for this hub) at 10: nothing before it is asked for
        assert sorted(await finder.holes()) == [("va", "1", 20, 22), ("va", "1", 30, 33)]
        await _stored(store, "1", 1, [20, 21, 22, 30, 31, 32, 33])
        await _stored(store, "2", 1, [7])  # board 2 goes on with a hole at 6
        await _state(store, "2", 1, 7)
        assert await finder.holes() == [("va", "2", 6, 6)]
        # a new session goes on from the old seqs (a board's seq rises across sessions)
        await _stored(store, "1", 2, [36, 37])
        await _state(store, "1", 2, 37)
        assert sorted(await finder.holes()) == [("va", "1", 34, 35), ("va", "2", 6, 6)]
        # a long board is read a limit at a time: its holes still come, pass by pass
        await _stored(store, "4", 1, [1, *range(3, 200)])
        await _state(store, "4", 1, 205)
        found = [h for h in await finder.holes() if h[1] == "4"]
        assert found == [("va", "4", 2, 2)]
    finally:
        await store.close()
