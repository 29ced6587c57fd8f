"""`qizhong deploy inventory`: a roster in, an inventory Ansible reads back the same out."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from support.deploy import ansible_env, run, tool

from broker_config import Roster
from qizhong.deploy import cli as deploy_cli
from qizhong.deploy.inventory import InventoryOptions, build_inventory, render_yaml

ROSTER = """\
venue = "teahouse"
[listeners]
host = "0.0.0.0"
port = 1883
[[node]]
id = "pi-01"
boards = ["1", "2"]
[[node]]
id = "pi-02"
boards = ["on", "007"]
username = "node-two"
[[arbiter]]
username = "chief"
"""


def _cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    deploy_cli.add_arguments(parser)
    return deploy_cli.run(parser.parse_args(list(argv)))


def _ansible_view(tmp_path: Path, inventory: Path) -> dict:
    proc = run(
        [tool("ansible-inventory"), "-i", str(inventory), "--list"],
        env=ansible_env(tmp_path / "ansible-home"),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_inventory_from_roster_reads_back_in_ansible(tmp_path: Path, capsys) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text(ROSTER)
    out = tmp_path / "inventory.yml"
    creds = tmp_path / "broker" / "credentials"
    assert _cli("inventory", "--roster", str(roster), "--out", str(out),
                "--credentials", str(creds), "--station-host", "10.0.0.2") == 0  # fmt: skip
    assert "2 nodes, 4 boards" in capsys.readouterr().out
    view = _ansible_view(tmp_path, out)
    assert sorted(view["nodes"]["hosts"]) == ["pi-01", "pi-02"]
    assert view["station"]["hosts"] == ["station"]
    two = view["_meta"]["hostvars"]["pi-02"]
    # Board ids that YAML would turn into a bool or an octal number stay strings.
    assert two["qizhong_boards"] == [{"id": "on", "face": "gpio"}, {"id": "007", "face": "gpio"}]
    assert two["qizhong_username"] == "node-two"
    assert two["qizhong_credentials_file"] == str(creds / "node-two.json")
    assert two["ansible_host"] == "pi-02.local"
    # A wildcard bind is not reachable: the nodes use the station's address.
    assert two["qizhong_broker_url"] == "mqtt://10.0.0.2:1883"
    assert two["qizhong_venue"] == "teahouse"


def test_inventory_options() -> None:
    roster = Roster.from_toml(ROSTER.replace('host = "0.0.0.0"', 'host = "0.0.0.0"\n'
                                              'public_host = "broker.hall"'))  # fmt: skip
    inv = build_inventory(roster, InventoryOptions(domain="", face="simulated", ansible_user=None))
    hosts = inv["all"]["children"]["nodes"]["hosts"]
    assert hosts["pi-01"]["ansible_host"] == "pi-01" and "ansible_user" not in hosts["pi-01"]
    assert {b["face"] for h in hosts.values() for b in h["qizhong_boards"]} == {"simulated"}
    assert inv["all"]["vars"]["qizhong_broker_url"] == "mqtt://broker.hall:1883"
    text = render_yaml({"a": {"b": [], "c": {}, "d": True, "e": "yes"}})
    assert text == '"a":\n  "b": []\n  "c": {}\n  "d": true\n  "e": "yes"\n'


@pytest.mark.parametrize(
    ("text", "key", "reason"),
    [
        (ROSTER.replace('boards = ["on", "007"]', 'boards = ["1"]'), "node[1].boards[0]",
         "already on node 'pi-01'"),
        (ROSTER.replace("venue", "venu"), "venue", "required key is missing"),
        (ROSTER + "colour = 1\n", "colour", "unknown key"),
        (ROSTER.replace('id = "pi-01"', 'id = "pi 01"'), "node[0].id", "not a valid id"),
        ("venue = [", "", "not valid TOML"),
    ],
)  # fmt: skip
def test_bad_roster_names_file_key_and_reason(
    tmp_path: Path, capsys, text: str, key: str, reason: str
) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text(text)
    out = tmp_path / "inventory.yml"
    assert _cli("inventory", "--roster", str(roster), "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"deploy inventory: {roster}: ")
    assert key in err and reason in err, err
    assert not out.exists()


def test_missing_roster_and_unwritable_output(tmp_path: Path, capsys) -> None:
    assert _cli("inventory", "--roster", str(tmp_path / "none.toml"), "--out", "x.yml") == 2
    assert "none.toml: (roster): cannot read" in capsys.readouterr().err
    roster = tmp_path / "roster.toml"
    roster.write_text(ROSTER)
    bad_out = tmp_path / "no" / "such" / "dir" / "inventory.yml"
    assert _cli("inventory", "--roster", str(roster), "--out", str(bad_out)) == 2
    assert "cannot write" in capsys.readouterr().err


def test_missing_credentials_are_warned_about(tmp_path: Path, capsys) -> None:
    roster = tmp_path / "roster.toml"
    roster.write_text(ROSTER)
    assert _cli("inventory", "--roster", str(roster), "--out", str(tmp_path / "i.yml"),
                "--credentials", str(tmp_path / "nothing")) == 0  # fmt: skip
    assert "credentials files do not exist yet" in capsys.readouterr().err
