"""Helpers for tests/deploy: the repository's deploy/ paths, a host bundle built once per
session, and ansible commands run from the project's virtualenv with a private home."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from support.parts import skip_missing

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
ANSIBLE_DIR = DEPLOY / "ansible"
SYSTEMD_DIR = DEPLOY / "systemd"
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    """A tool of the project's venv (ansible-playbook, ansible-lint), or skip the test."""
    path = BIN / name
    if not path.exists():
        found = shutil.which(name)
        if found is None:
            skip_missing(name, "pip install -e '.[dev]': ansible-core, ansible-lint")
        return found
    return str(path)


def ansible_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        ANSIBLE_CONFIG=str(ANSIBLE_DIR / "ansible.cfg"),
        ANSIBLE_HOME=str(home),
        ANSIBLE_LOCAL_TEMP=str(home / "tmp"),
        ANSIBLE_REMOTE_TEMP=str(home / "remote-tmp"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_PYTHON_INTERPRETER=sys.executable,
        ANSIBLE_FORCE_COLOR="0",
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def run(cmd: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:  # fmt: skip
    return subprocess.run(
        cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False
    )


@functools.lru_cache(maxsize=1)
def host_bundle() -> Path:
    """A bundle for this machine only (no cross-platform targets), built once per session."""
    from qizhong.deploy.bundle import build_bundle

    top = Path(tempfile.mkdtemp(prefix="qz-bundle-"))
    atexit.register(shutil.rmtree, top, True)
    out = top / "bundle"
    build_bundle(out, targets=())
    return out
