"""A Pi in a box: Debian bookworm roots for the Pi's CPUs, run on this machine under emulation.

No Pi is at hand, so the pi-check (``make pi-check``, tests/pi) builds one root per Pi CPU
(``aarch64``, ``armv7l``) from ``deploy/pi-image/recipe.toml``: ``debootstrap --foreign`` on
the host fetches and unpacks the packages, then ``debootstrap --second-stage`` runs inside the
root under ``proot -q qemu-<cpu>-static`` (no binfmt registration, no VM; the host's loopback
is shared, so a node inside reaches a broker on 127.0.0.1). Roots are cached under
``var/pi-roots/<machine>-<sha256[:12]>`` of what the recipe puts into that root; a changed
recipe names a new root and the old one is removed. A root is complete only once its
``.complete`` stamp is written, so an interrupted build is started over, never used; one
build per machine at a time (a lock file), so two checks never share a half-built root.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from qizhong.deploy.bundle import project_root
from qizhong.errors import QizhongError

__all__ = ["MACHINES", "PiRoot", "PiRootError", "Recipe", "ensure_root", "load_recipe"]

MACHINES = ("aarch64", "armv7l")
# Bumped when the way a root is built changes (not only its package list).
BUILD_VERSION = "3"
STAMP = ".complete"


class PiRootError(QizhongError):
    """A Pi root could not be built or used; the message says which step and its last words."""


@dataclass(frozen=True, slots=True)
class Recipe:
    suite: str
    mirror: str
    variant: str
    packages: Mapping[str, tuple[str, ...]]  # machine -> Debian packages (with "all")
    arch: Mapping[str, tuple[str, str]]  # machine -> (Debian architecture, qemu binary)

    def packages_for(self, machine: str) -> tuple[str, ...]:
        return (*self.packages.get("all", ()), *self.packages.get(machine, ()))

    def digest(self, machine: str) -> str:
        """What names ``machine``'s root: everything of the recipe that goes into it (so a
        comment, or the other CPU's list, changing rebuilds nothing)."""
        what = {
            "build": BUILD_VERSION, "suite": self.suite, "mirror": self.mirror,
            "variant": self.variant, "packages": self.packages_for(machine),
            "arch": self.arch[machine],
        }  # fmt: skip
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()


def recipe_path() -> Path:
    return project_root() / "deploy" / "pi-image" / "recipe.toml"


def load_recipe(path: Path | None = None) -> Recipe:
    """Read and check the recipe; a bad one is named with its file and key."""
    path = path or recipe_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PiRootError(f"{path}: {exc}") from None

    def need(key: str, value: object, kind: type) -> None:
        if not isinstance(value, kind):
            raise PiRootError(f"{path}: {key}: expected {kind.__name__}, got {value!r}")

    for key in ("suite", "mirror", "variant"):
        need(key, data.get(key), str)
    packages: dict[str, tuple[str, ...]] = {}
    for group, names in data.get("packages", {}).items():
        need(f"packages.{group}", names, list)
        for name in names:
            need(f"packages.{group}[]", name, str)
        packages[group] = tuple(names)
    arch: dict[str, tuple[str, str]] = {}
    for machine in MACHINES:
        entry = data.get("arch", {}).get(machine)
        need(f"arch.{machine}", entry, dict)
        need(f"arch.{machine}.debian", entry.get("debian"), str)
        need(f"arch.{machine}.qemu", entry.get("qemu"), str)
        arch[machine] = (entry["debian"], entry["qemu"])
    return Recipe(data["suite"], data["mirror"], data["variant"], packages, arch)


@dataclass(frozen=True, slots=True)
class PiRoot:
    """A finished root and how to run a command inside it."""

    machine: str
    path: Path
    qemu: str

    def command(
        self,
        argv: Sequence[str],
        *,
        binds: Sequence[str | Path] = (),
        cwd: str = "/",
        host_dev: bool = True,
    ) -> list[str]:
        """``argv`` run inside the root as (fake) root, the host's /proc /sys (and /dev unless
        ``host_dev`` is false) and ``binds`` (host paths, seen at the same path) visible."""
        # statx answers ENOSYS (qizhong.deploy.nostatx): proot would resolve it on the host.
        nostatx = [sys.executable, "-m", "qizhong.deploy.nostatx"]
        args = [*private_mounts(), *nostatx, "proot", "-q", self.qemu, "-0", "-r", str(self.path)]
        args += ["-w", cwd]
        for bind in ("/dev", "/proc", "/sys", *binds) if host_dev else ("/proc", "/sys", *binds):
            args += ["-b", str(bind)]
        return [*args, *argv]

    def run(
        self,
        argv: Sequence[str],
        *,
        binds: Sequence[str | Path] = (),
        env: Mapping[str, str] | None = None,
        timeout: float = 600,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(argv, binds=binds),
            capture_output=True,
            text=True,
            env=dict(env) if env is not None else root_env(),
            timeout=timeout,
            check=False,
        )


def private_mounts() -> list[str]:
    """A prefix that runs a command in a mount namespace of its own, so nothing run inside a
    root (debootstrap, a package's maintainer script) can mount or unmount the host's
    filesystems: proot passes mount(2) and umount(2) through, and we run as real root."""
    if os.geteuid() == 0 and shutil.which("unshare"):
        return ["unshare", "--mount", "--propagation", "private"]
    return []


def root_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment for commands inside a root (the host's venv and locale stay out)."""
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "DEBIAN_FRONTEND": "noninteractive",
        # proot's own temporary files (it must not follow the root's TMPDIR).
        "PROOT_TMP_DIR": os.environ.get("PROOT_TMP_DIR", "/tmp"),
    }
    env.update(extra or {})
    return env


def roots_dir() -> Path:
    return Path(os.environ.get("QZ_PI_ROOTS", project_root() / "var" / "pi-roots"))


def _run(cmd: Sequence[str], *, what: str, timeout: float, env: Mapping[str, str] | None = None,
         log: Path | None = None) -> None:  # fmt: skip
    proc = subprocess.run(
        list(cmd), capture_output=True, text=True, timeout=timeout, check=False,
        env=dict(env) if env is not None else None,
    )  # fmt: skip
    if log is not None:
        with log.open("a", encoding="utf-8") as out:
            out.write(f"$ {' '.join(cmd)}\n{proc.stdout}{proc.stderr}\n")
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr + proc.stdout).strip().splitlines()[-12:])
        raise PiRootError(f"{what} failed (exit {proc.returncode}):\n{tail}")


def _build(recipe: Recipe, machine: str, into: Path, log: Path) -> None:
    debian_arch, qemu = recipe.arch[machine]
    for tool in ("debootstrap", "proot", qemu):
        if shutil.which(tool) is None:
            raise PiRootError(f"{tool} is not installed (apt install debootstrap proot "
                              "qemu-user-static)")  # fmt: skip
    include = ",".join(recipe.packages_for(machine))
    _run(
        ["debootstrap", "--foreign", f"--arch={debian_arch}", f"--variant={recipe.variant}",
         f"--include={include}", recipe.suite, str(into), recipe.mirror],
        what=f"debootstrap --foreign ({machine})", timeout=1800, log=log,
    )  # fmt: skip
    # debootstrap leaves proc as a symlink to the host's /proc; proot binds a directory there.
    proc_dir = into / "proc"
    if proc_dir.is_symlink():
        proc_dir.unlink()
    proc_dir.mkdir(exist_ok=True)
    root = PiRoot(machine, into, qemu)
    _run(
        # Not the host's /dev: the second stage mknods its devices and mounts and unmounts
        # /dev/pts, which through a bind were the host's own (it once left this machine with
        # no pseudo-terminals at all).
        root.command(["/debootstrap/debootstrap", "--second-stage"], host_dev=False),
        what=f"debootstrap --second-stage ({machine}, emulated)", timeout=3600,
        # Its own test -x /debootstrap/debootstrap fails under proot: say where it lives.
        env=root_env({"DEBOOTSTRAP_DIR": "/debootstrap"}), log=log,
    )  # fmt: skip
    _run(root.command(["apt-get", "clean"]), what="apt-get clean", timeout=600, env=root_env())
    versions = subprocess.run(
        root.command(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n",
                      *recipe.packages_for(machine)]),
        capture_output=True, text=True, env=root_env(), timeout=600, check=False,
    ).stdout  # fmt: skip
    (into / STAMP).write_text(f"{recipe.digest(machine)}\n{versions}", encoding="utf-8")


def ensure_root(machine: str, *, recipe: Recipe | None = None, where: Path | None = None) -> PiRoot:
    """The cached root for ``machine``, built first if the recipe changed or none is there."""
    if machine not in MACHINES:
        raise PiRootError(f"unknown machine {machine!r}: choose from {', '.join(MACHINES)}")
    recipe = recipe or load_recipe()
    where = where or roots_dir()
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{machine}-{recipe.digest(machine)[:12]}"
    qemu = recipe.arch[machine][1]
    with (where / f".{machine}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (path / STAMP).exists():
            _replace_root(recipe, machine, where, path)
    return PiRoot(machine, path, qemu)


def _replace_root(recipe: Recipe, machine: str, where: Path, path: Path) -> None:
    # Old recipes' roots and half-built ones: ~300 MB each, never used again.
    for stale in where.glob(f"{machine}-*"):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
        elif stale.name != path.name + ".log":
            stale.unlink(missing_ok=True)
    building = path.with_name(path.name + ".tmp")
    log = path.with_name(path.name + ".log")
    log.unlink(missing_ok=True)
    _build(recipe, machine, building, log)
    building.rename(path)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Build (or find) the cached Pi roots.")
    parser.add_argument("machines", nargs="*", metavar="MACHINE",
                        help=f"{' or '.join(MACHINES)} (default: both)")  # fmt: skip
    args = parser.parse_args(argv)
    unknown = [m for m in args.machines if m not in MACHINES]
    if unknown:
        parser.error(f"unknown machine {unknown[0]!r}: choose from {', '.join(MACHINES)}")
    for machine in args.machines or MACHINES:
        root = ensure_root(machine)
        print(f"{machine}: {root.path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
