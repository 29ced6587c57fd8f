"""The acceptance dry run: roster -> inventory -> node playbook with --connection=local into a
scratch root -> the node installed from the offline bundle, started with a simulated face,
online on a real private Mosquitto (seen by the station account). The same for the station
playbook: the station installed from the bundle (not the editable tree) serves its pages."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support.broker import collect, mqtt_client
from support.deploy import ANSIBLE_DIR, ansible_env, host_bundle, run, tool
from support.ports import server_port

from broker_config import Roster
from qizhong.deploy import cli as deploy_cli

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


def _apply(
    tmp_path: Path,
    broker,
    *,
    limit: str = "pi-01",
    playbook: str = "node.yml",
    more: dict[str, object] | None = None,
) -> Path:
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
    extra.write_text(json.dumps({**_scratch_vars(root, host_bundle()), **(more or {})}))
    proc = run(
        [
            tool("ansible-playbook"), "-i", str(inventory), str(ANSIBLE_DIR / playbook),
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
        online: dict[str, str] = {}
        try:
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
            if set(online) != {"1", "2"}:  # say what the node said, not only that it timed out
                print(f"boards online: {sorted(online)}; the node's output:\n{out[-3000:]}")
        assert node.returncode == 0, out[-3000:]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def test_station_playbook_installs_from_bundle_and_the_station_serves_its_pages(
    tmp_path: Path, broker_factory
) -> None:
    """Issue 19: the wheel once lacked the pages and only the editable install had them."""
    broker = broker_factory(Roster.build(venue="test", nodes={"pi-01": ["1", "2"], "pi-02": ["3"]}))
    roster = tmp_path / "roster.toml"  # _apply writes the same roster; the broker role copies it
    roster.write_text(ROSTER)
    port = server_port()  # bound after the playbook's run: outside the ephemeral range
    root = _apply(
        tmp_path,
        broker,
        limit="station",
        playbook="station.yml",
        more={
            "qizhong_roster_file": str(roster),
            "qizhong_broker_build_dir": str(broker.files.dir),
            "qizhong_station_broker_url": broker.url,
            "qizhong_station_http_host": "127.0.0.1",
            "qizhong_station_http_port": port,
        },
    )
    config = root / "etc/qizhong/station.toml"
    assert tomllib.loads(config.read_text())["http"]["port"] == port
    venv = root / "opt/qizhong/venv"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONNOUSERSITE"] = "1"
    # The package the station runs is the bundle's wheel in the scratch venv, not this tree.
    where = subprocess.run(
        [str(venv / "bin/python"), "-c", "import venue_station; print(venue_station.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=env, check=True,
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(venv), where

    station = subprocess.Popen(
        [str(venv / "bin/qizhong"), "station", "--config", str(config)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert station.poll() is None, station.communicate()[0][-3000:]
            try:
                if _get(base + "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the installed station never answered /healthz"
            time.sleep(0.2)
        status, html = _get(base + "/")
        assert status == 200 and '<script src="/static/display.js"' in html
        assert _get(base + "/static/display.js")[0] == 200
        assert _get(base + "/static/style.css")[0] == 200
    finally:
        station.send_signal(signal.SIGTERM)
        out = station.communicate(timeout=20)[0]
    assert station.returncode == 0, out[-3000:]
