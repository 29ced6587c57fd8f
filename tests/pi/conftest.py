"""tests/pi: the Pi in a box (``make pi-check``). Marked ``pi``; skipped unless chosen with
``-m pi``, because the roots take minutes to build and everything inside runs emulated."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from qizhong.deploy.bundle import build_bundle
from qizhong.deploy.piroot import MACHINES, PiRoot, ensure_root

pytestmark = pytest.mark.pi


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "pi" in (config.option.markexpr or ""):
        return  # chosen (make pi-check) or deselected by the expression itself
    skip = pytest.mark.skip(reason="the Pi in a box: run with make pi-check (pytest -m pi)")
    for item in items:
        if item.get_closest_marker("pi") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def pi_bundle() -> Iterator[Path]:
    """The offline bundle for both Pi CPUs, built once (PyPI is needed here, and only here)."""
    top = Path(tempfile.mkdtemp(prefix="qz-pi-bundle-"))
    try:
        report = build_bundle(top / "bundle", targets=MACHINES, host=False)
        yield report.dir
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module", params=MACHINES)
def pi_root(request: pytest.FixtureRequest) -> PiRoot:
    """The cached bookworm root of one Pi CPU (built now if its recipe changed)."""
    return ensure_root(request.param)
