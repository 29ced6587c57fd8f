"""The tree-versus-archive comparison of ``make package-check`` (tools/package_files.py).

Issue 19: the wheel held every module and not one page. The comparison must report any file
present under a shipped package and absent from the archive, whatever its kind, and excuse
only the short explicit list (bytecode caches, folder READMEs).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


files = _load("package_files")


def _tree(root: Path, paths: list[str]) -> Path:
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    return root


def test_a_page_missing_from_the_wheel_is_reported(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        ["shop/__init__.py", "shop/api.py", "shop/static/index.html", "shop/static/app.js"],
    )
    expected = files.tree_files(root, ["shop"])
    wheel = ["shop/__init__.py", "shop/api.py", "shop-1.0.dist-info/RECORD"]
    assert files.missing_from(wheel, expected) == ["shop/static/app.js", "shop/static/index.html"]


def test_a_module_of_an_unlisted_subpackage_is_reported_too(tmp_path: Path) -> None:
    root = _tree(tmp_path, ["shop/__init__.py", "shop/extra/__init__.py", "shop/extra/more.py"])
    missing = files.missing_from(["shop/__init__.py"], files.tree_files(root, ["shop"]))
    assert missing == ["shop/extra/__init__.py", "shop/extra/more.py"]


def test_caches_and_folder_readmes_are_the_only_files_excused(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        [
            "shop/__init__.py",
            "shop/README.md",
            "shop/__pycache__/api.cpython-311.pyc",
            "shop/stray.pyc",
            "shop/notes.md",  # not README.md: a file the code might open, so it must ship
            "shop/py.typed",
        ],
    )
    assert files.tree_files(root, ["shop"]) == {
        "shop/__init__.py",
        "shop/notes.md",
        "shop/py.typed",
    }


def test_the_sdist_is_compared_under_its_top_folder(tmp_path: Path) -> None:
    root = _tree(tmp_path, ["shop/__init__.py", "shop/static/app.js"])
    expected = files.tree_files(root, ["shop"])
    sdist = ["shop-1.0/shop/__init__.py", "shop-1.0/shop/static/app.js", "shop/static/app.js"]
    assert files.missing_from(sdist, expected, prefix="shop-1.0/") == []
    assert files.missing_from(sdist[:1], expected, prefix="shop-1.0/") == ["shop/static/app.js"]


def test_a_package_in_the_tree_that_pyproject_does_not_ship_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, ["shop/__init__.py", "newpart/__init__.py", "tests/__init__.py"])
    assert files.unlisted_packages(root, ["shop"]) == ["newpart"]


def test_a_listed_package_that_is_not_in_the_tree_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="gone"):
        files.tree_files(tmp_path, ["gone"])


def test_the_project_ships_every_top_level_package_of_the_tree() -> None:
    packages = files.shipped_packages(ROOT / "pyproject.toml")
    assert {"venue_station", "clock_service", "qizhong"} <= set(packages)
    assert files.unlisted_packages(ROOT, packages) == []
    shipped = files.tree_files(ROOT, packages)
    assert "venue_station/web/static/display.html" in shipped
    assert "venue_station/store/migrations/script.py.mako" in shipped


def test_every_folder_of_a_shipped_package_is_listed_in_pyproject() -> None:
    """A subpackage missing from ``[tool.setuptools] packages`` ships nothing (clock_service.xiangqi
    was once left out: an install outside the tree had no rules of xiangqi). Every folder under a
    listed top-level package that holds a file (caches aside) must be listed itself."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    tops = {name for name in listed if "." not in name}
    unlisted = []
    for top in sorted(tops):
        for folder in sorted(p for p in (ROOT / top).rglob("*") if p.is_dir()):
            if folder.name == "__pycache__" or "__pycache__" in folder.parts:
                continue
            if not any(f.is_file() for f in folder.iterdir()):
                continue
            name = ".".join(folder.relative_to(ROOT).parts)
            if name not in listed:
                unlisted.append(name)
    assert unlisted == [], (
        f"folders of shipped packages missing from pyproject's packages: {unlisted}"
    )
