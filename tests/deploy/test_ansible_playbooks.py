"""deploy/ansible: every playbook passes --syntax-check and ansible-lint (offline, production
profile); the node.toml template renders configs the node accepts, for every face."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.deploy import ANSIBLE_DIR, ansible_env, run, tool

from board_nodes.config import NodeConfig
from firmware_bridge.gpio_config import GpioFaceConfig

PLAYBOOKS = ["node.yml", "station.yml", "display.yml", "site.yml"]


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_syntax_check(tmp_path: Path, playbook: str) -> None:
    proc = run(
        [tool("ansible-playbook"), "--syntax-check", "-i", "localhost,", playbook],
        env=ansible_env(tmp_path),
        cwd=ANSIBLE_DIR,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_syntax_check_rejects_a_broken_playbook(tmp_path: Path) -> None:
    copy = tmp_path / "ansible"
    shutil.copytree(ANSIBLE_DIR, copy)
    (copy / "node.yml").write_text((copy / "node.yml").read_text().replace("roles:", "rolez:"))
    proc = run(
        [tool("ansible-playbook"), "--syntax-check", "-i", "localhost,", "node.yml"],
        env=ansible_env(tmp_path / "home"),
        cwd=copy,
    )
    assert proc.returncode != 0 and "rolez" in proc.stdout + proc.stderr


BAD_PLAYBOOK = """\
---
- name: A playbook the linter must refuse
  hosts: nodes
  tasks:
    - name: Shell out without saying what changes
      ansible.builtin.shell: tar xf /tmp/x.tar
"""


@pytest.mark.slow
def test_ansible_lint_passes_and_would_catch_a_bad_playbook(tmp_path: Path) -> None:
    # One lint run (it takes ~20 s) over a copy with one bad playbook added: the findings
    # must all be in that file, so the real ones are clean and the linter is really on.
    copy = tmp_path / "ansible"
    shutil.copytree(ANSIBLE_DIR, copy)
    (copy / "bad.yml").write_text(BAD_PLAYBOOK)
    env = ansible_env(tmp_path / "home")
    env["NO_COLOR"] = "1"
    proc = run(
        [tool("ansible-lint"), "--offline", "-f", "json", "-c", str(copy / ".ansible-lint")],
        env=env,
        cwd=copy,
        timeout=240,
    )
    assert proc.stdout.strip(), proc.stderr
    findings = json.loads(proc.stdout)
    files = {f["location"]["path"] for f in findings}
    assert files == {"bad.yml"}, json.dumps(findings, indent=1)[:3000]
    assert proc.returncode != 0


def _render(tmp_path: Path, boards: list[dict]) -> NodeConfig:
    variables = {
        "qizhong_venue": "hall",
        "qizhong_node_id": "pi-07",
        "qizhong_username": "pi-07",
        "qizhong_regulation": "meishan-2016",
        "qizhong_state_dir": "/var/lib/qizhong",
        "qizhong_config_dir": "/etc/qizhong",
        "qizhong_broker_url": "mqtt://station.local:1883",
        "qizhong_boards": boards,
    }
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps(variables))
    dest = tmp_path / "node.toml"
    proc = run(
        [
            tool("ansible"), "localhost", "-c", "local", "-i", "localhost,",
            "-m", "ansible.builtin.template",
            "-a", f"src={ANSIBLE_DIR}/roles/qizhong_node/templates/node.toml.j2 dest={dest}",
            "-e", f"@{extra}", "-e", f"@{ANSIBLE_DIR}/group_vars/nodes.yml",
        ],
        env=ansible_env(tmp_path / "home"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return NodeConfig.load(dest)


def test_node_template_renders_every_face(tmp_path: Path) -> None:
    custom = {"red_button": "GPIO5", "black_button": 6, "pause_key": 13, "arbiter_key": 19,
              "power_sense": 26, "lever": True, "display": {"driver": "tm1637", "left_clk": 20,
              "left_dio": 21, "right_clk": 12, "right_dio": 16}}  # fmt: skip
    config = _render(
        tmp_path,
        [
            {"id": "1", "face": "gpio"},
            {"id": "2", "face": "gpio", "gpio": custom},
            {"id": "3", "face": "serial", "url": "/dev/ttyUSB0"},
            {"id": "4", "face": "simulated", "simulated": {"mode": "idle"}},
        ],
    )
    assert config.venue == "hall" and config.node == "pi-07"
    assert str(config.broker.password_file) == "/etc/qizhong/broker-password"
    one, two, three, four = config.board
    assert GpioFaceConfig.model_validate(one.gpio).red_button == 17  # group_vars default
    second = GpioFaceConfig.model_validate(two.gpio)
    assert second.lever is True and second.display.driver == "tm1637"
    assert three.url == "/dev/ttyUSB0" and four.simulated.mode == "idle"
