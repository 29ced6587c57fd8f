"""The offline bundle (``qizhong deploy bundle``): every wheel the venue needs, in one folder.

Built where there is internet (only PyPI is needed), carried to the venue on a USB stick, and
installed by the playbooks with ``pip install --no-index --find-links BUNDLE qizhong``.

How: the project's own wheel is built first; ``pip download`` resolves its dependencies for
the machine building the bundle (``host``, which also serves an x86_64 station laptop); the
pinned set is then fetched again as binary wheels for each Raspberry Pi target (``aarch64``,
``armv7l``: Raspberry Pi OS Bookworm, CPython 3.11). Cross-platform resolution cannot see
environment markers of the target (pip evaluates them on the host), so the Pi-only packages
of the ``pi`` extra are named explicitly. A package PyPI has no wheel for on a target (armv7
wheels mostly live on piwheels.org, which is not reachable from here) is listed under
``missing`` in ``bundle.json``: the node's venv sees Raspberry Pi OS's own apt packages
(``--system-site-packages``), which provide them (python3-pil, python3-lgpio, ...).

Each machine's archive holds ``requirements.txt``: the exact pins that machine installs
(``pip install --no-index --no-deps -r requirements.txt``), i.e. the host's resolution less
what that machine lacks. Installed that way because pip resolving on the Pi itself sees
dependencies the host could not (a marker on ``platform_machine``: luma.led_matrix wants
``rpi_ws281x`` on armv7l only, for WS281x LED strips qizhong does not drive, with no wheel
anywhere but piwheels): those are listed under ``missing`` too, never installed, and the
pi-check (make pi-check) proves the node runs without them.
"""

from __future__ import annotations

import io
import json
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qizhong.deploy.pip_adapter import requirement_classes
from qizhong.errors import QizhongError

__all__ = [
    "PI_PACKAGES",
    "TARGETS",
    "BundleError",
    "BundleReport",
    "build_bundle",
    "build_project_wheel",
    "wheels_for",
    "write_archive",
]

# Target name -> pip --platform tags. Bookworm has glibc 2.36; pip expands manylinux2014 to
# the older manylinux tags itself but not the PEP 600 ones, so those are listed.
TARGETS: dict[str, tuple[str, ...]] = {
    "aarch64": (
        "manylinux_2_36_aarch64", "manylinux_2_34_aarch64", "manylinux_2_28_aarch64",
        "manylinux2014_aarch64", "linux_aarch64",
    ),
    "armv7l": (
        "manylinux_2_36_armv7l", "manylinux_2_34_armv7l", "manylinux_2_31_armv7l",
        "manylinux_2_28_armv7l", "manylinux2014_armv7l", "linux_armv7l",
    ),
}  # fmt: skip
# The `pi` extra's packages (markers on platform_machine, invisible to a cross download).
PI_PACKAGES = ("lgpio", "spidev", "RPi.GPIO")
PYTHON_VERSION = "3.11"  # Raspberry Pi OS Bookworm
_MISSING = re.compile(r"No matching distribution found for ([^\s;]+)")
_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)-.+\.whl$")
REQUIREMENTS = "requirements.txt"  # inside each wheels-<machine>.tar


class BundleError(QizhongError):
    """The bundle could not be built; the message says which step and pip's last words."""


@dataclass(slots=True)
class BundleReport:
    dir: Path
    project_wheel: Path
    targets: tuple[str, ...]
    wheels: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)
    archives: dict[str, str] = field(default_factory=dict)  # machine -> wheels-<machine>.tar
    # machine -> dependencies only that machine wants (platform_machine markers), fetched
    extra: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> str:
        body = {
            "project_wheel": self.project_wheel.name,
            "python": PYTHON_VERSION,
            "targets": list(self.targets),
            "wheels": sorted(self.wheels),
            "missing": self.missing,
            "archives": self.archives,
            "install": "pip install --no-index --no-deps --find-links BUNDLE "
            f"-r {REQUIREMENTS} (inside wheels-<machine>.tar)",
        }
        return json.dumps(body, indent=2) + "\n"


def _pip(args: Sequence[str], *, what: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
        raise BundleError(f"{what} failed (pip exit {proc.returncode}):\n{tail}")
    return proc


def project_root() -> Path:
    return Path(__file__).resolve().parents[2]


def build_project_wheel(out: Path, *, source: Path | None = None, isolation: bool = True) -> Path:
    """Build qizhong's wheel into ``out`` from a clean copy of the source tree.

    A copy, because setuptools writes build/ and egg-info next to the sources it builds.
    ``isolation=False`` reuses this interpreter's setuptools (no download; tests).
    """
    source = source or project_root()
    if not (source / "pyproject.toml").is_file():
        # An installed qizhong has no sources to build a wheel from: the bundle is made from
        # the repository (its playbooks are there too).
        raise BundleError(
            f"{source} is not a qizhong source checkout (no pyproject.toml): run "
            "`qizhong deploy bundle` from the repository's venv (make .venv/.installed-stamp)"
        )
    try:
        meta = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BundleError(f"{source}/pyproject.toml: {exc}") from None
    packages = {p.split(".")[0] for p in meta["tool"]["setuptools"]["packages"]}
    with tempfile.TemporaryDirectory(prefix="qz-wheel-") as tmp:
        copy = Path(tmp) / "src"
        copy.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            if (source / name).exists():
                shutil.copy2(source / name, copy / name)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for pkg in sorted(packages):
            shutil.copytree(source / pkg, copy / pkg, ignore=ignore)
        args = ["wheel", "--no-deps", "--wheel-dir", str(out), str(copy)]
        if not isolation:
            args.insert(1, "--no-build-isolation")
        _pip(args, what="building the qizhong wheel")
    version = meta["project"]["version"]
    found = sorted(out.glob(f"qizhong-{version}-*.whl"))
    if not found:
        raise BundleError(f"pip built no qizhong-{version} wheel in {out}")
    return found[-1]


def _pinned(out: Path) -> list[str]:
    pins = []
    for wheel in sorted(out.glob("*.whl")):
        m = _WHEEL.match(wheel.name)
        if m and m["name"].lower() != "qizhong":
            pins.append(f"{m['name']}=={m['version']}")
    return sorted(set(pins))


def _download_target(out: Path, target: str, requirements: list[str]) -> list[str]:
    """Fetch binary wheels of ``requirements`` for ``target``; return the ones PyPI lacks."""
    platform_args = [a for tag in TARGETS[target] for a in ("--platform", tag)]
    base = [
        "download", "--dest", str(out), "--no-deps", "--only-binary=:all:",
        *platform_args, "--python-version", PYTHON_VERSION,
        "--implementation", "cp", "--abi", "cp" + PYTHON_VERSION.replace(".", ""),
    ]  # fmt: skip
    missing: list[str] = []
    todo = list(requirements)
    while todo:
        proc = _pip([*base, *todo], what=f"downloading for {target}", check=False)
        if proc.returncode == 0:
            return missing
        m = _MISSING.search(proc.stderr) or _MISSING.search(proc.stdout)
        gone = m[1] if m else None
        if gone is None or gone not in todo:
            tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
            raise BundleError(f"downloading for {target} failed:\n{tail}")
        # pip stops at the first requirement it cannot meet: note it and fetch the rest.
        todo.remove(gone)
        missing.append(gone)
    return missing


def wheels_for(out: Path, machine: str) -> list[Path]:
    """The wheels of the bundle one machine (``uname -m``) can install: pure ones and its own."""
    return sorted(
        p for p in out.glob("*.whl") if p.name.endswith("-any.whl") or f"_{machine}" in p.name
    )


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[=<>!~; \[]", name, maxsplit=1)[0]).lower()


def requirements_for(pins: Sequence[str], project: str, missing: Sequence[str]) -> str:
    """What one machine installs: every pin but the ones it lacks, and qizhong itself."""
    lacking = {_norm(m) for m in missing}
    lines = [p for p in pins if _norm(p) not in lacking]
    return "\n".join([project, *lines]) + "\n"


def _target_environment(machine: str) -> dict[str, str]:
    return {
        "platform_machine": machine, "sys_platform": "linux", "platform_system": "Linux",
        "os_name": "posix", "python_version": PYTHON_VERSION, "python_full_version": "3.11.2",
        "implementation_name": "cpython", "platform_python_implementation": "CPython",
        "extra": "",
    }  # fmt: skip


def machine_only_dependencies(out: Path, machine: str, pins: Sequence[str]) -> list[str]:
    """Dependencies of the bundled wheels that only ``machine`` wants (a marker on
    ``platform_machine`` the host's resolution evaluated for itself) and that are not pinned."""
    Requirement, InvalidRequirement = requirement_classes()
    pinned = {_norm(p) for p in pins} | {"qizhong"}
    env = _target_environment(machine)
    found: set[str] = set()
    for wheel in wheels_for(out, machine):
        with zipfile.ZipFile(wheel) as zf:
            meta = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
            text = zf.read(meta).decode("utf-8", "replace") if meta else ""
        for line in text.splitlines():
            if not line.startswith("Requires-Dist:") or "platform_machine" not in line:
                continue
            try:
                req = Requirement(line.split(":", 1)[1].strip())
            except InvalidRequirement:
                continue
            wanted = req.marker is not None and req.marker.evaluate(env)
            if wanted and _norm(req.name) not in pinned:
                found.add(req.name)
    return sorted(found)


def write_archive(out: Path, machine: str, requirements: str | None = None) -> Path:
    """``wheels-<machine>.tar``: one file per Pi to copy (Ansible copies a folder file by file,
    a second or more each), holding only the wheels that machine can use and the
    ``requirements.txt`` it installs."""
    archive = out / f"wheels-{machine}.tar"
    tmp = archive.with_name(archive.name + ".tmp")
    with tarfile.open(tmp, "w") as tar:
        for wheel in wheels_for(out, machine):
            tar.add(wheel, arcname=wheel.name)
        if requirements is not None:
            data = requirements.encode("utf-8")
            info = tarfile.TarInfo(REQUIREMENTS)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    tmp.replace(archive)
    return archive


def build_bundle(
    out: str | Path,
    *,
    targets: Sequence[str] = ("aarch64", "armv7l"),
    host: bool = True,
    source: Path | None = None,
    isolation: bool = True,
) -> BundleReport:
    """Write the bundle into ``out``: wheels for ``host`` and each target, and bundle.json."""
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        raise BundleError(f"unknown target {unknown[0]!r}: choose from {', '.join(TARGETS)}")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    wheel = build_project_wheel(out, source=source, isolation=isolation)
    report = BundleReport(out, wheel, ("host", *targets) if host else tuple(targets))
    with tempfile.TemporaryDirectory(prefix="qz-resolve-") as tmp:
        # Resolve on this machine (into a scratch folder when the host is not a target).
        where = out if host else Path(tmp)
        _pip(
            ["download", "--dest", str(where), "--only-binary=:all:", str(wheel)],
            what="resolving the dependencies",
        )
        pins = _pinned(where)
    for target in targets:
        report.missing[target] = _download_target(out, target, [*pins, *PI_PACKAGES])
        extra = machine_only_dependencies(out, target, pins)
        # Fetched if PyPI has them for the target; said missing (and left out) if not.
        lacking = _download_target(out, target, extra) if extra else []
        report.missing[target] += lacking
        report.extra[target] = [e for e in extra if e not in lacking]
    report.wheels = [p.name for p in out.glob("*.whl")]
    machines = {*targets, platform.machine()} if host else set(targets)
    project = "qizhong==" + wheel.name.split("-")[1]
    report.archives = {
        m: write_archive(
            out, m,
            requirements_for([*pins, *report.extra.get(m, [])], project, report.missing.get(m, [])),
        ).name
        for m in sorted(machines)
    }  # fmt: skip
    (out / "bundle.json").write_text(report.to_json(), encoding="utf-8")
    return report
