"""The hub's read-only page and API: venues → boards → clocks, results; bad addresses refused."""

from __future__ import annotations

from pathlib import Path

import httpx
from support.station import envelope

from federation_hub.records import EventRecord, StateRecord
from federation_hub.store import HubStore
from federation_hub.web import build_app


def rec(board: str, seq: int, type_: str = "move", data: dict | None = None) -> EventRecord:
    body = envelope(board, seq, type=type_, data=data)
    return EventRecord("va", board, 1, seq, type_, body["game"], body["ts"], body)


async def test_api_lists_venues_boards_results_and_refuses_bad_ids(tmp_path: Path) -> None:
    store = await HubStore.open(f"sqlite:///{tmp_path / 'hub.db'}")
    try:
        await store.add_events([rec("1", 1), rec("1", 2), rec("2", 1)])
        win = {"winner": "red", "reason": "flag", "status": "pending"}
        await store.add_events([rec("1", 3, "result", win)])
        confirmed = {**win, "status": "confirmed"}
        await store.add_events([rec("1", 4, "result", confirmed)])
        snap = {"board": "1", "phase": "running", "red_ms": 1000, "black_ms": 2000, "ts": 5}
        await store.put_states([StateRecord("va", "1", 1, 4, 5, snap)])
        app = build_app(store, lambda: {"stored": 5}, names={"va": "武隆赛区"})
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
            assert (await http.get("/api/venues")).json() == [
                {"venue": "va", "events": 5, "boards": 2, "name": "武隆赛区"}
            ]  # (the public pages call it by its name: a hub titled venues by their ids)
            assert (await http.get("/api/live")).json()["names"] == {"va": "武隆赛区"}
            boards = (await http.get("/api/venues/va/boards")).json()
            assert boards == [{"board": "1", "state": snap}]
            (result,) = (await http.get("/api/venues/va/results")).json()
            assert result["seq"] == 4 and result["status"] == "confirmed"
            assert (await http.get("/api/gaps")).json() == []
            bad = await http.get("/api/venues/a.b/boards")
            assert bad.status_code == 400 and "venue" in bad.json()["error"]
            assert (await http.post("/api/venues")).status_code == 405  # read-only
            page = await http.get("/")
            assert page.status_code == 200 and 'lang="zh-CN"' in page.text
            assert (await http.get("/api/metrics")).json() == {"stored": 5}
    finally:
        await store.close()
        await store.close()  # idempotent
