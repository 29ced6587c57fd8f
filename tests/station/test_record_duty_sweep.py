"""The grace's end of the records (录谱), on the domain's station alone (no broker: the boards'
events handed to the ingest as the collector would): Meishan's top 2 boards; the foul is
raised when the next round starts and only then; a game decided without play needs no record;
a game whose result comes after the grace gets its foul when the result comes; a round with no
next round stays due; a sweep again raises nothing twice; the consent's refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.station import decision_txn, envelope, station_config

from venue_station.domain.record_duties import DutyRefused
from venue_station.domain.station import Station

PLAYERS = "name\n甲\n乙\n丙\n丁\n戊\n己\n"
PAIRINGS = (
    "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n1,3,戊,己\n2,1,乙,甲\n2,2,丁,丙\n2,3,己,戊\n"
)


class Boards:
    def __init__(self, station: Station) -> None:
        self.station, self.seq = station, {"1": 0, "2": 0, "3": 0}

    def send(self, board: str, game: str, type_: str, data: dict[str, Any], **kw: Any) -> None:
        assert self.station.ingest is not None
        self.seq[board] += 1
        ev = envelope(board, self.seq[board], game=game, type=type_, data=data, **kw)
        self.station.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())

    def start(self, board: str, game: str) -> None:
        self.send(board, game, "started", {"side_on_move": "red"})

    def moves(self, board: str, game: str, n: int) -> None:
        for i in range(n):
            side = "red" if i % 2 == 0 else "black"
            self.send(board, game, "move", {"side": side, "used_ms": 1000, "move": i // 2 + 1})

    def result(self, board: str, game: str, winner: str | None) -> None:
        data = {"winner": winner, "reason": "arbiter"}
        txn = decision_txn(self.station, board, "result", data)
        self.send(board, game, "result", data, txn=txn)


@pytest.fixture
async def station(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    st: Station = await start_station(
        station_config(tmp_path, database_url=db_url), serve_http=False, connect=False
    )
    await st.import_players(PLAYERS)
    await st.import_pairings(PAIRINGS, send=False)
    return st


async def test_the_foul_waits_for_the_next_round_and_for_the_result(station: Station) -> None:
    boards = Boards(station)
    assert station.ingest is not None
    for b in ("1", "2", "3"):
        boards.start(b, f"r1-b{b}")
    boards.moves("1", "r1-b1", 4)
    boards.result("1", "r1-b1", "black")
    boards.moves("2", "r1-b2", 3)  # board 2 plays on past the next round's start
    boards.result("3", "r1-b3", "red")  # board 3 needs no record (Meishan: the top 2)
    await station.ingest.flush()

    duties = {d.board: d for d in await station.duties.round_duties(1)}
    assert sorted(duties) == ["1", "2"]
    assert [str(d.state) for d in duties.values()] == ["due", "due"]
    assert duties["1"].responsible is not None and duties["1"].responsible.value == "black"
    assert duties["2"].responsible is None  # no result yet
    assert await station.duties.sweep() == []  # the grace runs: nothing raised

    boards.start("1", "r2-b1")  # round 2 begins
    await station.ingest.flush()
    raised = await station.duties.sweep()
    assert len(raised) == 1
    alerts = await station.require_store().duties.record_alerts()
    assert list(alerts) == ["r1-b1"]
    a = alerts["r1-b1"]
    assert (a["kind"], a["side"], a["detail"]["player"], a["status"]) == (
        "record_missing", "black", "乙", "open",
    )  # fmt: skip
    assert await station.duties.sweep() == []  # raised once

    # Board 2's result comes after the grace: its foul then (a draw: red records).
    boards.result("2", "r1-b2", None)
    await station.ingest.flush()
    assert len(await station.duties.sweep()) == 1
    alerts = await station.require_store().duties.record_alerts()
    assert (alerts["r1-b2"]["side"], alerts["r1-b2"]["detail"]["player"]) == ("red", "丙")
    duties = {d.board: d for d in await station.duties.round_duties(1)}
    assert [str(d.state) for d in duties.values()] == ["missing", "missing"]

    # Round 2 has no next round yet: its records stay due, nothing raised.
    boards.moves("1", "r2-b1", 2)
    boards.result("1", "r2-b1", "red")
    await station.ingest.flush()
    assert await station.duties.sweep() == []
    round2 = await station.duties.round_duties(2)  # board 2 not begun: due as well
    assert [(d.board, str(d.state)) for d in round2] == [("1", "due"), ("2", "due")]

    # A fresh desk (a restart's) decides nothing again.
    station.duties._settled.clear()
    station.duties._done_rounds.clear()
    assert await station.duties.sweep() == []
    assert len(await station.require_store().duties.record_alerts()) == 2


async def test_no_play_no_record_and_the_consents_refusals(station: Station) -> None:
    boards = Boards(station)
    assert station.ingest is not None
    boards.result("1", "r1-b1", "red")  # decided without a move (an absence): nothing to record
    boards.start("2", "r1-b2")
    boards.moves("2", "r1-b2", 2)
    boards.result("2", "r1-b2", "red")
    await station.ingest.flush()
    assert [d.board for d in await station.duties.round_duties(1)] == ["2"]

    with pytest.raises(DutyRefused) as refused:
        await station.duties.consent("r1-b3", allow=True, by="chief")
    assert refused.value.code == "record_not_required"
    with pytest.raises(DutyRefused) as refused:
        await station.duties.consent("r9-b1", allow=True, by="chief")
    assert (refused.value.code, refused.value.status) == ("no_game", 404)
    duty = await station.duties.consent("r1-b2", allow=True, by="chief")
    assert str(duty.state) == "allowed" and duty.consent is not None
    duty = await station.duties.consent("r1-b2", allow=False, by="chief")  # withdrawn in time
    assert str(duty.state) == "due" and duty.consent is None
    edits = await station.require_store().record_rows.record_edits("r1-b2")
    assert [(e["action"], e["by"]) for e in edits] == [("consent", "chief"), ("revoke", "chief")]


async def test_a_game_in_play_is_not_yet_recorded_however_far_its_record_runs(
    station: Station,
) -> None:
    """The arbiter's 录谱 list said 已录 for a game still 对局中 once its record ran ahead of the
    clock's presses (an outsider recorder two moves ahead): a record is complete only with
    the game — it is due until the game has a result."""
    boards = Boards(station)
    assert station.ingest is not None
    boards.start("1", "r1-b1")
    boards.moves("1", "r1-b1", 2)
    await station.ingest.flush()
    for ply, move in enumerate(("炮二平五", "马8进7", "马二进三", "车9平8")):
        await station.records.add("1", move, ply=ply, by="arb1", game="r1-b1")
    (duty,) = [d for d in await station.duties.round_duties(1) if d.board == "1"]
    assert (str(duty.state), duty.plies, duty.presses) == ("due", 4, 2)
    boards.result("1", "r1-b1", "red")
    await station.ingest.flush()
    (duty,) = [d for d in await station.duties.round_duties(1) if d.board == "1"]
    assert str(duty.state) == "recorded"
