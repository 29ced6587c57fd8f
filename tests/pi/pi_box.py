"""The Pi in a box, for tests/pi: the bundle, the node playbook run into an emulated root.

The playbook runs on the host with ``--connection=local``, but every module runs inside the
root: the interpreter Ansible is told to use is a script that starts the root's own
``/usr/bin/python3`` under ``proot -q qemu-<cpu>-static``, and Ansible's remote temp folder
is a host folder bound into the root at the same path. So ``ansible.builtin.pip`` makes the
venv with the root's Python 3.11 and installs the root's wheels, ``unarchive`` unpacks with
the root's tar, ``validate`` runs the root's ``qizhong node --check``: the same tasks as on a
Pi. What proot cannot have (systemd, users, chrony's service) is what ``qizhong_dry_run``
already leaves out; the paths stay the Pi's (/opt/qizhong, /etc/qizhong, /var/lib/qizhong).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import socket
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.deploy import ANSIBLE_DIR, ansible_env, run, tool

from qizhong.deploy import cli as deploy_cli
from qizhong.deploy.piroot import PiRoot, root_env

# What the check writes into a root; removed before each install so every run starts fresh.
PI_PATHS = ("opt/qizhong", "etc/qizhong", "var/lib/qizhong")
# Nothing inside a root may reach the internet during the install: pip and urllib honour these,
# and nothing listens on port 9 (discard). The broker is reached directly, not through them.
OFFLINE = {
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "PIP_NO_INDEX": "1",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_root(root: PiRoot) -> None:
    for rel in PI_PATHS:
        shutil.rmtree(root.path / rel, ignore_errors=True)


def interpreter_script(root: PiRoot, run_dir: Path) -> Path:
    """The ``ansible_python_interpreter``: the root's python3, emulated, with ``run_dir``
    (Ansible's remote temp folder) bound in."""
    script = run_dir / f"python3-{root.machine}"
    env = [f"{k}={v}" for k, v in root_env(OFFLINE).items()]
    inner = root.command(["/usr/bin/env", "-i", *env, "/usr/bin/python3"], binds=[run_dir])
    script.write_text(
        "#!/bin/sh\n# Ansible's interpreter for the pi-check: the Pi root's python3.\n"
        f'exec {" ".join(shlex.quote(a) for a in inner)} "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@dataclass(frozen=True)
class NodeSetup:
    """What the node's inventory and host_vars say (the broker's and the emulator's ports)."""

    broker: Any  # a running MosquittoProcess of the test roster
    emulator_port: int
    serial_board: str = "1"
    simulated_board: str = "2"

    def boards(self) -> list[dict[str, Any]]:
        return [
            {"id": self.serial_board, "face": "serial",
             "url": f"socket://127.0.0.1:{self.emulator_port}"},
            {"id": self.simulated_board, "face": "simulated",
             "simulated": {"mode": "random", "mean_move_s": 0.4, "sigma": 0.3, "seed": 7}},
        ]  # fmt: skip


def write_inventory(work: Path, setup: NodeSetup, roster_text: str) -> Path:
    roster = work / "roster.toml"
    roster.write_text(roster_text)
    inventory = work / "inventory.yml"
    parser = argparse.ArgumentParser()
    deploy_cli.add_arguments(parser)
    args = parser.parse_args([
        "inventory", "--roster", str(roster), "--out", str(inventory), "--face", "simulated",
        "--domain", "", "--ansible-user", "", "--broker-url", setup.broker.url,
        "--credentials", str(setup.broker.files.credentials_dir),
    ])  # fmt: skip
    assert deploy_cli.run(args) == 0
    return inventory


def apply_node_playbook(
    root: PiRoot, bundle: Path, work: Path, setup: NodeSetup, roster_text: str
) -> str:
    """deploy/ansible/node.yml for pi-01 into ``root``; returns Ansible's output."""
    run_dir = work / "run"
    (run_dir / "remote-tmp").mkdir(parents=True, exist_ok=True)
    inventory = write_inventory(work, setup, roster_text)
    extra = work / "pi.json"
    extra.write_text(
        json.dumps({
            # No systemd, users or chrony service under proot: the dry run's switch leaves out
            # exactly those; every path stays the Pi's own.
            "qizhong_dry_run": True,
            "qizhong_bundle_dir": str(bundle),
            "qizhong_boards": setup.boards(),
            "ansible_python_interpreter": str(interpreter_script(root, run_dir)),
        })
    )  # fmt: skip
    env = ansible_env(work / "ansible-home")
    env["ANSIBLE_REMOTE_TEMP"] = str(run_dir / "remote-tmp")
    proc = run(
        [tool("ansible-playbook"), "-i", str(inventory), str(ANSIBLE_DIR / "node.yml"),
         "--connection=local", "--limit", "pi-01", "-e", f"@{extra}"],
        env=env, timeout=3600,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    return out
