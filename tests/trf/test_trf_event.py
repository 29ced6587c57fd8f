"""A simulated 9-round, 80-player open run with a pairing program through the station's HTTP API:
the chief arbiter imports the players as a TRF; after each round the TRF is exported and must
agree with the station's standings (points and ranks); a stand-in engine reads only that TRF and
answers with a pairs list, which is imported and played by simulated board events (results,
flags, confirmed forfeits). One player is announced absent for a round (240 Z), so the engine
gives a pairing-allocated bye. At the end the TRF's points equal the standings' points."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import (
    ARBITER,
    ARBITER_PASSWORD,
    decision_txn,
    envelope,
    station_config,
)

from clock_service.trf.document import Trf
from clock_service.trf.pairs import pairs_text
from venue_station.auth import hash_password
from venue_station.domain.station import Station

CHIEF, CHIEF_PASSWORD = "chief1", "总裁判-secret-2"
SURNAMES = "王张李刘陈杨黄赵吴周徐孙马朱胡郭何高林罗"
GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平"
ABSENT_ROUND, ABSENT_PLAYER = 5, 80


def entry_trf(n: int = 80) -> str:
    """The players as a pairing program exports them before round 1 (TRF-2026, CR LF)."""
    lines = [
        "012 棋钟模拟公开赛",
        "022 成都",
        "042 2026/12/01",
        "052 2026/12/03",
        "102 赵裁判",
        "142 9",
        "162  W 2.0    D 1.0    L 0.0",
    ]
    for i in range(1, n + 1):
        name = SURNAMES[i % 20] + GIVEN[(i * 7) % 20]
        if i in (41, 42):
            name = "张伟"  # two players with the same name: the start rank tells them apart
        rating = 2600 - 10 * i
        lines.append(
            f"001 {i:>4} {'m' if i % 3 else 'w'}    {name:<33} {rating:>4} CHN {'':>11} "
            f"{'':<10}  0.0 {i:>4}"
        )
    return "".join(x + "\r\n" for x in lines)


def engine(trf: Trf, round_no: int) -> list[tuple[int, int]]:
    """A tiny deterministic pairer standing in for bbpPairings: by score then start rank, the
    next player not met yet; colours to whoever had fewer whites; a bye (N 0) to the lowest
    player without one when the number present is odd."""
    absent = trf.absent(round_no)
    order = sorted(
        (p for p in trf.players if p.start_rank not in absent),
        key=lambda p: (-p.points, p.start_rank),
    )
    met = {p.start_rank: {c.opponent for c in p.rounds} for p in order}
    balance = {
        p.start_rank: sum(1 if c.colour == "w" else -1 if c.colour == "b" else 0 for c in p.rounds)
        for p in order
    }
    ids = [p.start_rank for p in order]
    pairs: list[tuple[int, int]] = []
    bye = None
    if len(ids) % 2:
        had = {p.start_rank for p in trf.players if any(c.code in "UF" for c in p.rounds)}
        bye = next(x for x in reversed(ids) if x not in had)
        ids.remove(bye)

    def solve(rest: list[int]) -> list[tuple[int, int]] | None:
        if not rest:
            return []
        top = rest[0]
        for other in rest[1:]:
            if other in met[top]:
                continue
            tail = solve([x for x in rest[1:] if x != other])
            if tail is not None:
                return [(top, other), *tail]
        return None

    matched = solve(ids)
    assert matched is not None, "no pairing without a rematch"
    for a, b in matched:
        white, black = (a, b) if balance[a] <= balance[b] else (b, a)
        pairs.append((white, black))
    if bye is not None:
        pairs.append((bye, 0))
    return pairs


class Boards:
    """Simulated boards: each board's events with its own running seq, through the ingest. A
    result or a confirmed forfeit reaches the station as a real one does: the board applies the
    arbiter's command and its event carries that command's txn (issue 12); a flag stays a
    proposal."""

    def __init__(self, station: Station) -> None:
        self.station = station
        self.seq: dict[str, int] = {}

    def send(self, board: str, game: str, type: str, data: dict[str, Any]) -> None:
        seq = self.seq[board] = self.seq.get(board, 0) + 1
        decides = type == "result" or data.get("status") == "confirmed"
        txn = decision_txn(self.station, board, type, data) if decides else None
        ev = envelope(board, seq, game=game, type=type, data=data, txn=txn)
        assert self.station.ingest is not None
        self.station.ingest.handle(f"qz/v1/test/board/{board}/event", json.dumps(ev).encode())

    def play(self, board: str, game: str, rng: random.Random) -> None:
        roll = rng.random()
        if roll < 0.35:
            self.send(board, game, "result", {"winner": "red", "reason": "checkmate"})
        elif roll < 0.65:
            self.send(board, game, "result", {"winner": "black", "reason": "resign"})
        elif roll < 0.9:
            self.send(board, game, "result", {"winner": None, "reason": "agreed"})
        elif roll < 0.95:
            self.send(board, game, "flag", {"side": "red"})  # a proposal until confirmed
            data = {"winner": "black", "reason": "flag", "status": "confirmed"}
            self.send(board, game, "result", data)
        elif roll < 0.97:
            self.forfeit(board, game, "black")
        else:  # both absent: a double forfeit, a loss for both
            for side in ("red", "black"):
                self.forfeit(board, game, side)

    def forfeit(self, board: str, game: str, side: str) -> None:
        """The node proposes the forfeit, the arbiter confirms it (its ``resolve``)."""
        self.send(board, game, "forfeit", {"side": side, "reason": "absent", "status": "pending"})
        ref = self.seq[board]
        data = {"side": side, "reason": "absent", "status": "confirmed", "ref": ref}
        self.send(board, game, "forfeit", data)

    async def flush(self) -> None:
        assert self.station.ingest is not None
        await self.station.ingest.flush()


@pytest.fixture
async def station(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    accounts = [
        {"username": ARBITER, "password_hash": hash_password(ARBITER_PASSWORD), "role": "arbiter"},
        {"username": CHIEF, "password_hash": hash_password(CHIEF_PASSWORD), "role": "chief"},
    ]
    config = station_config(
        tmp_path, database_url=db_url, regulation="wulong-2015", account=accounts
    )
    started: Station = await start_station(config, connect=False)
    return started


async def login(client: httpx.AsyncClient, user: str, password: str) -> dict[str, str]:
    r = await client.post("/api/auth/login", json={"username": user, "password": password})
    assert r.status_code == 200, r.text
    return {"X-CSRF-Token": r.json()["csrf"]}


@pytest.mark.slow
async def test_nine_rounds_with_a_pairing_program(station: Station) -> None:
    rng = random.Random(20261201)
    boards = Boards(station)
    async with httpx.AsyncClient(base_url=station.http_url, timeout=60) as client:
        arbiter = await login(client, ARBITER, ARBITER_PASSWORD)
        refused = await client.post("/api/trf?send=0", content=entry_trf(), headers=arbiter)
        assert refused.status_code == 403, refused.text
        chief = await login(client, CHIEF, CHIEF_PASSWORD)
        r = await client.post("/api/trf?send=0", content=entry_trf().encode(), headers=chief)
        assert r.status_code == 200, r.text
        assert r.json()["players"] == 80 and r.json()["round"] is None
        entrants = (await client.get("/api/trf/entrants")).json()["entrants"]
        key_of = {e["start_rank"]: e["player"] for e in entrants}
        assert key_of[41] != key_of[42] and {key_of[41], key_of[42]} == {"张伟 (41)", "张伟 (42)"}
        rank_of = {v: k for k, v in key_of.items()}

        trf = Trf.parse((await client.get("/api/export/tournament.trf?round=0")).content)
        for round_no in range(1, 10):
            pairs = engine(trf, round_no)
            r = await client.post(
                f"/api/pairs?round={round_no}&send=0",
                content=pairs_text(pairs),
                headers=chief,
            )
            assert r.status_code == 200, r.text
            games = [(w, b) for w, b in pairs if b]
            assert r.json()["games"] == len(games)
            stored = (await client.get("/api/games", params={"round": round_no})).json()
            stored_games = stored["games"] if isinstance(stored, dict) else stored
            by_board = {g["board"]: (g["red"], g["black"]) for g in stored_games}
            for board, (white, black) in enumerate(games, 1):
                assert by_board[str(board)] == (key_of[white], key_of[black])  # red = white
                boards.play(str(board), f"r{round_no}-b{board}", rng)
            await boards.flush()

            absent = f"&absent={ABSENT_PLAYER}" if round_no + 1 == ABSENT_ROUND else ""
            export = await client.get(f"/api/export/tournament.trf?round={round_no}{absent}")
            assert export.status_code == 200, export.text
            assert export.headers["content-type"].startswith("text/plain")
            text = export.content.decode()
            assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
            trf = Trf.parse(text)
            trf.check()  # points follow from the results, both lines of each game agree
            assert trf.rounds_played == round_no
            standings = (await client.get("/api/standings", params={"round": round_no})).json()[
                "standings"
            ]
            assert len(standings) == 80
            for row in standings:
                p = trf.player(rank_of[row["player"]])
                assert p.points == Decimal(row["points"]), row
                assert p.rank == row["rank"], row
            if round_no + 1 == ABSENT_ROUND:
                assert trf.absent(ABSENT_ROUND) == {ABSENT_PLAYER: "Z"}
            if round_no == ABSENT_ROUND:
                cell = trf.player(ABSENT_PLAYER).rounds[ABSENT_ROUND - 1]
                assert (cell.opponent, cell.code) == (0, "Z")
                byes = [p for p in trf.players if p.rounds[ABSENT_ROUND - 1].code == "U"]
                assert len(byes) == 1 and byes[0].rounds[ABSENT_ROUND - 1].opponent == 0

        final = (await client.get("/api/standings")).json()["standings"]
        assert {rank_of[r["player"]]: Decimal(r["points"]) for r in final} == {
            p.start_rank: p.points for p in trf.players
        }
        assert sum(p.points for p in trf.players) > 0
        codes = {c.code for p in trf.players for c in p.rounds}
        assert {"1", "0", "=", "+", "-", "U", "Z"} <= codes
        double = [
            (p.start_rank, r)
            for p in trf.players
            for r, c in enumerate(p.rounds)
            if c.code == "-" and trf.player(c.opponent).rounds[r].code == "-"
        ]
        assert double, "no double forfeit was played"
