"""The files the code opens at run time resolve inside the installed package (issue 19).

No module that ships builds a path from ``__file__`` (it only holds in a source tree: the
editable install hid a wheel without pages); the station finds its pages and migrations through
``importlib.resources`` and refuses, with a clear error, an install that lacks them.
"""

from __future__ import annotations

import ast
import importlib.resources
import importlib.util
import sys
from pathlib import Path

import pytest

from venue_station import resources
from venue_station.errors import StationError

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("qizhong", "clock_service", "firmware_bridge", "wire_contract", "board_nodes",
           "venue_station", "broker_config")  # fmt: skip
# Builds the wheel from a source checkout (``qizhong deploy bundle``): the tree is its input.
MAY_USE_FILE = {"qizhong/deploy/bundle.py"}


def _uses_file(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(tree))


def test_no_shipped_module_builds_a_path_from_dunder_file() -> None:
    offenders = [
        rel
        for part in SHIPPED
        for path in sorted((ROOT / part).rglob("*.py"))
        if (rel := path.relative_to(ROOT).as_posix()) not in MAY_USE_FILE and _uses_file(path)
    ]
    assert offenders == [], f"load run-time files through importlib.resources: {offenders}"


def test_the_pages_folder_is_the_package_resource_and_holds_every_page() -> None:
    folder = resources.static_dir()
    assert folder == importlib.resources.files("venue_station.web") / "static"
    for page in ("display.html", "board.html", "arbiter.html", "standings.html"):
        assert (folder / page).is_file(), page


def test_every_asset_a_page_references_is_in_the_pages_folder() -> None:
    spec = importlib.util.spec_from_file_location("package_pages", ROOT / "tools/package_pages.py")
    assert spec is not None and spec.loader is not None
    pages = importlib.util.module_from_spec(spec)
    sys.modules["package_pages"] = pages
    spec.loader.exec_module(pages)
    folder = resources.static_dir()
    for page in resources.PAGES:
        assets = pages.referenced_assets((folder / page).read_text(encoding="utf-8"))
        assert assets, page
        for asset in assets:
            assert asset.startswith("/static/"), (page, asset)
            assert (folder / asset.removeprefix("/static/")).is_file(), (page, asset)


def test_the_migrations_folder_is_the_package_resource() -> None:
    folder = resources.migrations_dir()
    assert folder == importlib.resources.files("venue_station.store.migrations")
    assert (folder / "script.py.mako").is_file() and (folder / "env.py").is_file()


@pytest.fixture
def half_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package on sys.path as a broken install leaves it: a static folder lacking a page."""
    pkg = tmp_path / "qz_half_installed"
    (pkg / "static").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "static" / "display.html").write_text("<!doctype html>")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    sys.modules.pop("qz_half_installed", None)


def test_an_install_without_its_pages_is_refused_with_what_is_missing(half_installed) -> None:
    with pytest.raises(resources.ResourceError, match=r"qz_half_installed/static .*board.html"):
        resources._folder("qz_half_installed", "static", resources.PAGES)
    with pytest.raises(StationError, match=r"qz_half_installed/nothing: not a folder"):
        resources._folder("qz_half_installed", "nothing", ())


def test_every_bundled_profile_is_a_package_resource_and_loads() -> None:
    from clock_service.regulation import BUNDLED, Regulation

    for name in BUNDLED:
        assert (importlib.resources.files("clock_service.profiles") / f"{name}.toml").is_file()
        assert Regulation.load(name).name


def test_a_bundled_profile_missing_from_the_install_is_a_clear_error(monkeypatch) -> None:
    from clock_service import regulation

    monkeypatch.setattr(regulation, "BUNDLED", (*regulation.BUNDLED, "lost-2099"))
    with pytest.raises(regulation.RegulationError, match=r"lost-2099: .*not installed"):
        regulation.Regulation.load("lost-2099")
