"""Which files of the source tree the built wheel and sdist must hold (``make package-check``).

Every file under a package the code ships is either something the code opens at run time
(pages, scripts, styles, favicon, regulation profiles, migrations and their template, modules)
or on the short list below. A file present in the tree and absent from the archive is what
left the installed station without its pages (issue 19): setuptools ships only the package data
of listed packages and is silent about the rest. Pure functions; ``package_check.py`` feeds
them the tree and the archives' member names.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "EXCLUDED_DIRS",
    "EXCLUDED_NAMES",
    "EXCLUDED_SUFFIXES",
    "NOT_PACKAGES",
    "missing_from",
    "shipped_packages",
    "tree_files",
    "unlisted_packages",
]

# Never shipped: bytecode caches, and each folder's README (notes for the repository's reader,
# never opened by the code). Keep this list short: anything else under a package ships.
EXCLUDED_DIRS = frozenset({"__pycache__"})
EXCLUDED_SUFFIXES = frozenset({".pyc"})
EXCLUDED_NAMES = frozenset({"README.md"})
# Top-level folders that are packages for the tests' sake but are never installed.
NOT_PACKAGES = frozenset({"tests", "benchmarks", "tools"})


def shipped_packages(pyproject: Path) -> list[str]:
    """The top-level packages ``pyproject.toml`` ships (``[tool.setuptools] packages``)."""
    meta = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    listed = meta["tool"]["setuptools"]["packages"]
    return sorted({name.split(".")[0] for name in listed})


def _excluded(relative: Path) -> bool:
    return (
        any(part in EXCLUDED_DIRS for part in relative.parts)
        or relative.suffix in EXCLUDED_SUFFIXES
        or relative.name in EXCLUDED_NAMES
        or any(part.endswith(".egg-info") for part in relative.parts)
    )


def tree_files(root: Path, packages: Iterable[str]) -> set[str]:
    """Every file under ``packages`` in the tree at ``root``, as ``pkg/sub/file`` (POSIX), less
    the excluded ones."""
    found: set[str] = set()
    for package in packages:
        base = root / package
        if not (base / "__init__.py").is_file():
            raise FileNotFoundError(f"{base}: listed in pyproject.toml but not a package")
        for path in base.rglob("*"):
            relative = path.relative_to(root)
            if path.is_file() and not _excluded(relative):
                found.add(relative.as_posix())
    return found


def unlisted_packages(root: Path, packages: Iterable[str]) -> list[str]:
    """Top-level packages in the tree that ``pyproject.toml`` does not ship (a forgotten one)."""
    listed = set(packages)
    return sorted(
        p.name
        for p in root.iterdir()
        if (p / "__init__.py").is_file() and p.name not in listed and p.name not in NOT_PACKAGES
    )


def missing_from(members: Iterable[str], expected: Iterable[str], *, prefix: str = "") -> list[str]:
    """The ``expected`` files (``pkg/...``) that no archive member (``prefix + pkg/...``) holds."""
    held = {m[len(prefix) :] for m in members if m.startswith(prefix)}
    return sorted(set(expected) - held)
