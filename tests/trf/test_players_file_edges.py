"""A players TRF imported again, at the edges a reviewer found (stop 41): a dropped player who
has a bye, a file whose round cannot be set, and two players of one name when the list would
be renumbered. Each is refused or left as it was — nothing half changed, nothing moved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from support.registration import header, line001
from support.station import station_config

from venue_station.auth import hash_password
from venue_station.domain.station import Station
from venue_station.domain.trf_state import load_state

NAMES = {1: "王天一", 2: "郑惟桐", 3: "赵鑫鑫", 4: "唐丹", 5: "王晓明"}


@pytest.fixture
async def station(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    accounts = [{"username": "boss", "password_hash": hash_password("pw-boss"), "role": "admin"}]
    return await start_station(
        station_config(tmp_path, database_url=db_url, account=accounts), connect=False
    )


def trf(names: dict[int, str], cells: dict[int, list[tuple[int, str, str]]]) -> bytes:
    lines = header(len(names))
    for sr in sorted(names):
        lines.append(line001(sr, names[sr], 2400 - sr, cells=cells.get(sr, [])))
    return ("\r\n".join(lines) + "\r\n").encode()


async def chief(client: httpx.AsyncClient) -> dict[str, str]:
    r = await client.post("/api/auth/login", json={"username": "boss", "password": "pw-boss"})
    return {"X-CSRF-Token": r.json()["csrf"]}


async def test_a_player_with_a_bye_is_not_dropped(station: Station) -> None:
    """Round 1 paired with 王晓明 absent (Z), then a file without him: refused — his bye is
    kept by start rank and would be left to no one (the export refused) or to the next
    player given rank 5."""
    r1 = {1: [(3, "w", " ")], 3: [(1, "b", " ")], 2: [(4, "w", " ")], 4: [(2, "b", " ")],
          5: [(0, "-", "Z")]}  # fmt: skip
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        h = await chief(client)
        assert (await client.post("/api/trf?send=0", content=trf(NAMES, r1), headers=h)).is_success
        four = {k: v for k, v in NAMES.items() if k != 5}
        r = await client.post("/api/trf?send=0", content=trf(four, {}), headers=h)
        assert r.status_code == 409 and r.json()["code"] == "players_mismatch", r.text
        assert r.json()["args"]["missing"] == ["王晓明"]
        assert "王晓明" in await station.require_store().player_names()
        export = await client.get("/api/export/tournament.trf", headers=h)
        assert export.status_code == 200, export.text


async def test_a_round_that_cannot_be_set_changes_no_player(station: Station) -> None:
    """A file pairing round 10 of a 9-round regulation, which also drops a player: its preview
    and its import are refused alike, and the dropped player's row (club, groups) is kept."""
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        h = await chief(client)
        assert (await client.post("/api/trf?send=0", content=trf(NAMES, {}), headers=h)).is_success
        csv = "name,club,rating,tags\n王晓明,武隆,,local\n".encode()
        r = await client.post(
            "/api/players", content=csv, headers={**h, "Content-Type": "text/csv"}
        )
        assert r.is_success, r.text
        four = {k: v for k, v in NAMES.items() if k != 5}
        pairs = {1: (2, "w"), 2: (1, "b"), 3: (4, "w"), 4: (3, "b")}
        cells = {sr: [(opp, col, "=") for _ in range(9)] + [(opp, col, " ")]
                 for sr, (opp, col) in pairs.items()}  # fmt: skip
        body = trf(four, cells).replace(b"142 9", b"142 10").replace(b"XXR 9", b"XXR 10")
        for query in ("?send=0&dry_run=1", "?send=0"):
            r = await client.post("/api/trf" + query, content=body, headers=h)
            assert r.status_code == 400 and "round 10" in r.json()["error"], r.text
        tags = await station.require_store().reads.player_tags()
        assert tags["王晓明"] == frozenset({"local"})
        state = await load_state(station.require_store())
        assert [e["key"] for e in state.entrants] == list(NAMES.values())


async def test_namesakes_are_not_renumbered_and_keep_their_withdrawal(station: Station) -> None:
    """Two players named 王磊 (keys 王磊 (3), 王磊 (5)); one withdrawn; the first player deleted
    before round 1: the list is not renumbered (their keys carry their ranks), the no-show
    leaves, and the withdrawal stays on the right 王磊."""
    names = {1: "王天一", 2: "郑惟桐", 3: "王磊", 4: "唐丹", 5: "王磊", 6: "赵鑫鑫"}
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        h = await chief(client)
        assert (await client.post("/api/trf?send=0", content=trf(names, {}), headers=h)).is_success
        r = await client.post("/api/tournament/withdraw", json={"player": "王磊 (5)"}, headers=h)
        assert r.is_success, r.text
        rest = {k: v for k, v in names.items() if k != 1}
        r = await client.post("/api/trf?send=0", content=trf(rest, {}), headers=h)
        assert r.is_success and r.json().get("removed") == ["王天一"], r.text
        assert "renumbered" not in r.json()
        state = await load_state(station.require_store())
        assert [(e["start_rank"], e["key"]) for e in state.entrants] == [
            (2, "郑惟桐"), (3, "王磊 (3)"), (4, "唐丹"), (5, "王磊 (5)"), (6, "赵鑫鑫"),
        ]  # fmt: skip
        assert state.withdrawn == ["王磊 (5)"]
