"""What ``write_broker_config`` / ``qizhong broker-config`` writes, and what it keeps."""

from __future__ import annotations

import argparse
import grp
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from support.parts import skip_missing

from broker_config import BrokerFiles, Roster, write_broker_config
from broker_config import cli as broker_cli
from broker_config.acl import rules_for

ROSTER = """
venue = "meishan-2016"
[[node]]
id = "pi-01"
boards = ["1", "2"]
[[node]]
id = "pi-02"
boards = ["3"]
[[arbiter]]
username = "arbiter-1"
[[display]]
username = "hall"
[listeners]
host = "127.0.0.1"
port = 18830
websockets = { host = "127.0.0.1", port = 19001 }
"""


def _roster(**kw: Any) -> Roster:
    nodes = kw.pop("nodes", {"pi-01": ["1", "2"], "pi-02": ["3"]})
    return Roster.build(
        venue="meishan-2016",
        nodes=nodes,
        arbiters=["arbiter-1"],
        displays=["hall"],
        websockets=("127.0.0.1", 19001),
        **kw,
    )


def _conf_lines(files: BrokerFiles) -> list[str]:
    return [ln for ln in files.conf.read_text().splitlines() if ln and not ln.startswith("#")]


def test_conf_has_each_setting_that_avoids_a_trap(tmp_path: Path) -> None:
    files = write_broker_config(_roster(), tmp_path / "b")
    lines = _conf_lines(files)
    for line in (
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {files.password_file}",
        f"acl_file {files.acl_file}",
        "persistence true",
        f"persistence_location {files.persistence_dir}/",
        "autosave_interval 10",
        "set_tcp_nodelay true",
        f"max_queued_messages {files.max_queued_messages}",
        "listener 1883 127.0.0.1",
        "listener 19001 127.0.0.1",
        "protocol websockets",
        "socket_domain ipv4",
    ):
        assert line in lines, line
    # socket_domain belongs to the websockets listener, i.e. comes after its listener line
    assert lines.index("socket_domain ipv4") > lines.index("listener 19001 127.0.0.1")
    # 3 boards x 6 x 2 x 30 x 2 = 2160: below the floor that outlasts one board's flood
    assert files.max_queued_messages == 100_000


def test_acl_is_explicit_per_user_and_has_no_patterns(tmp_path: Path) -> None:
    files = write_broker_config(_roster(), tmp_path / "b")
    acl = files.acl_file.read_text()
    rules = [ln for ln in acl.splitlines() if ln and not ln.startswith("#")]
    assert {ln.split(" ")[0] for ln in rules} == {"user", "topic"}  # no `pattern` lines
    assert not [ln for ln in rules if "%" in ln]
    users = [ln.split(" ", 1)[1] for ln in acl.splitlines() if ln.startswith("user ")]
    # then one account per board connection, sharing its node's password
    assert users == ["station", "pi-01", "pi-02", "arbiter-1", "hall", "pi-01.1", "pi-01.2",
                     "pi-02.3"]  # fmt: skip
    # nothing before the first user block: anonymous clients are granted nothing
    first = acl.splitlines().index("user station")
    assert not [ln for ln in acl.splitlines()[:first] if ln.startswith("topic")]


def test_node_rules_name_only_its_own_boards() -> None:
    rules = rules_for(_roster(), "pi-02")
    assert sorted(rules) == sorted(
        [
            "topic write qz/v1/meishan-2016/board/3/status",
            "topic write qz/v1/meishan-2016/board/3/state",
            "topic write qz/v1/meishan-2016/board/3/event",
            "topic write qz/v1/meishan-2016/board/3/reply",
            "topic read qz/v1/meishan-2016/board/3/cmd",
            "topic read qz/v1/meishan-2016/board/3/state",
            "topic read qz/v1/meishan-2016/board/3/status",
            "topic read qz/v1/meishan-2016/venue/cmd",
            "topic read qz/v1/meishan-2016/station/status",
        ]
    )
    assert rules_for(_roster(), "nobody") == []


def test_modes_group_and_owners(tmp_path: Path) -> None:
    files = write_broker_config(_roster(), tmp_path / "b")
    try:
        gid = grp.getgrnam("mosquitto").gr_gid
    except KeyError:
        skip_missing("the mosquitto group", "apt-get install mosquitto")
    for path in (files.password_file, files.acl_file, files.conf):
        st = path.stat()
        assert stat.S_IMODE(st.st_mode) == 0o640, path
        assert st.st_gid == gid, path
    assert stat.S_IMODE(files.dir.stat().st_mode) == 0o750
    assert stat.S_IMODE(files.credentials_dir.stat().st_mode) == 0o700
    for cred in files.credentials_dir.iterdir():
        assert stat.S_IMODE(cred.stat().st_mode) == 0o600, cred
    if os.geteuid() == 0:
        for sub in (files.persistence_dir, files.log_file.parent):
            assert sub.owner() == "mosquitto" and sub.group() == "mosquitto", sub
        assert files.warnings == ()


def test_password_file_is_hashed_by_mosquitto_passwd(tmp_path: Path) -> None:
    files = write_broker_config(_roster(), tmp_path / "b")
    text = files.password_file.read_text()
    entries = dict(ln.split(":", 1) for ln in text.splitlines())
    boards = {"pi-01.1", "pi-01.2", "pi-02.3"}  # each board's connection, its node's password
    assert set(entries) == set(files.accounts) | boards
    for user, hashed in entries.items():
        assert hashed.startswith("$7$"), hashed  # PBKDF2-SHA512, mosquitto 2's format
        node = user.split(".")[0]
        assert files.credentials(node).password not in text
    assert not list(files.dir.glob("*.plain"))  # the plain text never stays behind


def test_credentials_files(tmp_path: Path) -> None:
    files = write_broker_config(_roster(), tmp_path / "b")
    data = json.loads((files.credentials_dir / "pi-01.json").read_text())
    assert data["username"] == "pi-01" and data["role"] == "node"
    assert data["venue"] == "meishan-2016"
    assert data["urls"] == {"mqtt": "mqtt://127.0.0.1:1883", "websockets": "ws://127.0.0.1:19001"}
    assert len(data["password"]) >= 24
    passwords = {files.credentials(u).password for u in files.accounts}
    assert len(passwords) == len(files.accounts)  # each account its own password


def test_rerun_keeps_passwords_adds_new_accounts_and_removes_old(tmp_path: Path) -> None:
    out = tmp_path / "b"
    first = write_broker_config(_roster(), out)
    before = {u: first.credentials(u).password for u in first.accounts}
    (first.persistence_dir / "mosquitto.db").write_bytes(b"kept")
    second = write_broker_config(_roster(nodes={"pi-01": ["1", "2"], "pi-03": ["3"]}), out)
    after = {u: second.credentials(u).password for u in second.accounts}
    assert after["pi-01"] == before["pi-01"] and after["station"] == before["station"]
    assert "pi-03" in after and after["pi-03"] not in before.values()
    assert "pi-02" not in second.accounts
    assert not (second.credentials_dir / "pi-02.json").exists()
    assert "pi-02:" not in second.password_file.read_text()
    assert (second.persistence_dir / "mosquitto.db").read_bytes() == b"kept"


def test_a_damaged_credentials_file_gets_a_new_password(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "b"
    first = write_broker_config(_roster(), out)
    (first.credentials_dir / "hall.json").write_text("{not json")
    second = write_broker_config(_roster(), out)
    assert len(second.credentials("hall").password) >= 24
    assert "hall.json" in caplog.text and "new password" in caplog.text


def test_broker_json_round_trips(tmp_path: Path) -> None:
    files = write_broker_config(_roster(), tmp_path / "b")
    loaded = BrokerFiles.load(files.dir)
    assert loaded.listeners == files.listeners
    assert loaded.accounts == files.accounts
    assert loaded.max_queued_messages == files.max_queued_messages
    assert loaded.listener("websockets") is not None
    assert loaded.listener("mqtts") is None


def test_bridge_exports_only_public_topics(tmp_path: Path) -> None:
    files = write_broker_config(
        _roster(
            bridge={
                "host": "192.0.2.10",
                "port": 8883,
                "username": "venue",
                "password": "s3cret",
                "remote_prefix": "venues/",
            }
        ),
        tmp_path / "b",
    )
    lines = _conf_lines(files)
    assert "connection meishan-2016-remote" in lines
    assert "address 192.0.2.10:8883" in lines
    topics = [ln for ln in lines if ln.startswith("topic ")]
    assert topics == [
        "topic board/+/state out 1 qz/v1/meishan-2016/ venues/qz/v1/meishan-2016/",
        "topic board/+/status out 1 qz/v1/meishan-2016/ venues/qz/v1/meishan-2016/",
        "topic station/status out 1 qz/v1/meishan-2016/ venues/qz/v1/meishan-2016/",
    ]


def test_missing_tls_file_is_a_clear_error(tmp_path: Path) -> None:
    from broker_config import BrokerConfigError

    roster = _roster(
        tls={
            "port": 8883,
            "cafile": str(tmp_path / "nope.crt"),
            "certfile": str(tmp_path / "s.crt"),
            "keyfile": str(tmp_path / "k"),
        }
    )
    with pytest.raises(BrokerConfigError, match=r"listeners\.tls\.cafile: .*nope\.crt"):
        write_broker_config(roster, tmp_path / "b")


def _run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    broker_cli.add_arguments(parser)
    return broker_cli.run(parser.parse_args(list(argv)))


def test_cli_writes_the_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text(ROSTER, encoding="utf-8")
    assert _run_cli("--roster", str(roster), "--out", str(tmp_path / "out")) == 0
    out = capsys.readouterr().out
    assert "mosquitto.conf" in out and "5 accounts" in out
    assert "mqtt://127.0.0.1:18830" in out and "ws://127.0.0.1:19001" in out
    assert BrokerFiles.load(tmp_path / "out").accounts["pi-02"] == "node"


def test_cli_bad_roster_exits_2_with_file_key_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text(ROSTER.replace('boards = ["3"]', 'boards = ["2"]'), encoding="utf-8")
    assert _run_cli("--roster", str(roster), "--out", str(tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert str(roster) in err
    assert "node[1].boards[0]: board '2' is already on node 'pi-01'" in err
    assert not (tmp_path / "out").exists()
