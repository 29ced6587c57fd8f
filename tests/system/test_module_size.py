"""Modules under 500 lines (the project's style: small modules, one idea each), every Python
file of the tree and the pages' scripts; the pages' dictionary of words (i18n.js, two
languages side by side) is the one data table allowed past it."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 500
DATA_TABLES = {"venue_station/web/static/i18n.js"}


def tracked(*patterns: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [p for p in out if p not in DATA_TABLES]


def too_long(paths: list[str]) -> list[str]:
    long = []
    for path in paths:
        lines = (ROOT / path).read_text(encoding="utf-8").count("\n")
        if lines >= LIMIT:
            long.append(f"{path}: {lines} lines")
    return long


def test_every_module_is_under_500_lines() -> None:
    files = tracked("*.py", "*.js")
    assert len(files) > 200  # the tree, not an empty listing
    assert too_long(files) == []


def test_the_rule_would_catch_a_long_module(tmp_path: Path) -> None:
    path = tmp_path / "long.py"
    path.write_text("x = 1\n" * LIMIT)
    assert too_long([str(path)]) == [f"{path}: {LIMIT} lines"]
