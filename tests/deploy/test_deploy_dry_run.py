"""The acceptance dry run: roster -> inventory -> node playbook with --connection=local into a
scratch root -> the node installed from the offline bundle, started with a simulated face,
online on a real private Mosquitto (seen by the station account)."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.broker import collect, mqtt_client
from support.deploy import ANSIBLE_DIR, ansible_env, host_bundle, run, tool

from broker_config import Roster
from qizhong import deploy_cli

pytestmark = [pytest.mark.slow, pytest.mark.broker]

ROSTER = """\
venue = "test"
[[node]]
id = "pi-01"
boards = ["1", "2"]
[[node]]
id = "pi-02"
boards = ["3"]
"""


def _scratch_vars(root: Path, bundle: Path) -> dict[str, object]:
    return {
        "qizhong_dry_run": True,
        "qizhong_prefix": str(root / "opt/qizhong"),
        "qizhong_config_dir": str(root / "etc/qizhong"),
        "qizhong_state_dir": str(root / "var/lib/qizhong"),
        "qizhong_systemd_dir": str(root / "etc/systemd/system"),
        "qizhong_bundle_dir": str(bundle),
        "qizhong_pip_extra_args": "--no-compile",
        # The venv is made from the interpreter behind this one (the Pi's /usr/bin/python3).
        "qizhong_python": getattr(sys, "_base_executable", sys.executable),
        "ansible_python_interpreter": sys.executable,
    }


def _apply(tmp_path: Path, broker, *, limit: str = "pi-01") -> Path:
    roster = tmp_path / "roster.toml"
    roster.write_text(ROSTER)
    inventory = tmp_path / "inventory.yml"
    parser = argparse.ArgumentParser()
    deploy_cli.add_arguments(parser)
    args = parser.parse_args([
        "inventory", "--roster", str(roster), "--out", str(inventory), "--face", "simulated",
        "--domain", "", "--ansible-user", "", "--broker-url", broker.url,
        "--credentials", str(broker.files.credentials_dir),
    ])  # fmt: skip
    assert deploy_cli.run(args) == 0
    root = tmp_path / "root"
    extra = tmp_path / "scratch.json"
    extra.write_text(json.dumps(_scratch_vars(root, host_bundle())))
    proc = run(
        [
            tool("ansible-playbook"), "-i", str(inventory), str(ANSIBLE_DIR / "node.yml"),
            "--connection=local", "--limit", limit, "-e", f"@{extra}",
        ],
        env=ansible_env(tmp_path / "ansible-home"),
        timeout=150,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return root


async def test_node_playbook_installs_from_bundle_and_node_comes_online(
    tmp_path: Path, broker_factory
) -> None:
    broker = broker_factory(Roster.build(venue="test", nodes={"pi-01": ["1", "2"], "pi-02": ["3"]}))
    root = _apply(tmp_path, broker)
    config = root / "etc/qizhong/node.toml"
    data = tomllib.loads(config.read_text())
    assert data["node"] == "pi-01" and [b["id"] for b in data["board"]] == ["1", "2"]
    assert all(b["face"] == "simulated" for b in data["board"])
    password_file = Path(data["broker"]["password_file"])
    assert password_file.stat().st_mode & 0o777 == 0o640
    assert password_file.read_text().strip() == broker.credentials("pi-01")[1]
    # Installed from the bundle into the scratch venv, not the test's own environment.
    qizhong = root / "opt/qizhong/venv/bin/qizhong"
    assert qizhong.exists()
    assert not (root / "etc/systemd/system/qizhong-node.service").exists()  # dry run

    async with mqtt_client(broker, "station") as station:
        await station.subscribe("qz/v1/test/board/+/status", qos=1)
        node = subprocess.Popen(
            [str(qizhong), "node", "--config", str(config)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        try:
            online: dict[str, str] = {}
            async with asyncio.timeout(30):
                while set(online) != {"1", "2"}:
                    for msg in await collect(station, within=0.5):
                        body = json.loads(msg.payload)
                        if body.get("state") == "online":
                            online[str(msg.topic).split("/")[-2]] = body["state"]
                    assert node.poll() is None, node.communicate()[0][-3000:]
        finally:
            node.send_signal(signal.SIGTERM)
            out = node.communicate(timeout=15)[0]
        assert node.returncode == 0, out[-3000:]
