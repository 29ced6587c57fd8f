"""The record's PGN says what a reader needs beside the moves: the game's date, its time
control (the reference of its ``[%clk]``) and how it ended — an outsider's reader found
``Date '????.??.??'`` and no TimeControl, no Termination; its game id is ``GameId``, never
``Game`` (xiangqi's readers take ``Game`` for the kind of game). Read back by python-chess's
PGN reader, a reader written for chess that knows nothing of this station."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import chess.pgn
import httpx
from support.station import ARBITER, ARBITER_PASSWORD, decision_txn, envelope, station_config

from venue_station.web.web_server import StationWithWeb


async def test_the_record_pgn_carries_date_time_control_and_termination(tmp_path: Path) -> None:
    station = StationWithWeb(station_config(tmp_path), connect=False)
    await station.start()
    try:
        await station.import_pairings("round,board,red,black\n1,1,甲,乙\n", send=False)
        assert station.ingest is not None
        seq = 0

        def send(type_: str, data: dict[str, Any], **kw: Any) -> None:
            nonlocal seq
            seq += 1
            ev = envelope("1", seq, game="r1-b1", type=type_, data=data, **kw)
            station.ingest.handle("qz/v1/test/board/1/event", json.dumps(ev).encode())  # type: ignore[union-attr]

        send("started", {"side_on_move": "red"})
        send("move", {"side": "red", "used_ms": 1000, "move": 1})
        result = {"winner": "red", "reason": "flag"}
        send("result", result, txn=decision_txn(station, "1", "result", result))
        await station.ingest.flush()
        async with httpx.AsyncClient(base_url=station.http_url) as chief:
            r = await chief.post(
                "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
            )
            chief.headers["X-CSRF-Token"] = r.json()["csrf"]
            body = {"move": "炮二平五", "ply": 0, "game": "r1-b1"}
            assert (await chief.post("/api/records/1/moves", json=body)).status_code == 200
            text = (await chief.get("/api/export/games/r1-b1/record.pgn")).text
    finally:
        await station.stop()
    tags = chess.pgn.read_headers(io.StringIO(text))  # (its moves are xiangqi's, not chess's)
    assert tags is not None
    assert (tags["White"], tags["Black"]) == ("甲", "乙"), text  # a chess reader shows who played
    assert tags["Date"] == time.strftime("%Y.%m.%d"), text  # the station's local day
    assert tags["TimeControl"] == "1800+5", text  # Meishan's 30 min + 5 s
    assert tags["Termination"] == "time forfeit" and tags["Result"] == "1-0", text
    assert tags["GameId"] == "r1-b1" and text.startswith('[Game "Chinese Chess"]')
