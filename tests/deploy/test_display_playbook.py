"""The hall screens as deployed machines (issue 20): the roster names them and their boards,
the inventory gives each its page address, and display.yml (role qizhong_display) dry-runs
into a scratch root: a kiosk session that never blanks and waits for the station, and an
enabled unit that restarts it — back by itself after a power cut."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.deploy import ANSIBLE_DIR, ansible_env, run, tool

from broker_config import Roster, RosterError
from broker_config.screens import check_boards_spec, compact_spec
from qizhong.deploy import cli as deploy_cli

ROSTER = """\
venue = "hall"
[[node]]
id = "pi-01"
boards = ["1", "2", "3", "4"]
[[node]]
id = "pi-02"
boards = ["5", "6", "7", "9", "A1"]
[[screen]]
id = "screen-1"
boards = "1-40"
[[screen]]
id = "screen-2"
nodes = ["pi-02"]
page_s = 20
per_page = 30
lang = "en"
"""


def test_the_roster_names_the_screens_and_their_boards() -> None:
    roster = Roster.from_toml(ROSTER)
    one, two = roster.screen
    assert roster.screen_query(one) == "boards=1-40&lang=zh"
    # "By group": the boards of some nodes (a part of the hall), runs of numbers as ranges.
    assert roster.screen_query(two) == "boards=5-7,9,A1&page_s=20&per_page=30&lang=en"


@pytest.mark.parametrize(
    ("entry", "key", "reason"),
    [
        ('boards = "40-1"', "screen[0].boards", "item 1 '40-1': a range goes from low to high"),
        ('boards = "1-2000"', "screen[0].boards", "at most 1000 boards"),
        ('boards = "1-4,5 6"', "screen[0].boards", "item 2 '5 6': a board id or a low-high"),
        ('boards = "' + ",".join(["1"] * 65) + '"', "screen[0].boards", "65 items; at most 64"),
        ('nodes = ["pi-09"]', "screen[0].nodes[0]", "no node 'pi-09'"),
        ('boards = "1"\nnodes = ["pi-01"]', "screen[0]", "give boards or nodes, not both"),
        ("page_s = 2", "screen[0].page_s", "greater than or equal to 3"),
        ('lang = "fr"', "screen[0].lang", "'zh' or 'en'"),
        ("colour = 1", "screen[0].colour", "unknown key"),
    ],
)  # fmt: skip
def test_a_bad_screen_names_its_key_and_reason(entry: str, key: str, reason: str) -> None:
    text = 'venue = "hall"\n[[node]]\nid = "pi-01"\nboards = ["1"]\n[[screen]]\nid = "s1"\n' + entry
    with pytest.raises(RosterError) as info:
        Roster.from_toml(text)
    assert key in str(info.value) and reason in str(info.value), str(info.value)


def test_a_screen_listed_twice_is_refused() -> None:
    text = ROSTER + '[[screen]]\nid = "screen-1"\n'
    with pytest.raises(RosterError, match=r"screen\[2\]\.id: screen 'screen-1' is listed twice"):
        Roster.from_toml(text)


def test_board_specs_at_and_past_their_bounds() -> None:
    assert check_boards_spec("1-1000") == "1-1000"
    assert check_boards_spec(",".join(["7"] * 64))
    with pytest.raises(ValueError, match="at most 512"):
        check_boards_spec("A" * 30 + ",A" * 250)
    with pytest.raises(ValueError, match="empty"):
        check_boards_spec(" ")
    assert compact_spec(["3", "1", "2", "10", "007", "B"]) == "1-3,10,007,B"


def _inventory(tmp_path: Path) -> Path:
    roster = tmp_path / "roster.toml"
    roster.write_text(ROSTER)
    out = tmp_path / "inventory.yml"
    parser = argparse.ArgumentParser()
    deploy_cli.add_arguments(parser)
    args = parser.parse_args([
        "inventory", "--roster", str(roster), "--out", str(out),
        "--domain", "", "--ansible-user", "", "--station-host", "10.0.0.2",
    ])  # fmt: skip
    assert deploy_cli.run(args) == 0
    return out


def test_the_inventory_gives_each_screen_its_address(tmp_path: Path) -> None:
    inventory = _inventory(tmp_path)
    proc = run([tool("ansible-inventory"), "-i", str(inventory), "--list"],
               env=ansible_env(tmp_path / "home"), timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    view = json.loads(proc.stdout)
    assert sorted(view["screens"]["hosts"]) == ["screen-1", "screen-2"]
    two = view["_meta"]["hostvars"]["screen-2"]
    assert two["qizhong_display_query"] == "boards=5-7,9,A1&page_s=20&per_page=30&lang=en"
    assert two["ansible_host"] == "screen-2"


def test_display_playbook_syntax(tmp_path: Path) -> None:
    proc = run([tool("ansible-playbook"), "--syntax-check", "-i", "localhost,", "display.yml"],
               env=ansible_env(tmp_path), cwd=ANSIBLE_DIR)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_display_playbook_dry_run_writes_a_kiosk_that_comes_back_by_itself(tmp_path: Path) -> None:
    inventory = _inventory(tmp_path)
    root = tmp_path / "root"
    extra = tmp_path / "scratch.json"
    extra.write_text(json.dumps({
        "qizhong_dry_run": True,
        "qizhong_display_bin_dir": str(root / "usr/local/bin"),
        "qizhong_systemd_dir": str(root / "etc/systemd/system"),
        "ansible_python_interpreter": sys.executable,
    }))  # fmt: skip
    proc = run(
        [tool("ansible-playbook"), "-i", str(inventory), str(ANSIBLE_DIR / "display.yml"),
         "--connection=local", "--limit", "screen-2", "-e", f"@{extra}"],
        env=ansible_env(tmp_path / "home"),
        timeout=150,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    script = (root / "usr/local/bin/qizhong-kiosk").read_text()
    url = "http://10.0.0.2:8080/?boards=5-7,9,A1&page_s=20&per_page=30&lang=en"
    assert f"URL='{url}'" in script
    for line in ("xset s off", "xset s noblank", "xset -dpms", "--kiosk", "--lang=en-GB",
                 'until curl -fsS -o /dev/null --max-time 3 "$URL"'):  # fmt: skip
        assert line in script, line
    assert subprocess.run(["sh", "-n", str(root / "usr/local/bin/qizhong-kiosk")]).returncode == 0
    unit = (root / "etc/systemd/system/qizhong-kiosk.service").read_text()
    for line in ("Restart=always", "WantedBy=multi-user.target", "User=kiosk",
                 f"ExecStart=/usr/bin/xinit {root}/usr/local/bin/qizhong-kiosk -- :0 vt1 "
                 "-nolisten tcp -nocursor -s 0 -dpms"):  # fmt: skip
        assert line in unit, line
