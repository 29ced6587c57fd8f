#!/usr/bin/env python3
"""``make package-check``: what the technician installs is what works (issue 19).

Builds the sdist and, from it, the wheel (``python -m build``) out of a clean copy of the tree;
checks that both hold every file the tree has under the shipped packages (``package_files``);
installs the wheel with pip into a fresh venv in a temporary folder outside the tree (no
``-e``, working directory elsewhere, no ``PYTHON*`` variables, no user site) and proves the
packages import from that venv's site-packages. Then, from that install only:

- ``qizhong demo`` runs bounded while Debian's chromium loads the display, board, arbiter and
  standings pages; each page, every script/style/icon it references and every ``/static/``
  request it makes must answer 200, with no script error on the page;
- ``qizhong station`` starts against a fresh PostgreSQL database (created on QZ_PG_HOST:QZ_PG_PORT,
  dropped after) on a private Mosquitto, migrates it, serves its display page and stops
  cleanly; the database then holds every table the installed code declares.

Exit 0 when all hold; otherwise 1, naming the step and what was wrong. ``--source DIR`` checks
another checkout (how the check was shown to fail on the commit before the fix).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

from package_files import missing_from, shipped_packages, tree_files, unlisted_packages
from package_pages import PageProblem, check_pages

ROOT = Path(__file__).resolve().parents[1]
# The tests' PostgreSQL (tools/bring_up.py sets QZ_PG_HOST/QZ_PG_PORT; default 127.0.0.1:5432).
PG_HOST = os.environ.get("QZ_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("QZ_PG_PORT", "5432"))
PG_ADMIN = {"host": PG_HOST, "port": PG_PORT, "database": "test", "user": "postgres"}
PAGES = ("/", "/board/1", "/arbiter", "/standings")
# Printed by the installed interpreter: where each shipped package is imported from.
WHERE = """
import importlib, json, sys, sysconfig
names = json.loads(sys.argv[1])
print(json.dumps({"purelib": sysconfig.get_paths()["purelib"],
                  "modules": {n: importlib.import_module(n).__file__ for n in names}}))
"""
# Printed by the installed interpreter: the tables its code expects in the database.
TABLES = """
import json
from venue_station.store.tables import metadata
print(json.dumps(sorted(metadata.tables)))
"""


class CheckFailed(Exception):
    """One step of the check found the install wrong; the message says what."""


@contextlib.contextmanager
def step(name: str) -> Iterator[None]:
    print(f"== {name}", flush=True)
    started = time.monotonic()
    yield
    print(f"   ok ({time.monotonic() - started:.1f} s)", flush=True)


def tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def clean_env(venv: Path, source: Path) -> dict[str, str]:
    """The environment of a fresh shell on the station: nothing points back at the tree."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTHON") and k not in {"VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV"}
    }
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and not _inside(Path(p), source)]
    env.update(PATH=os.pathsep.join([str(venv / "bin"), *path]), VIRTUAL_ENV=str(venv))
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def run(
    cmd: list[str], *, what: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> str:
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise CheckFailed(f"{what}: no answer within {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise CheckFailed(
            f"{what} failed (exit {proc.returncode}):\n{tail(proc.stderr + proc.stdout)}"
        )
    return proc.stdout


# -- build and contents ------------------------------------------------------------------------
def build(source: Path, work: Path) -> tuple[Path, Path]:
    """sdist, then the wheel from that sdist, out of a clean copy (no stale egg-info/build)."""
    copy = work / "src"
    copy.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (source / name).exists():
            shutil.copy2(source / name, copy / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for package in shipped_packages(source / "pyproject.toml"):
        shutil.copytree(source / package, copy / package, ignore=ignore)
    dist = work / "dist"
    run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(copy)],
        what="python -m build",
        cwd=work,
        timeout=300,
    )
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        raise CheckFailed(f"expected one wheel and one sdist in {dist}, found {os.listdir(dist)}")
    print(f"   {wheels[0].name}, {sdists[0].name}")
    return wheels[0], sdists[0]


def check_contents(source: Path, wheel: Path, sdist: Path) -> None:
    packages = shipped_packages(source / "pyproject.toml")
    unlisted = unlisted_packages(source, packages)
    if unlisted:
        raise CheckFailed(f"packages in the tree that pyproject.toml does not ship: {unlisted}")
    expected = tree_files(source, packages)
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = zf.namelist()
    with tarfile.open(sdist) as tf:
        in_sdist = tf.getnames()
    top = sdist.name.removesuffix(".tar.gz") + "/"
    problems = []
    for label, members, prefix in (("wheel", in_wheel, ""), ("sdist", in_sdist, top)):
        missing = missing_from(members, expected, prefix=prefix)
        if missing:
            shown = "\n     ".join(missing[:30]) + ("\n     …" if len(missing) > 30 else "")
            archive = wheel if label == "wheel" else sdist
            problems.append(
                f"{len(missing)} of the tree's {len(expected)} files are not in the {label} "
                f"({archive.name}):\n     {shown}"
            )
    if problems:
        raise CheckFailed("\n   ".join(problems))
    print(f"   all {len(expected)} files of {', '.join(packages)} are in the wheel and the sdist")


# -- install -------------------------------------------------------------------------------------
def install(source: Path, work: Path, wheel: Path) -> tuple[Path, dict[str, str]]:
    venv, cwd = work / "venv", work / "run"
    cwd.mkdir()
    base_python = getattr(sys, "_base_executable", sys.executable)
    # No pip of its own (ensurepip takes 10+ s): this venv's pip installs into it (--python).
    run([base_python, "-m", "venv", "--without-pip", str(venv)], what="python -m venv", cwd=cwd)
    env = clean_env(venv, source)
    python = str(venv / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", python]
    run(
        [*pip, "install", "--quiet", f"{wheel}[postgres]"],
        what="pip install of the wheel",
        cwd=cwd,
        env=env,
        timeout=600,
    )
    names = shipped_packages(source / "pyproject.toml")
    where = json.loads(
        run([python, "-c", WHERE, json.dumps(names)], what="import", cwd=cwd, env=env)
    )
    purelib = Path(where["purelib"])
    for name, file in where["modules"].items():
        if file is None or not _inside(Path(file), purelib) or _inside(Path(file), source):
            raise CheckFailed(f"import {name} resolves to {file}, not into {purelib}")
    print(f"   {', '.join(names)} import from {purelib}")
    return venv, env


# -- the demo and its pages ----------------------------------------------------------------------
def demo_pages(work: Path, venv: Path, env: dict[str, str]) -> None:
    info, demo_dir, log = work / "demo.json", work / "demo", work / "demo.log"
    cmd = [
        str(venv / "bin" / "qizhong"),
        "demo",
        "--boards",
        "4",
        "--speed",
        "30",
        "--duration",
        "120",
        "--quiet",
        "--info",
        str(info),
        "--dir",
        str(demo_dir),
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd, cwd=work / "run", env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 90
        while not info.exists():
            if proc.poll() is not None:
                raise CheckFailed(
                    f"qizhong demo exited ({proc.returncode}) before it was up:\n"
                    f"{_logs(log, demo_dir)}"
                )
            if time.monotonic() > deadline:
                raise CheckFailed(f"qizhong demo was not up within 90 s:\n{_logs(log, demo_dir)}")
            time.sleep(0.3)
        time.sleep(0.2)  # the info file is written in one call; let it land
        url = json.loads(info.read_text(encoding="utf-8"))["station"]["url"]
        try:
            for line in check_pages(url, PAGES):
                print(f"   {line}")
        except PageProblem as exc:
            raise CheckFailed(f"the installed station's pages:\n   {exc}") from None
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # the demo stops its nodes, station and broker
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            _reap(work)  # its station and nodes run in their own sessions
    if proc.returncode != 0:
        raise CheckFailed(f"qizhong demo exited {proc.returncode}:\n{_logs(log, demo_dir)}")
    station_log = demo_dir / "station-0.log"
    if station_log.exists() and "Traceback" in station_log.read_text(errors="replace"):
        raise CheckFailed(f"the demo's station logged a traceback:\n{_logs(log, demo_dir)}")


def _reap(work: Path) -> None:
    """Kill, by pid, what the check started that is still running from ``work`` (the demo's
    station and nodes when the demo itself had to be killed)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(work) in cmdline:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


def _logs(log: Path, demo_dir: Path) -> str:
    parts = [f"-- {log.name}\n{tail(log.read_text(errors='replace'))}"] if log.exists() else []
    station = demo_dir / "station-0.log"
    if station.exists():
        parts.append(f"-- {station}\n{tail(station.read_text(errors='replace'))}")
    return "\n".join(parts)


# -- a station on PostgreSQL ---------------------------------------------------------------------
async def _pg(sql: str, database: str = "test") -> list[tuple[object, ...]]:
    import asyncpg

    conn = await asyncpg.connect(**{**PG_ADMIN, "database": database})
    try:
        return [tuple(r) for r in await conn.fetch(sql)]
    finally:
        await conn.close()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def postgres_station(work: Path, venv: Path, env: dict[str, str]) -> None:
    from broker_config import MosquittoProcess, Roster, free_port

    name = f"qz_pkgcheck_{secrets.token_hex(5)}"
    try:
        asyncio.run(_pg(f'CREATE DATABASE "{name}"'))
    except OSError as exc:
        raise CheckFailed(f"PostgreSQL on {PG_HOST}:{PG_PORT} is not reachable: {exc}") from None
    os.chmod(work, 0o755)  # a root-started mosquitto drops to the mosquitto user
    broker = MosquittoProcess.from_roster(
        Roster.build(venue="pkgcheck", nodes={"pi-01": ["1"]}), work / "broker"
    )
    station, log = None, work / "pg-station.log"
    try:
        port = free_port()
        config = work / "station.toml"
        config.write_text(
            'venue = "pkgcheck"\nboards = ["1"]\n'
            f'data_dir = "{work / "pg-station"}"\n'
            f'database_url = "postgresql://postgres@{PG_HOST}:{PG_PORT}/{name}"\n'
            f'[broker]\nurl = "{broker.url}"\nusername = "station"\n'
            f'credentials_file = "{broker.dir / "credentials" / "station.json"}"\n'
            f'[http]\nhost = "127.0.0.1"\nport = {port}\n',
            encoding="utf-8",
        )
        with open(log, "wb") as out:
            station = subprocess.Popen(
                [str(venv / "bin" / "qizhong"), "station", "--config", str(config)],
                cwd=work / "run",
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            if station.poll() is not None:
                raise CheckFailed(
                    f"the station exited {station.returncode}:\n{tail(log.read_text())}"
                )
            with contextlib.suppress(OSError):
                if _get(base + "/healthz")[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise CheckFailed(
                    f"the station did not answer /healthz in 30 s:\n{tail(log.read_text())}"
                )
            time.sleep(0.2)
        status, html = _get(base + "/")
        script = _get(base + "/static/display.js")[0]
        if status != 200 or "/static/display.js" not in html or script != 200:
            raise CheckFailed(
                f"the PostgreSQL station serves / {status}, /static/display.js {script}"
            )
        station.send_signal(signal.SIGTERM)
        if station.wait(30) != 0:
            raise CheckFailed(f"the station exited {station.returncode}:\n{tail(log.read_text())}")
        python = str(venv / "bin" / "python")
        wanted = json.loads(run([python, "-c", TABLES], what="tables", cwd=work / "run", env=env))
        rows = asyncio.run(_pg("SELECT tablename FROM pg_tables WHERE schemaname = 'public'", name))
        have = {str(r[0]) for r in rows}
        version = asyncio.run(_pg("SELECT version_num FROM alembic_version", name))
        if not set(wanted) <= have or len(version) != 1:
            raise CheckFailed(
                f"after the migrations the database lacks {sorted(set(wanted) - have)}"
                f" (alembic_version: {version})"
            )
        print(f"   migrated to {version[0][0]}: {len(wanted)} tables; / and its script 200")
    finally:
        if station is not None and station.poll() is None:
            station.kill()
            station.wait()
        broker.close()
        asyncio.run(_pg(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=ROOT, help="the tree to check")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    source = args.source.resolve()
    work = Path(tempfile.mkdtemp(prefix="qz-package-check-"))
    if _inside(work, source):
        raise SystemExit(f"package-check: the temporary folder {work} is inside {source}")
    started, failures = time.monotonic(), []
    try:
        with step(f"build the sdist and the wheel from {source}"):
            wheel, sdist = build(source, work)
        with step(f"install the wheel into a fresh venv in {work}"):
            venv, env = install(source, work, wheel)
        # The remaining steps are independent: each one's finding is reported, then the next runs.
        for name, check in (
            ("compare the archives with the tree", lambda: check_contents(source, wheel, sdist)),
            (
                "qizhong demo from the install; its pages in chromium",
                lambda: demo_pages(work, venv, env),
            ),
            (
                "qizhong station from the install on a fresh PostgreSQL database",
                lambda: postgres_station(work, venv, env),
            ),
        ):
            try:
                with step(name):
                    check()
            except CheckFailed as exc:
                print(f"   FAILED: {exc}", flush=True)
                failures.append(name)
    except CheckFailed as exc:
        print(f"   FAILED: {exc}", flush=True)
        failures.append("build and install")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    took = time.monotonic() - started
    if failures:
        print(f"package-check: FAILED ({took:.0f} s): {'; '.join(failures)}", file=sys.stderr)
        return 1
    print(f"package-check: ok ({took:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
