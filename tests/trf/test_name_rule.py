"""One name rule for every way a name comes in (issue 27): each control or format character
(NUL, ESC, DEL, a C1 control, bidi embeddings/overrides/isolates, zero-width characters, a BOM
inside the text, a line separator) through each import — the players CSV, the pairings CSV,
a TRF (``POST /api/trf``), a pairs list, an account in the station's config — is refused,
naming the field and the line, and nothing of it is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import station_config

from venue_station.auth import hash_password
from venue_station.domain.station import Station
from venue_station.errors import ConfigError

GOLDEN = Path(__file__).parent / "golden"
TRF = (GOLDEN / "xiangqi-r3.trf").read_text(encoding="utf-8")
CHARS = [
    "\x00",
    "\x1b",
    "\x7f",
    "\x85",
    "\u202a",
    "\u202e",
    "\u2066",
    "\u2069",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u2028",
]
IDS = [f"U+{ord(c):04X}" for c in CHARS]


@pytest.fixture
async def station(tmp_path: Path, start_station: Any) -> Station:
    boss = {"username": "boss", "password_hash": hash_password("pw-boss"), "role": "admin"}
    started: Station = await start_station(station_config(tmp_path, account=[boss]), connect=False)
    return started


async def post(station: Station, path: str, body: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.post("/api/auth/login", json={"username": "boss", "password": "pw-boss"})
        csrf = {"X-CSRF-Token": r.json()["csrf"]}
        return await client.post(path, content=body.encode(), headers=csrf)


def trf_line_of(name: str) -> int:
    """The line of the golden TRF that names ``name`` (counted from 1)."""
    return next(i for i, line in enumerate(TRF.splitlines(), 1) if name in line)


def poisoned(char: str) -> str:
    # 王天一's name with the character inside it, the line's columns kept
    return TRF.replace("王天一 ", f"王{char}天一", 1)


@pytest.mark.parametrize("char", CHARS, ids=IDS)
async def test_every_import_refuses_the_character(station: Station, char: str) -> None:
    code = f"U+{ord(char):04X}"
    store = station.require_store()
    cases = [
        ("/api/players", f"name,club\n许银川,广东\n王{char}天一,北京\n", "line 3", "name"),
        (
            "/api/pairings?send=0",
            f"round,board,red,black\n1,1,许银川,吕钦\n1,2,王{char}天一,郑惟桐\n",
            "line 3",
            "red",
        ),
        ("/api/trf?send=0", poisoned(char), f"line {trf_line_of('王天一')}", "player name"),
    ]
    for path, body, line, field in cases:
        r = await post(station, path, body)
        assert r.status_code == 400, (path, r.text)
        error = r.json()
        assert code in error["error"] and field in error["error"], (path, error)
        assert (error.get("where") or "").startswith(line), (path, error)
    assert await store.player_names() == set() or await store.player_names() == []
    assert await store.games() == []
    # a pairs list: start ranks only, and the same rule first
    ok = await post(station, "/api/trf?send=0", TRF)
    assert ok.status_code == 200, ok.text
    r = await post(station, "/api/pairs?send=0&round=4", f"1\n1 {char}2\n")
    assert r.status_code == 400 and code in r.json()["error"], r.text
    assert r.json()["where"] == "line 2"
    assert await store.games(4) == []


@pytest.mark.parametrize("char", CHARS, ids=IDS)
def test_an_account_name_with_the_character_is_refused(tmp_path: Path, char: str) -> None:
    account = {"username": f"arb{char}1", "password_hash": hash_password("x-pw-1"), "role": "chief"}
    with pytest.raises((ConfigError, ValueError)) as refused:
        station_config(tmp_path, account=[account])
    text = str(refused.value)
    assert "username" in text and f"U+{ord(char):04X}" in text, text
