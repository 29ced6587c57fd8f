"""`qizhong hub --config hub.toml`: the hub reads a validated TOML file like the node and the
station; each flag overrides its key; a bad file is refused with ``file: key: reason``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest
from support.nats import HubProcess, NatsCentre

from federation_hub.cli import add_arguments, load_config
from federation_hub.config import HubConfig
from federation_hub.errors import HubConfigError

QIZHONG = str(Path(sys.executable).parent / "qizhong")

FILE = """
nats = ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222"]
user = "hub-a"
password_file = "secrets/hub.pw"
db = "postgresql://hub@db.example/fed"
http = "0.0.0.0:8091"
replicas = 3
batch = 100
workers = 2
log_level = "warning"
public_ws = "wss://fed.example/ws"
live_max_boards = 500

[venue_regulation]
va = "wulong-2015"
vb = "meishan-2016"

[venue_name]
va = "武隆赛区"
"""


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def _file(tmp_path: Path, text: str = FILE) -> Path:
    path = tmp_path / "hub.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_file_gives_every_setting(tmp_path: Path) -> None:
    config = load_config(_args("--config", str(_file(tmp_path))))
    assert config.nats == ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222"]
    assert (config.user, config.db, config.http) == (
        "hub-a",
        "postgresql://hub@db.example/fed",
        "0.0.0.0:8091",
    )
    assert config.password_file == tmp_path / "secrets" / "hub.pw"  # relative to the file
    assert (config.replicas, config.batch, config.workers) == (3, 100, 2)
    assert config.log_level == "WARNING"
    assert (config.public_ws, config.live_max_boards) == ("wss://fed.example/ws", 500)
    assert config.venue_regulation == {"va": "wulong-2015", "vb": "meishan-2016"}
    assert config.venue_name == {"va": "武隆赛区"}
    assert (config.prefix, config.max_ack_pending, config.regulation) == (
        "fed",
        1000,
        "meishan-2016",
    )


def test_a_flag_overrides_its_key_and_leaves_the_others(tmp_path: Path) -> None:
    args = _args(
        "--config", str(_file(tmp_path)),
        "--batch", "50",
        "--nats", "nats://127.0.0.1:1,nats://127.0.0.1:2",
        "--venue-regulation", "vb=wulong-2015",
        "--venue-regulation", "vc=wulong-2015",
        "--venue-name", "vb=眉山赛区",
    )  # fmt: skip
    config = load_config(args)
    assert config.batch == 50 and config.workers == 2
    assert config.nats == ["nats://127.0.0.1:1", "nats://127.0.0.1:2"]
    assert config.venue_regulation == {
        "va": "wulong-2015",
        "vb": "wulong-2015",
        "vc": "wulong-2015",
    }
    assert config.venue_name == {"va": "武隆赛区", "vb": "眉山赛区"}


def test_the_flags_alone_still_run_a_hub_as_before() -> None:
    config = load_config(_args("--nats", "nats://127.0.0.1:4222", "--db", "postgresql://x/y"))
    assert config.nats == ["nats://127.0.0.1:4222"]
    assert (config.user, config.http, config.batch, config.replicas) == (
        "hub",
        "127.0.0.1:8090",
        200,
        1,
    )
    assert config.name.startswith("hub-")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("colour = 'red'\n" + FILE, "hub.toml: colour: unknown key"),
        (FILE.replace("batch = 100", "batch = 0"), "hub.toml: batch: "),
        (FILE.replace("batch = 100", "batch = 1001"), "hub.toml: batch: "),
        (FILE.replace("workers = 2", "workers = 'two'"), "hub.toml: workers: "),
        (FILE.replace("replicas = 3", "replicas = 2"), "hub.toml: replicas: "),
        (FILE.replace('http = "0.0.0.0:8091"', 'http = "8091"'), "hub.toml: http: "),
        (FILE.replace('"nats://10.0.0.2:4222"', '"http://x:1"'), "expected nats://host:port"),
        (
            FILE.replace('va = "wulong-2015"', '"a.b" = "wulong-2015"'),
            "hub.toml: venue_regulation.a.b",
        ),
        (
            FILE.replace("[venue_regulation]", "venue_regulation = 3\n[x]"),
            "venue_regulation: a table",
        ),
        (FILE.replace('va = "武隆赛区"', 'va = ""'), "hub.toml: venue_name.va"),
        (FILE.replace('va = "武隆赛区"', 'va = "a\\u0007b"'), "hub.toml: venue_name.va"),
        (FILE + "nats = [\n", "hub.toml: not valid TOML"),
        (
            FILE.replace('db = "postgresql://hub@db.example/fed"\n', ""),
            "hub.toml: db: Field required",
        ),
    ],
)
def test_a_bad_file_is_refused_with_file_key_reason(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(HubConfigError) as info:
        HubConfig.load(_file(tmp_path, text), {})
    assert named in str(info.value)
    assert str(info.value).startswith(str(tmp_path / "hub.toml"))


def test_no_file_and_no_db_names_what_is_missing() -> None:
    with pytest.raises(HubConfigError, match="the command line: db: Field required"):
        load_config(_args("--nats", "nats://127.0.0.1:4222"))


def test_an_unreadable_file_is_named(tmp_path: Path) -> None:
    run = subprocess.run(
        [QIZHONG, "hub", "--config", str(tmp_path / "none.toml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "none.toml: cannot read" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and "usage:" not in run.stderr


@pytest.mark.postgres
def test_a_running_hub_serves_the_files_settings_under_its_flags(
    nats_centre: NatsCentre, hub_db: str, tmp_path: Path
) -> None:
    """The file's page settings reach the running hub; the flags HubProcess gives (the centre,
    the database, the port) override the file's."""
    ws = f"ws://127.0.0.1:{nats_centre.nodes[0].ws_port}"
    path = _file(
        tmp_path,
        f'nats = ["nats://127.0.0.1:1"]\ndb = "postgresql://nobody@127.0.0.1:1/x"\n'
        f'public_ws = "{ws}"\nlive_max_boards = 9\n[venue_regulation]\nvb = "wulong-2015"\n',
    )
    hub = HubProcess(nats_centre, hub_db, "hub-file", replicas=1, extra=("--config", str(path)))
    try:
        hub.wait_ready()
        live = hub.get("/api/live")
        assert (live["ws"], live["max_boards"]) == (ws, 9)
        assert hub.get("/api/venues/vb/standings")["regulation"] == "wulong-2015"
        assert hub.get("/api/venues/va/standings")["regulation"] == "meishan-2016"
    finally:
        hub.close()
