"""station.toml: good and bad files, password hashes, the CLI helper."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from venue_station.auth import Sessions, hash_password, verify_password
from venue_station.config import StationConfig
from venue_station.errors import ConfigError
from venue_station.web import cli


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "station.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file(tmp_path: Path) -> None:
    (tmp_path / "station.json").write_text(
        json.dumps({"username": "station", "password": "pw", "role": "station", "urls": {}})
    )
    path = write(
        tmp_path,
        f"""
venue = "hall-1"
regulation = "wulong-2015"
[broker]
url = "mqtt://10.0.0.2:1883"
credentials_file = "station.json"
[http]
port = 8081
[[account]]
username = "裁判长"
password_hash = "{hash_password("pw1")}"
role = "chief"
""",
    )
    cfg = StationConfig.load(path)
    assert (cfg.venue, cfg.broker.host, cfg.broker.port, cfg.http.port) == (
        "hall-1",
        "10.0.0.2",
        1883,
        8081,
    )
    assert cfg.broker.credentials() == ("station", "pw")
    assert cfg.db_url == f"sqlite:///{(tmp_path / 'station-data' / 'station.db').resolve()}"
    assert Sessions([(a.username, a.password_hash, a.role) for a in cfg.account]).login(
        "裁判长", "pw1"
    )


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ('venue = "a b"', "venue", "should match pattern"),
        ('venue = "v"\nport = 1', "port", "Extra inputs are not permitted"),
        ('venue = "v"\n[http]\nport = "eighty"', "http.port", "valid integer"),
        ('venue = "v"\n[broker]\nurl = "http://x"', "broker.url", "mqtt://host:port"),
        (
            'venue = "v"\n[[account]]\nusername = "a"\npassword_hash = "plain"',
            "account.0.password_hash",
            "not a password hash",
        ),
        ("venue = ", "", "not valid TOML"),
        # files the station reads once running, read at load (an outsider technician: a
        # traceback, and a collector restarting every 5 s naming no key)
        ('venue = "v"\nroster = "rooster.toml"', "roster", "cannot read"),
        (
            'venue = "v"\n[broker]\ncredentials_file = "statoin.json"',
            "broker.credentials_file",
            "no such file",
        ),
        ('venue = "v"\n[broker]\npassword_file = "pw.txt"', "broker.password_file", "no such file"),
    ],
)
def test_a_bad_file_names_file_key_and_reason(
    tmp_path: Path, text: str, key: str, words: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        StationConfig.load(path)
    assert info.value.source == str(path) and info.value.key == key
    assert words in info.value.reason


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        StationConfig.load(tmp_path / "nope.toml")


def test_password_hashes() -> None:
    h = hash_password("密码 pw")
    assert (
        h.startswith("scrypt$") and verify_password("密码 pw", h) and not verify_password("pw", h)
    )
    import base64
    import hashlib

    salt = b"0123456789abcdef"
    dk = hashlib.pbkdf2_hmac("sha256", b"pw", salt, 1000)
    pb = f"pbkdf2_sha256$1000${base64.b64encode(salt).decode()}${base64.b64encode(dk).decode()}"
    assert verify_password("pw", pb) and not verify_password("px", pb)


def test_cli_hash_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret\n"))
    assert cli.run(parser.parse_args(["hash-password", "--password-stdin"])) == 0
    assert verify_password("s3cret", capsys.readouterr().out.strip())


def test_cli_reports_a_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    path = write(tmp_path, 'venue = "v"\nregulation = "nowhere-1999"')
    assert cli.run(parser.parse_args(["--config", str(path)])) == 2
    assert "regulation" in capsys.readouterr().err
