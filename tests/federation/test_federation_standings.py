"""The hub's standings (issue 18): a venue's ranking from the events its boards reported.

docs/federation.md "Standings at the hub": players from the game's ``ready`` event, the round from
the station's game id ``r{round}-b{board}``, the outcome by the one outcome function, scoring and
tiebreaks from the venue's regulation profile; a pending proposal, and a decision that carries
no station command (``txn``), count nowhere; a game the hub cannot place is listed as skipped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from importlib.resources import files
from pathlib import Path

import httpx
import pytest
from support.fed_events import Venue

from federation_hub.standings import VenueProfiles, venue_standings
from federation_hub.store import HubStore
from federation_hub.web import build_app


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[HubStore]:
    s = await HubStore.open(f"sqlite:///{tmp_path / 'hub.db'}")
    try:
        yield s
    finally:
        await s.close()


MEISHAN = VenueProfiles.load("meishan-2016", {})


async def test_confirmed_results_rank_the_players_by_the_regulation(store: HubStore) -> None:
    v = Venue()
    g1 = v.game(1, "1", "张三", "李四")
    v.result("1", g1, "red", status="confirmed")
    g2 = v.game(1, "2", "王五", "赵六")
    v.result("2", g2, None, status="confirmed")  # a draw
    g3 = v.game(2, "1", "李四", "王五")
    v.result("1", g3, "black", status="confirmed")
    await v.store_in(store)
    out = await venue_standings(store, "va", MEISHAN)
    rows = {r["player"]: r for r in out["standings"]}
    # Meishan: win 2, draw 1, loss 0.
    assert {p: r["points"] for p, r in rows.items()} == {"张三": 2, "王五": 3, "赵六": 1, "李四": 0}
    assert out["standings"][0]["player"] == "王五"
    assert out["regulation"] == "meishan-2016" and out["after_round"] is None
    assert out["skipped"] == []
    games = {g["game"]: g for g in out["games"]}
    assert games["r1-b1"]["result"] == "1-0" and games["r2-b1"]["result"] == "0-1"
    assert games["r1-b2"]["result"] == "1/2-1/2" and games["r1-b1"]["round"] == 1


async def test_a_pending_result_is_shown_as_pending_and_counts_nowhere(store: HubStore) -> None:
    v = Venue()
    g1 = v.game(1, "1", "张三", "李四")
    v.ev("1", g1, "flag", {"side": "black"})
    v.result("1", g1, "red", reason="flag", status="pending")
    await v.store_in(store)
    out = await venue_standings(store, "va", MEISHAN)
    assert {r["player"]: r["points"] for r in out["standings"]} == {"张三": 0, "李四": 0}
    (game,) = out["games"]
    assert game["status"] == "pending" and game["result"] is None
    assert game["proposed"] == "1-0" and game["proposed_reason"] == "flag"


async def test_a_decision_without_the_stations_command_is_a_proposal(store: HubStore) -> None:
    """The station keeps a board's own ``result`` (no ``txn``) as an unverified proposal; the
    hub, which sees the node's event before the station marks it, must do the same."""
    v = Venue()
    g1 = v.game(1, "1", "张三", "李四")
    seq = v.ev("1", g1, "result", {"winner": "red", "reason": "resign", "status": "confirmed"})
    assert seq == 2
    await v.store_in(store)
    out = await venue_standings(store, "va", MEISHAN)
    assert {r["player"]: r["points"] for r in out["standings"]} == {"张三": 0, "李四": 0}
    assert out["games"][0]["status"] == "pending" and out["games"][0]["unverified"] is True


async def test_a_decision_counts_only_beside_the_stations_agreeing_decision(
    store: HubStore,
) -> None:
    """Issue 27: a board sees every txn it is sent, so a txn proves nothing at the hub. A
    confirmed result counts only when the venue's station published a ``Decision`` on that
    event that says the same; one with a txn and no decision, or beside a decision that says
    otherwise, is a proposal."""
    v = Venue()
    won = {"winner": "red", "reason": "resign", "status": "confirmed"}
    g1 = v.game(1, "1", "张三", "李四")
    v.ev("1", g1, "result", won, txn="st-rebirth-txn")  # no decision
    g2 = v.game(1, "2", "王五", "赵六")
    seq = v.ev("2", g2, "result", won, txn="t-r1-b2")
    v.decide("2", seq, g2, "result", winner="black", reason="resign")  # decided otherwise
    g3 = v.game(1, "3", "甲", "乙")
    seq = v.ev("3", g3, "result", won, txn="t-r1-b3")
    v.decide("3", seq, g3, "result", winner="red", reason="resign")
    await v.store_in(store)
    out = await venue_standings(store, "va", MEISHAN)
    games = {g["game"]: g for g in out["games"]}
    assert games["r1-b1"]["status"] == games["r1-b2"]["status"] == "pending"
    assert games["r1-b1"]["unverified"] and games["r1-b2"]["unverified"]
    assert games["r1-b3"]["result"] == "1-0"
    points = {r["player"]: r["points"] for r in out["standings"]}
    assert points["甲"] == 2 and points["张三"] == points["王五"] == points["赵六"] == 0


async def test_a_confirmed_double_forfeit_is_a_loss_for_both(store: HubStore) -> None:
    v = Venue()
    g1 = v.game(1, "1", "张三", "李四")
    v.result("1", g1, None, reason="double_forfeit", status="confirmed")
    g2 = v.game(1, "2", "王五", "赵六")
    v.result("2", g2, "red", status="confirmed")
    await v.store_in(store)
    out = await venue_standings(store, "va", MEISHAN)
    rows = {r["player"]: r for r in out["standings"]}
    assert rows["张三"]["points"] == 0 and rows["张三"]["games"] == 1
    assert rows["王五"]["points"] == 2
    assert {g["game"]: g["result"] for g in out["games"]}["r1-b1"] == "0-0"


async def test_the_venues_profile_gives_the_scoring(store: HubStore) -> None:
    """A venue's own profile (``--venue-regulation``): a custom one scores a win 3."""
    text = (files("clock_service.profiles") / "meishan-2016.toml").read_text(encoding="utf-8")
    custom = Path(store.engine.url.database or "").parent / "three.toml"
    custom.write_text(text.replace("win = 2", "win = 3", 1), encoding="utf-8")
    profiles = VenueProfiles.load("meishan-2016", {"va": str(custom)})
    v = Venue()
    v.result("1", v.game(1, "1", "张三", "李四"), "red", status="confirmed")
    await v.store_in(store)
    out = await venue_standings(store, "va", profiles)
    assert {r["player"]: r["points"] for r in out["standings"]}["张三"] == 3
    assert out["regulation"] == str(custom)
    assert profiles.name_of("vb") == "meishan-2016"


async def test_games_the_hub_cannot_place_are_listed_as_skipped(store: HubStore) -> None:
    v = Venue()
    v.result("1", v.game(1, "1", "张三", "李四"), "red", status="confirmed")
    # no players on the wire (a ready without names)
    v.ev("2", "r1-b2", "ready", {"game": "r1-b2", "tc": "30m+5s"})
    v.result("2", "r1-b2", "red", status="confirmed")
    # not a Swiss round's id (a knockout game, a hand-made id)
    v.ev("3", "ko-1", "ready", {"game": "ko-1", "tc": "10m+3s", "red": "王五", "black": "赵六"})
    v.result("3", "ko-1", "red")
    # paired, not played yet: its players get a row, the game counts for nothing
    v.game(1, "6", "吴十", "郑一")
    # past the regulation's 9 rounds
    v.result("4", v.game(10, "4", "钱七", "孙八"), "red", status="confirmed")
    # a player twice in one round: the second game is skipped, not the whole venue
    v.result("5", v.game(1, "5", "张三", "周九"), "black", status="confirmed")
    await v.store_in(store)
    out = await venue_standings(store, "va", MEISHAN)
    skipped = {s["game"]: s["why"] for s in out["skipped"]}
    assert set(skipped) == {"r1-b2", "ko-1", "r10-b4", "r1-b5"}, skipped
    assert "players" in skipped["r1-b2"] and "round" in skipped["ko-1"]
    assert "9" in skipped["r10-b4"] and "张三" in skipped["r1-b5"]
    points = {r["player"]: r["points"] for r in out["standings"]}
    assert points == {"张三": 2, "李四": 0, "吴十": 0, "郑一": 0}
    assert {g["game"]: g["status"] for g in out["games"]}["r1-b6"] == "undecided"


async def test_the_latest_ready_names_the_players(store: HubStore) -> None:
    """A game re-sent with corrected names (set_game again): the last ready counts."""
    v = Venue()
    g1 = v.game(1, "1", "张三", "李司")
    v.game(1, "1", "张三", "李四")
    v.result("1", g1, "black", status="confirmed")
    await v.store_in(store)
    out = await venue_standings(store, "va", MEISHAN)
    assert {r["player"]: r["points"] for r in out["standings"]} == {"张三": 0, "李四": 2}


async def test_the_standings_api_answers_and_refuses_bad_input(store: HubStore) -> None:
    v = Venue()
    v.result("1", v.game(1, "1", "张三", "李四"), "red", status="confirmed")
    v.result("1", v.game(2, "1", "李四", "张三"), "red", status="confirmed")
    await v.store_in(store)
    app = build_app(store, lambda: {}, profiles=MEISHAN)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
        full = (await http.get("/api/venues/va/standings")).json()
        assert {r["player"]: r["points"] for r in full["standings"]} == {"张三": 2, "李四": 2}
        after1 = (await http.get("/api/venues/va/standings?round=1")).json()
        assert after1["after_round"] == 1
        assert {r["player"]: r["points"] for r in after1["standings"]} == {"张三": 2, "李四": 0}
        for bad in ("x", "-1", "10", "1e3", ""):
            r = await http.get(f"/api/venues/va/standings?round={bad}")
            assert r.status_code == 400 and "round" in r.json()["error"], bad
        assert (await http.get("/api/venues/a.b/standings")).status_code == 400
        empty = (await http.get("/api/venues/nobody/standings")).json()
        assert empty["standings"] == [] and empty["games"] == []


@pytest.mark.postgres
async def test_the_standings_read_the_postgresql_archive(hub_db: str) -> None:
    """The federation runs on PostgreSQL: the same facts read back in report order there."""
    pg = await HubStore.open(hub_db)
    try:
        v = Venue()
        g1 = v.game(1, "1", "张三", "李司")
        v.game(1, "1", "张三", "李四")
        v.result("1", g1, "black", status="confirmed")
        v.ev("1", "r1-b1", "move", {"side": "red", "used_ms": 1, "move": 1})  # not a fact
        await v.store_in(pg)
        facts = await pg.game_facts("va")
        assert [f["type"] for f in facts] == ["ready", "ready", "result"]
        out = await venue_standings(pg, "va", MEISHAN)
        assert {r["player"]: r["points"] for r in out["standings"]} == {"张三": 0, "李四": 2}
    finally:
        await pg.close()


async def test_an_answer_is_kept_two_seconds_and_few_are_kept(store: HubStore) -> None:
    """Every open page asks every 2 s and one answer costs ~0.2 s (docs/benchmarks.md): the
    hub answers a venue's standings from the last computation for ``standings_ttl_s``."""
    now = [100.0]
    v = Venue()
    v.result("1", v.game(1, "1", "张三", "李四"), "red", status="confirmed")
    await v.store_in(store)
    app = build_app(store, lambda: {}, profiles=MEISHAN, clock=lambda: now[0])
    transport = httpx.ASGITransport(app=app)

    async def points(http: httpx.AsyncClient, venue: str = "va") -> dict[str, int]:
        out = (await http.get(f"/api/venues/{venue}/standings")).json()
        return {r["player"]: r["points"] for r in out["standings"]}

    async with httpx.AsyncClient(transport=transport, base_url="http://hub") as http:
        assert await points(http) == {"张三": 2, "李四": 0}
        v.result("2", v.game(1, "2", "王五", "赵六"), "red", status="confirmed")
        await store.add_events(v.records[-2:])
        await store.add_decisions(v.decisions[-1:])
        now[0] += 1.9
        assert await points(http) == {"张三": 2, "李四": 0}  # the kept answer
        now[0] += 0.2
        assert (await points(http))["王五"] == 2  # 2 s on: computed again
        for i in range(300):  # more venues than are kept: the oldest are dropped, not grown
            await points(http, f"v{i}")
        assert len(app.state.recent._kept) == 256  # the bound itself


async def test_a_hub_started_after_the_ready_events_takes_the_players_from_the_boards_state(
    store: HubStore,
) -> None:
    """An outsider's hub started after the round was set up: the `ready` events (with the
    players) came before it and the mender never asks for what came before, so the game was
    skipped "the players are not on the wire" although the board's state named them."""
    from federation_hub.records import StateRecord

    v = Venue()
    v.ev("1", "r1-b1", "started", {})
    v.result("1", "r1-b1", "red", status="confirmed")
    await v.store_in(store)
    state = {"v": 1, "board": "1", "node": "pi-1", "session": 1, "seq": 9, "ts": 1,
             "game": "r1-b1", "phase": "finished", "red": "张三", "black": "李四"}  # fmt: skip
    await store.put_states([StateRecord("va", "1", 1, 9, 1, state)])
    out = await venue_standings(store, "va", MEISHAN)
    assert out["skipped"] == []
    assert {r["player"]: r["points"] for r in out["standings"]} == {"张三": 2, "李四": 0}
    # a board now on another game names nobody for this one: skipped, with a code for the page
    await store.put_states([StateRecord("va", "1", 1, 10, 2, {**state, "seq": 10,
                                                               "game": "r2-b1"})])  # fmt: skip
    out = await venue_standings(store, "va", MEISHAN)
    assert [(s["game"], s["code"]) for s in out["skipped"]] == [("r1-b1", "no_players")]
