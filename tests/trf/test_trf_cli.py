"""``qizhong trf``: check and pairs offline; import and export against a running station."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.station import station_config

from clock_service.trf.document import Trf
from qizhong.cli.main import main
from venue_station.auth import hash_password
from venue_station.domain.station import Station

GOLDEN = Path(__file__).parent / "golden"


def test_check_a_good_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trf", "check", str(GOLDEN / "xiangqi-r3.trf")]) == 0
    out = capsys.readouterr().out
    assert "7 players, 3 rounds played of 5" in out
    assert out.endswith("bbpPairings: reads it\nJaVaFo: reads it\nSwiss-Manager: reads it\n")


def test_check_a_paired_file(capsys: pytest.CaptureFixture[str]) -> None:
    # good for the station's import, not for an engine: bbpPairings refuses a paired game
    # without a result (exit 3), line by line
    assert main(["trf", "check", str(GOLDEN / "xiangqi-r4-paired.trf")]) == 3
    out = capsys.readouterr().out
    assert "round 4 paired: 3 games, byes {7: 'Z'}" in out
    assert "bbpPairings: refuses it\n  line 21, column 122: Invalid line (a round cell cut" in out


def test_check_names_the_engine_line_and_column(tmp_path: Path, capsys: Any) -> None:
    # the 162 line qizhong wrote before issue 26, which bbpPairings refused
    old = "162  W 2.0    D 1.0    L 0.0    A 0.0    P 2.0    X 1.0"
    bad = tmp_path / "old.trf"
    text = (GOLDEN / "xiangqi-r3.trf").read_bytes().decode().replace("162  W 2.0    D 1.0", old)
    bad.write_text(text, encoding="utf-8", newline="")
    assert main(["trf", "check", str(bad)]) == 3
    out = capsys.readouterr().out.splitlines()
    at = out.index("bbpPairings: refuses it")
    assert out[at + 1].startswith("  line 13, column 33: Invalid line (code A: not read by every")
    assert out[at + 2].startswith(
        '  line 13, column 51: Invalid line (symbol X not supported) "162'
    )
    assert "JaVaFo: reads it" in out and "Swiss-Manager: reads it" in out


def test_check_names_the_line_and_columns(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.trf"
    text = (GOLDEN / "xiangqi-r3.trf").read_bytes().decode()
    bad.write_text(text.replace("  5.0    1", "  5.5    1"), encoding="utf-8", newline="")
    assert main(["trf", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}: line 21, columns 81-84: player 1: points 5.5")


def test_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trf", "pairs", str(GOLDEN / "with-bye.pairs")]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == ["board 4: 8 - 9", "bye: 7"]


@pytest.fixture
async def station(tmp_path: Path, db_url: str, start_station: Any) -> Station:
    accounts = [{"username": "chief", "password_hash": hash_password("pw-chief"), "role": "chief"}]
    started: Station = await start_station(
        station_config(tmp_path, database_url=db_url, account=accounts), connect=False
    )
    return started


async def test_import_and_export_through_the_station(
    station: Station, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # the session file: ~/.qizhong/trf-session.json
    monkeypatch.setenv("QZ_PASSWORD", "pw-chief")
    url = station.http_url
    paired = str(GOLDEN / "xiangqi-r4-paired.trf")
    args = ["trf", "import", "--station", url, "--user", "chief", "--no-send", paired]
    assert await asyncio.to_thread(main, args) == 0
    games = await station.require_store().games(4)
    assert [(g["board"], g["red"], g["black"]) for g in games] == [
        ("1", "王天一", "王琳娜"),
        ("2", "张伟 (3)", "郑惟桐"),
        ("3", "张伟 (4)", "唐丹"),
    ]
    out = tmp_path / "out.trf"
    args = ["trf", "export", "--station", url, "--round", "0", "--absent", "7", "-o", str(out)]
    assert await asyncio.to_thread(main, args) == 0
    trf = Trf.parse(out.read_bytes())
    assert [p.name for p in trf.players][:4] == ["王天一", "郑惟桐", "张伟", "张伟"]
    assert trf.absent(1) == {7: "Z"}


async def test_a_bad_file_never_reaches_the_station(
    station: Station, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.pairs"
    bad.write_text("2\n1 2\n")
    args = ["trf", "import", "--station", station.http_url, "--user", "x", "--pairs", str(bad)]
    assert await asyncio.to_thread(main, args) == 2
    assert "line 1: 2 pairs announced, 1 given" in capsys.readouterr().err


async def test_one_session_for_every_call(
    station: Station, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Log in once; then no password is asked again (more than 10 logins a minute is a 429).
    Each action prints one line; --json the whole reply; the station's refusal says where."""
    url = station.http_url
    session = tmp_path / "s.json"
    monkeypatch.setenv("QZ_PASSWORD", "pw-chief")
    login = ["trf", "login", "--station", url, "--user", "chief", "--session", str(session)]
    assert await asyncio.to_thread(main, login) == 0
    assert capsys.readouterr().out == f"logged in as chief at {url}; session kept in {session}\n"
    assert session.stat().st_mode & 0o777 == 0o600
    monkeypatch.delenv("QZ_PASSWORD")

    def no_prompt(prompt: str = "") -> str:
        raise AssertionError(f"asked for a password again: {prompt}")

    monkeypatch.setattr("getpass.getpass", no_prompt)
    kept = ["--station", url, "--session", str(session)]
    paired = str(GOLDEN / "xiangqi-r4-paired.trf")
    assert await asyncio.to_thread(main, ["trf", "import", *kept, "--no-send", paired]) == 0
    assert capsys.readouterr().out == "7 players imported; round 4: 3 games, 1 byes stored\n"
    pairs = tmp_path / "r5.pairs"
    pairs.write_text("3\n1 2\n3 4\n5 6\n")
    args = ["trf", "import", *kept, "--pairs", "--round", "5", str(pairs)]
    assert await asyncio.to_thread(main, args) == 0
    out = capsys.readouterr().out
    assert out.startswith("round 5: 3 games, 0 byes stored; set_game 3 ")  # one line
    assert out.count("\n") == 1
    assert await asyncio.to_thread(main, [*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 3
    # a token instead of the file (a script's way)
    token_args = ["trf", "login", "--print-token", "--user", "chief", "--station", url]
    monkeypatch.setenv("QZ_PASSWORD", "pw-chief")
    assert await asyncio.to_thread(main, [*token_args, "--session", str(tmp_path / "t")]) == 0
    token = capsys.readouterr().out.strip()
    monkeypatch.delenv("QZ_PASSWORD")
    unknown = tmp_path / "bad.pairs"
    unknown.write_text("1\n1 99\n")
    args = ["trf", "import", "--station", url, "--token", token, "--pairs", str(unknown)]
    assert await asyncio.to_thread(main, args) == 1
    err = capsys.readouterr().err
    assert err.startswith("qizhong trf import: the station answered 400: cannot import the pairs")
    assert "no player with start rank 99" in err
    # no engine on this station: said in one line
    assert await asyncio.to_thread(main, ["trf", "pair", *kept]) == 1
    assert "no pairing engine is configured" in capsys.readouterr().err
