"""A node.toml's relative paths are the file's, and ``--check`` catches what start would (issue 28).

A technician writes ``password_file = "node.secret"`` beside ``node.toml`` and starts the node from
systemd, whose working directory is ``/``: the file is where the config is, not where the process
happens to stand. ``--check`` must then say "ok" only for a config the node can really start with.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from board_nodes.config import NodeConfig

TOML = """
venue = "v1"
node = "pi-01"
data_dir = "data"
[broker]
url = "mqtt://127.0.0.1:1883"
username = "pi-01.1"
password_file = "{password_file}"
[[board]]
id = "1"
face = "simulated"
"""


def write_config(folder: Path, password_file: str = "node.secret") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "node.toml"
    path.write_text(TOML.format(password_file=password_file), encoding="utf-8")
    return path


def check(config: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [sys.executable, "-m", "qizhong", "node", "--config", str(config), "--check"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_a_relative_password_file_is_read_beside_the_config(tmp_path: Path) -> None:
    config = write_config(tmp_path / "etc")
    (tmp_path / "etc" / "node.secret").write_text("s3cret\n", encoding="utf-8")
    loaded = NodeConfig.load(config)
    assert loaded.broker.password_file == tmp_path / "etc" / "node.secret"
    assert loaded.broker.read_password() == "s3cret"
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    proc = check(config, elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout


def test_check_fails_on_a_password_file_that_start_could_not_read(tmp_path: Path) -> None:
    config = write_config(tmp_path / "etc", password_file="missing.secret")
    proc = check(config, tmp_path)
    assert proc.returncode == 2, proc.stdout
    assert "broker.password_file" in proc.stderr
    assert "missing.secret" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_check_fails_on_a_data_dir_that_cannot_be_made(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    config = write_config(folder)
    (folder / "node.secret").write_text("x", encoding="utf-8")
    (folder / "data").write_text("a file where the journal's folder should be", encoding="utf-8")
    proc = check(config, tmp_path)
    assert proc.returncode == 2, proc.stdout
    assert "data_dir" in proc.stderr
    assert "Traceback" not in proc.stderr
