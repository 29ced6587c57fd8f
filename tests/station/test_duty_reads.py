"""The recording duties' store reads on SQLite and PostgreSQL (store/duty_reads.py): each round's
start (its first ``started`` event), the presses per game of a round, the ``record_missing``
alerts by game."""

from __future__ import annotations

from typing import Any

from venue_station.store.database import Store


def _event(board: str, seq: int, type_: str, ts: int, game: str, round_no: int) -> dict[str, Any]:
    return {
        "board": board, "session": 1, "seq": seq, "node": "node-a", "game": game,
        "round": round_no, "ts": ts, "type": type_, "replay": False, "red_ms": 1,
        "black_ms": 2, "running": None, "data": {}, "received_ms": ts,
    }  # fmt: skip


def _alert(id_: int, game: str, kind: str, status: str) -> dict[str, Any]:
    return {
        "id": id_, "key": f"k:{id_}", "kind": kind, "board": "1", "game": game, "side": "red",
        "seq": None, "ts": 1, "status": status, "detail": {}, "updated_ms": 1, "by": None,
    }  # fmt: skip


async def test_round_starts_presses_and_record_alerts(store: Store) -> None:
    rows = [
        _event("1", 1, "started", 5_000, "r1-b1", 1),
        _event("2", 1, "started", 4_000, "r1-b2", 1),  # round 1 began with board 2's clock
        _event("1", 2, "move", 5_100, "r1-b1", 1),
        _event("1", 3, "move", 5_200, "r1-b1", 1),
        _event("2", 2, "move", 4_100, "r1-b2", 1),
        _event("1", 4, "started", 9_000, "r2-b1", 2),
        _event("1", 5, "move", 9_100, "r2-b1", 2),
    ]
    await store.insert_events(rows)
    assert await store.duties.round_starts() == {1: 4_000, 2: 9_000}
    assert await store.duties.round_starts(after=1) == {2: 9_000}
    assert await store.duties.round_starts(after=2) == {}
    assert await store.duties.press_counts(1) == {"r1-b1": 2, "r1-b2": 1}
    assert await store.duties.press_counts(3) == {}

    alerts = [
        _alert(1, "r1-b1", "record_missing", "confirmed"),
        _alert(2, "r1-b1", "foul_pending", "open"),
        _alert(3, "r1-b2", "record_missing", "open"),
    ]
    await store.insert_events([], alerts=alerts)
    found = await store.duties.record_alerts()
    assert {g: a["id"] for g, a in found.items()} == {"r1-b1": 1, "r1-b2": 3}
    assert list(await store.duties.record_alerts(["r1-b2", "r9-b9"])) == ["r1-b2"]
