"""Game records (录谱, issue 29) through the station's real HTTP API.

A Wulong round (top 10 boards and every board with a master must be recorded): the published
game 柳大华 vs 杨官璘 (1982, tests/xiangqi/data; docs/records.md) is entered move by move on
three boards, in Chinese, in WXF and in ICCS; the three records, their PGN exports and the
round's records.pgn agree move for move, and Debian's fairy-stockfish (an independent program)
plays every exported move legally to the published final position. Every refusal (an illegal
move, a move for the other side, a stale client, a board that needs no record, a recorder
trying another board or any other route) carries a clear code and stores nothing. The moves
meet the clock: a FakeNode's presses give each move its [%clk], a mismatch is reported.
Every response is checked against the generated OpenAPI document.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.fairy_stockfish import FAIRY_STOCKFISH, Referee
from support.openapi_check import Checker
from support.parts import skip_missing
from support.station import ARBITER, ARBITER_PASSWORD, FakeNode, station_config

from clock_service.xiangqi import START_FEN, read_pgn
from venue_station.auth import hash_password
from venue_station.web.openapi import SCHEMA

DATA = Path(__file__).parents[1] / "xiangqi" / "data" / "liu_dahua_yang_guanlin_1982.pgn"
TEXT = DATA.read_text("utf-8")
CHINESE = re.findall(
    r"[\u4e00-\u9fff][\u4e00-\u9fff\uff10-\uff19][进退平][\u4e00-\u9fff\uff10-\uff19]", TEXT
)
ICCS = re.findall(r"\b[a-i][0-9][a-i][0-9]\b", TEXT)
FINAL_FEN = "3akc3/9/4ba3/r7p/P1bC5/9/8P/3AB1N2/4K1nR1/2B6 b - - 16 63"
_WXF_OF = str.maketrans(
    {
        "帅": "K", "将": "K", "仕": "A", "士": "A", "相": "E", "象": "E", "马": "H",
        "车": "R", "炮": "C", "兵": "P", "卒": "P", "进": "+", "退": "-", "平": ".",
        "前": "+", "后": "-",
        **{c: str(i + 1) for i, c in enumerate("一二三四五六七八九")},
        **{c: str(i + 1) for i, c in enumerate("１２３４５６７８９")},
    }
)  # fmt: skip
PASSWORD_HASH = hash_password(ARBITER_PASSWORD)
PLAYERS = "name,club,rating,tags\n" + "".join(
    f"{name},,,{'master' if name == '大师' else ''}\n"
    for name in ("甲", "乙", "丙", "丁", "戊", "己", "庚", "辛", "大师", "癸")
)
# Wulong: boards 1..10 and every board with a master must be recorded; board 12 needs none.
PAIRINGS = "round,board,red,black\n1,1,甲,乙\n1,2,丙,丁\n1,3,戊,己\n1,11,大师,庚\n1,12,辛,癸\n"
RECORD = "/api/records/{board}"
MOVES = "/api/records/{board}/moves"
UNDO = "/api/records/{board}/undo"


def as_wxf(zh: str) -> str:
    """The score sheet in WXF, transliterated by the test itself (后马进６ → H-+6 → -H+6)."""
    text = zh.translate(_WXF_OF)
    if text[0] in "+-":
        text = text[1] + text[0] + text[2:]
    return text


def accounts() -> list[dict[str, Any]]:
    def account(user: str, role: str, **kw: Any) -> dict[str, Any]:
        return {"username": user, "password_hash": PASSWORD_HASH, "role": role, **kw}

    return [
        account(ARBITER, "chief"),
        account("rec2", "recorder", boards=["2"]),
        account("viewer", "viewer"),
    ]


async def login(client: httpx.AsyncClient, user: str) -> dict[str, Any]:
    r = await client.post("/api/auth/login", json={"username": user, "password": ARBITER_PASSWORD})
    assert r.status_code == 200, r.text
    client.headers["X-CSRF-Token"] = r.json()["csrf"]
    return dict(r.json())


async def setup_round(client: httpx.AsyncClient) -> None:
    await login(client, ARBITER)
    r = await client.post("/api/players", content=PLAYERS.encode())
    assert r.status_code == 200, r.text
    r = await client.post("/api/pairings?send=0", content=PAIRINGS.encode())
    assert r.status_code == 200, r.text


async def post_move(
    client: httpx.AsyncClient, checker: Checker, board: str, move: str, ply: int
) -> dict[str, Any]:
    r = await client.post(f"/api/records/{board}/moves", json={"move": move, "ply": ply})
    assert r.status_code == 200, (board, ply, move, r.text)
    return dict(checker.check("post", MOVES, r))


async def refused(
    client: httpx.AsyncClient,
    checker: Checker,
    path: str,
    url: str,
    status: int,
    code: str,
    body: dict[str, Any] | None = None,
    method: str = "post",
) -> dict[str, Any]:
    r = await (client.post(url, json=body) if method == "post" else client.get(url))
    assert r.status_code == status, (url, body, r.status_code, r.text)
    got = r.json()
    assert got["code"] == code and got["error"], got
    if path:
        checker.check(method, path, r)
    return dict(got)


@pytest.fixture
async def station(tmp_path: Path, start_station: Any) -> Any:
    config = station_config(tmp_path, regulation="wulong-2015", account=accounts())
    return await start_station(config, connect=False)


async def test_the_published_game_in_three_notations_is_one_record(station: Any) -> None:
    checker = Checker(SCHEMA)
    entries = {"1": CHINESE, "2": [as_wxf(z) for z in CHINESE], "3": ICCS}
    assert len(CHINESE) == len(ICCS) == 125
    async with httpx.AsyncClient(base_url=station.http_url, timeout=30) as chief:
        await setup_round(chief)
        for board, moves in entries.items():
            for ply, move in enumerate(moves):
                if ply == 77 and board == "3":  # two black horses on file ７ could retreat
                    got = await refused(
                        chief, checker, MOVES, "/api/records/3/moves", 422, "ambiguous_move",
                        {"move": "马７退９", "ply": 77},
                    )  # fmt: skip
                    assert "前马退９" in got["error"] and got["args"]["side"] == "black"
                view = await post_move(chief, checker, board, move, ply)
            assert view["ply"] == 125 and view["fen"] == FINAL_FEN, view["fen"]
            assert [m["iccs"] for m in view["moves"]] == ICCS
            assert [m["chinese"] for m in view["moves"]] == CHINESE  # the published score sheet
            assert view["updated_by"] == ARBITER
        records = [(await chief.get(f"/api/records/{b}")).json() for b in entries]
        for rec in records:
            checker.validate(checker.schema_for("get", RECORD, 200, "application/json"), rec)
            assert rec["moves"] == records[0]["moves"]
        pgns = []
        for board in entries:
            r = await chief.get(f"/api/export/games/r1-b{board}/record.pgn")
            assert r.status_code == 200 and r.headers["content-type"].startswith(
                "application/x-chess-pgn"
            )
            pgns.append(r.text)
            (game,) = read_pgn(r.text)
            assert game.tags["Game"] == "Chinese Chess" and game.tags["GameId"] == f"r1-b{board}"
            assert game.record.iccs() == ICCS and game.record.position.fen == FINAL_FEN
            assert "炮八平五" in r.text  # the Chinese in the comments, for the Chinese readers
        strip = [re.sub(r'\[(GameId|Board|Red|Black|White) "[^"]*"\]\n', "", p) for p in pgns]
        assert strip[0] == strip[1] == strip[2]  # the same record, whatever the notation
        r = await chief.get("/api/export/rounds/1/records.pgn")
        assert r.status_code == 200
        games = read_pgn(r.text)
        assert [g.tags["Board"] for g in games] == ["1", "2", "3"]
        assert all(g.record.iccs() == ICCS for g in games)
        refused_round = await chief.get("/api/export/rounds/2/records.pgn")
        assert refused_round.status_code == 404 and refused_round.json()["code"] == "no_records"
    if not FAIRY_STOCKFISH.exists():
        skip_missing("fairy-stockfish", "apt-get install fairy-stockfish")
    referee = Referee()
    try:  # the exported moves, read back, each legal to the independent program
        for ply, move in enumerate(games[0].record.iccs()):
            assert move in referee.legal_moves(START_FEN, ICCS[:ply]), (ply, move)
        assert referee.fen(START_FEN, ICCS).split()[:2] == FINAL_FEN.split()[:2]
    finally:
        referee.close()


async def _nothing_stored(station: Any, before: list[dict[str, Any]]) -> None:
    store = station.require_store()
    after = [await store.record_rows.record_edits(f"r1-b{b}") for b in ("1", "2", "3", "11", "12")]
    assert after == before


async def test_refusals_are_clear_and_store_nothing(station: Any) -> None:
    checker = Checker(SCHEMA)
    async with (
        httpx.AsyncClient(base_url=station.http_url) as chief,
        httpx.AsyncClient(base_url=station.http_url) as anonymous,
        httpx.AsyncClient(base_url=station.http_url) as viewer,
    ):
        await setup_round(chief)
        await post_move(chief, checker, "1", "炮二平五", 0)
        store = station.require_store()
        before = [
            await store.record_rows.record_edits(f"r1-b{b}") for b in ("1", "2", "3", "11", "12")
        ]
        assert len(before[0]) == 1
        cases = [
            ("1", {"move": "马２进４", "ply": 1}, 422, "illegal_move"),  # its leg is blocked
            ("1", {"move": "马８进７", "ply": 0}, 409, "record_changed"),  # a stale client
            ("1", {"move": "h7h0", "ply": 1}, 422, "illegal_move"),
            ("1", {"move": "炮二平五", "ply": 1}, 422, "wrong_side"),  # red's move on black's turn
            ("1", {"move": "b0c2", "ply": 1}, 422, "wrong_side"),
            ("1", {"move": "hello", "ply": 1}, 422, "unreadable_move"),
            # black's reply typed on red's turn, as a phone types it: never red's 马八进七
            ("2", {"move": "马8进7", "ply": 0}, 422, "black_numerals"),
            ("12", {"move": "炮二平五", "ply": 0}, 409, "record_not_required"),
            ("99", {"move": "炮二平五", "ply": 0}, 404, "no_game"),
            ("1", {"move": "炮二平五"}, 400, "bad_request"),  # no ply
        ]
        for board, body, status, code in cases:
            got = await refused(
                chief, checker, MOVES, f"/api/records/{board}/moves", status, code, body
            )
            if code in ("illegal_move", "wrong_side", "unreadable_move"):
                assert got["args"]["side"] == "black" and got["args"]["move"] == body["move"]
            if code == "black_numerals":
                assert got["args"] == {"move": "马8进7", "side": "red", "as_move": "马八进七"}
            if code == "record_changed":
                assert got["args"] == {"ply": 0, "found": 1}
        await refused(
            chief, checker, UNDO, "/api/records/1/undo", 409, "record_changed", {"ply": 0}
        )
        await refused(
            chief, checker, UNDO, "/api/records/2/undo", 409, "nothing_to_undo", {"ply": 0}
        )
        # a board that needs none reads as not required; board 11 (a master) must be recorded
        assert (await anonymous.get("/api/records/12")).json()["required"] is False
        assert (await anonymous.get("/api/records/11")).json()["required"] is True
        # not logged in, or a viewer: no recording
        await refused(
            anonymous,
            checker,
            MOVES,
            "/api/records/1/moves",
            401,
            "unauthenticated",
            {"move": "马８进７", "ply": 1},
        )
        await login(viewer, "viewer")
        await refused(
            viewer,
            checker,
            MOVES,
            "/api/records/1/moves",
            403,
            "forbidden",
            {"move": "马８进７", "ply": 1},
        )
        await _nothing_stored(station, before)
        # undo, then the move again
        r = await chief.post("/api/records/1/undo", json={"ply": 1})
        assert r.status_code == 200 and checker.check("post", UNDO, r)["ply"] == 0
        edits = await store.record_rows.record_edits("r1-b1")
        assert [(e["action"], e["move"], e["ply"], e["by"]) for e in edits] == [
            ("add", "h2e2", 1, ARBITER),
            ("undo", "h2e2", 0, ARBITER),
        ]


async def test_a_move_sent_again_after_a_lost_answer_is_answered_as_stored(
    station: Any,
) -> None:
    """A phone in a hall whose answer was lost sends the same move again with the same ply
    (static/record_outbox.js): the station answers with the record, which has the move once;
    the same move in another notation is the same move. Another move on that ply is still a
    stale client's (record_changed), and a repeat two moves back is too."""
    checker = Checker(SCHEMA)
    async with httpx.AsyncClient(base_url=station.http_url) as chief:
        await setup_round(chief)
        await post_move(chief, checker, "1", "炮二平五", 0)
        store = station.require_store()
        for again in ("炮二平五", "C2.5", "h2e2"):
            view = await post_move(chief, checker, "1", again, 0)
            assert view["ply"] == 1 and [m["iccs"] for m in view["moves"]] == ["h2e2"]
        assert len(await store.record_rows.record_edits("r1-b1")) == 1  # stored once
        got = await refused(
            chief, checker, MOVES, "/api/records/1/moves", 409, "record_changed",
            {"move": "炮八平五", "ply": 0},
        )  # fmt: skip
        assert got["args"] == {"ply": 0, "found": 1}
        await post_move(chief, checker, "1", "马８进７", 1)
        await refused(
            chief, checker, MOVES, "/api/records/1/moves", 409, "record_changed",
            {"move": "炮二平五", "ply": 0},
        )  # fmt: skip
        assert len(await store.record_rows.record_edits("r1-b1")) == 2

        # The count alone does not tell a move taken back and another entered since: a client
        # that says the last move it had (after) is refused when the record's is another
        r = await chief.post("/api/records/1/undo", json={"ply": 2, "after": "h9g7"})
        assert r.status_code == 200, r.text
        await post_move(chief, checker, "1", "马２进３", 1)  # another black move on ply 2
        for after in ("h9g7", ""):
            await refused(
                chief, checker, MOVES, "/api/records/1/moves", 409, "record_changed",
                {"move": "马八进七", "ply": 2, "after": after},
            )  # fmt: skip
        await refused(
            chief, checker, UNDO, "/api/records/1/undo", 409, "record_changed",
            {"ply": 2, "after": "h9g7"},
        )  # fmt: skip
        await refused(
            chief, checker, MOVES, "/api/records/1/moves", 400, "bad_request",
            {"move": "马八进七", "ply": 2, "after": "马８进７"},
        )  # fmt: skip
        r = await chief.post(
            "/api/records/1/moves", json={"move": "马八进七", "ply": 2, "after": "b9c7"}
        )
        assert r.status_code == 200 and r.json()["ply"] == 3, r.text
        # the same move again, after a lost answer, with what the client had: stored once
        r = await chief.post(
            "/api/records/1/moves", json={"move": "b0c2", "ply": 2, "after": "b9c7"}
        )
        assert r.status_code == 200 and r.json()["ply"] == 3, r.text
        assert len(await store.record_rows.record_edits("r1-b1")) == 5


async def test_a_recorder_records_its_board_and_nothing_else(station: Any) -> None:
    checker = Checker(SCHEMA)
    async with (
        httpx.AsyncClient(base_url=station.http_url) as chief,
        httpx.AsyncClient(base_url=station.http_url) as recorder,
        httpx.AsyncClient(base_url=station.http_url) as phone,
    ):
        await setup_round(chief)
        me = await login(recorder, "rec2")
        assert me["role"] == "recorder" and me["boards"] == ["2"]
        view = await post_move(recorder, checker, "2", "c3c4", 0)
        assert view["updated_by"] == "rec2" and view["to_move"] == "black"
        r = await recorder.get("/api/records/2")
        assert r.status_code == 200 and checker.check("get", RECORD, r)["ply"] == 1
        store = station.require_store()
        before = [
            await store.record_rows.record_edits(f"r1-b{b}") for b in ("1", "2", "3", "11", "12")
        ]
        commands, pairings = await store.commands(), await store.pairings()
        tries = [
            ("post", "/api/records/1/moves", {"move": "炮二平五", "ply": 0}),
            ("post", "/api/records/1/undo", {"ply": 0}),
            ("get", "/api/records/1", None),
            ("get", "/api/boards", None),
            ("get", "/api/games", None),
            ("get", "/api/standings", None),
            ("get", "/api/export/games/r1-b2/record.pgn", None),
            ("post", "/api/boards/2/cmd", {"cmd": "pause", "args": {}}),
            ("post", "/api/venue/cmd", {"cmd": "start", "args": {}}),
            ("post", "/api/pairings", {}),
            ("post", "/api/tournament/withdraw", {"player": "甲"}),
            ("get", "/record/1", None),
            ("get", "/arbiter", None),
        ]
        for method, url, body in tries:
            if not url.startswith("/api/"):  # a page: refused in words, both languages
                page = await recorder.get(url)
                assert page.status_code == 403 and "录谱账号" in page.text, page.text
                assert 'href="/record/2"' in page.text and "recorder_only" not in page.text
                continue
            got = await refused(recorder, checker, "", url, 403, "recorder_only", body, method)
            assert got["args"] == {"boards": ["2"]}, got
        await _nothing_stored(station, before)
        assert await store.commands() == commands and await store.pairings() == pairings
        # the alarm banner every page polls (an outsider's record phone was refused it 22 times)
        assert (await recorder.get("/api/station")).status_code == 200
        # the chief's QR sheet: a key per board; the key opens that one board on a phone
        r = await chief.get("/api/record-keys")
        keys = {k["board"]: k for k in checker.check("get", "/api/record-keys", r)["keys"]}
        assert sorted(keys, key=int) == ["1", "2", "3", "11", "12"]
        assert keys["12"]["required"] is False and keys["11"]["required"] is True
        assert keys["3"]["path"] == f"/record/3?key={keys['3']['key']}"
        r = await phone.post("/api/auth/record-key", json={"board": "3", "key": keys["1"]["key"]})
        assert r.status_code == 401 and r.json()["code"] == "bad_key"
        checker.check("post", "/api/auth/record-key", r)
        r = await phone.post("/api/auth/record-key", json={"board": "3", "key": keys["3"]["key"]})
        assert r.status_code == 200, r.text
        session = checker.check("post", "/api/auth/record-key", r)
        assert session["role"] == "recorder" and session["boards"] == ["3"]
        phone.headers["X-CSRF-Token"] = session["csrf"]
        await post_move(phone, checker, "3", "h2e2", 0)
        await refused(
            phone,
            checker,
            "",
            "/api/records/2/moves",
            403,
            "recorder_only",
            {"move": "马８进７", "ply": 1},
        )
        await refused(phone, checker, "", "/api/record-keys", 403, "recorder_only", None, "get")
        assert (await phone.get("/api/auth/session")).json()["boards"] == ["3"]
        assert (await phone.post("/api/auth/logout")).status_code == 200
        assert (await phone.get("/api/boards")).status_code == 200  # anonymous again
        # a recorder may not read the keys; a viewer neither
        await refused(recorder, checker, "", "/api/record-keys", 403, "recorder_only", None, "get")


async def test_a_record_key_session_ends_with_its_secret(station: Any) -> None:
    """Deleting or replacing the record key secret voids every printed key (docs/records.md);
    the sessions those keys had opened went on recording (a reviewer). The next action of such
    a session is refused as a login that ended, and the old key opens nothing."""
    async with (
        httpx.AsyncClient(base_url=station.http_url) as chief,
        httpx.AsyncClient(base_url=station.http_url) as phone,
    ):
        await setup_round(chief)
        key = next(k for k in (await chief.get("/api/record-keys")).json()["keys"]
                   if k["board"] == "3")["key"]  # fmt: skip
        r = await phone.post("/api/auth/record-key", json={"board": "3", "key": key})
        assert r.status_code == 200, r.text
        phone.headers["X-CSRF-Token"] = r.json()["csrf"]
        r = await phone.post("/api/records/3/moves", json={"move": "h2e2", "ply": 0})
        assert r.status_code == 200, r.text
        await station.require_store().set_meta("record_key_secret", "ab" * 32)  # replaced
        r = await phone.post("/api/records/3/moves", json={"move": "h9g7", "ply": 1})
        assert r.status_code == 401 and r.json()["code"] == "unauthenticated", r.text
        assert (await phone.get("/api/auth/session")).status_code == 401  # logged out
        r = await phone.post("/api/auth/record-key", json={"board": "3", "key": key})
        assert r.status_code == 401 and r.json()["code"] == "bad_key"
        assert (await phone.get("/api/records/3")).json()["ply"] == 1  # the refused move: none


@pytest.mark.broker
async def test_moves_meet_the_clock(venue_broker: Any, tmp_path: Path, start_station: Any) -> None:
    """Move N pairs with the clock's press N: each gets its time used and left ([%clk]); one
    move more than the presses, or a press of the other side, is reported, not merged."""
    checker = Checker(SCHEMA)
    config = station_config(tmp_path, venue_broker, regulation="wulong-2015", account=accounts())
    station = await start_station(config)
    async with (
        FakeNode(venue_broker, "node-a", ["1", "2", "3", "11", "12"]) as fake,
        httpx.AsyncClient(base_url=station.http_url) as chief,
    ):
        await setup_round(chief)
        await fake.emit("1", type="started", data={}, game="r1-b1", running="red")
        left = {"red": 5_400_000, "black": 5_400_000}
        for ply in range(4):  # four presses: red, black, red, black
            side = "red" if ply % 2 == 0 else "black"
            used = 10_000 * (ply + 1)
            left[side] -= used
            data = {"side": side, "used_ms": used, "move": ply // 2 + 1}
            await fake.emit(
                "1", data=data, game="r1-b1", red_ms=left["red"], black_ms=left["black"]
            )

        async def presses() -> int:
            await station.ingest.flush()
            return len(await station.require_store().game_events("r1-b1", ["move"]))

        async with asyncio.timeout(10):
            while await presses() < 4:
                await asyncio.sleep(0.05)
        assert await presses() == 4
        for ply, move in enumerate(["炮二平五", "马８进７", "马二进三"]):
            view = await post_move(chief, checker, "1", move, ply)
        assert view["pairing"] == {
            "matched": False,
            "verdict": "fewer",
            "disagreement": None,
            "moves": 3,
            "presses": 4,
        }
        clocks = [m["clock"] for m in view["moves"]]
        assert clocks == [
            {"used_ms": 10_000, "remaining_ms": 5_390_000},
            {"used_ms": 20_000, "remaining_ms": 5_380_000},
            {"used_ms": 30_000, "remaining_ms": 5_360_000},
        ]
        view = await post_move(chief, checker, "1", "车９平８", 3)
        assert view["pairing"]["matched"] is True
        view = await post_move(chief, checker, "1", "车一平二", 4)  # a fifth move, no fifth press
        assert view["pairing"] == {
            "matched": False,
            "verdict": "more",
            "disagreement": None,
            "moves": 5,
            "presses": 4,
        }
        assert view["moves"][-1]["clock"] is None
        pgn = (await chief.get("/api/export/games/r1-b1/record.pgn")).text
        assert "[%clk 1:29:50]" in pgn and "[%clk 1:29:20]" in pgn
        assert '[ClockPairing "5 moves, 4 presses"]' in pgn
        (game,) = read_pgn(pgn)
        assert len(game.record.moves) == 5  # the fifth move has no clock, and reads back so
        assert [c.left_ms if c else None for c in game.clocks][:5] == [
            5_390_000, 5_380_000, 5_360_000, 5_340_000
        ] + [None] * (len(game.clocks) - 4)  # fmt: skip
