"""The offline bundle: built for this machine in CI (the Pi targets when QZ_BUNDLE_CROSS=1),
and installable with no index at all."""

from __future__ import annotations

import json
import os
import platform
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from support.deploy import host_bundle, run

from qizhong.deploy.bundle import (
    REQUIREMENTS,
    BundleError,
    build_bundle,
    build_project_wheel,
    machine_only_dependencies,
    requirements_for,
    wheels_for,
)

pytestmark = pytest.mark.slow  # the first build downloads from PyPI (~15 s, pip-cached)


def _resolve_offline(bundle: Path, tmp_path: Path) -> dict:
    report = tmp_path / "report.json"
    proc = run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed",
         "--no-index", "--find-links", str(bundle), "--report", str(report), "--quiet",
         "qizhong"],
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(report.read_text())


def test_host_bundle_installs_with_no_index(tmp_path: Path) -> None:
    bundle = host_bundle()
    manifest = json.loads((bundle / "bundle.json").read_text())
    assert manifest["project_wheel"].startswith("qizhong-0.") and manifest["python"] == "3.11"
    assert (bundle / manifest["project_wheel"]).exists()
    resolved = _resolve_offline(bundle, tmp_path)["install"]
    names = {i["metadata"]["name"].lower().replace("_", "-") for i in resolved}
    assert {"qizhong", "aiomqtt", "pydantic", "pydantic-core", "gpiozero", "sqlalchemy"} <= names
    # The per-machine archive the playbook unpacks holds exactly this machine's wheels.
    machine = platform.machine()
    archive = bundle / manifest["archives"][machine]
    with tarfile.open(archive) as tar:
        inside = sorted(tar.getnames())
        pins = tar.extractfile(REQUIREMENTS).read().decode().split()  # type: ignore[union-attr]
    assert inside == sorted([p.name for p in wheels_for(bundle, machine)] + [REQUIREMENTS])
    inside.remove(REQUIREMENTS)
    assert manifest["project_wheel"] in inside
    # The playbook installs exactly these pins (--no-deps): every resolved package, one each.
    norm = {n.replace(".", "-") for n in names}
    assert {p.split("==")[0].lower().replace("_", "-").replace(".", "-") for p in pins} == norm
    # And the pins alone install, with no index and no dependency resolution.
    report = tmp_path / "pins.json"
    (tmp_path / "req.txt").write_text("\n".join(pins))
    proc = run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps",
         "--no-index", "--find-links", str(bundle), "--report", str(report), "--quiet",
         "-r", str(tmp_path / "req.txt")],
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert all(n.endswith("-any.whl") or f"_{machine}" in n for n in inside)
    # Issue 19: the bundle's wheel once held every module and not one page.
    with zipfile.ZipFile(bundle / manifest["project_wheel"]) as wheel:
        files = set(wheel.namelist())
    for page in ("display", "board", "arbiter", "standings"):
        assert f"venue_station/web/static/{page}.html" in files
    assert {"venue_station/web/static/display.js", "venue_station/web/static/style.css"} <= files
    assert "venue_station/store/migrations/script.py.mako" in files
    assert "clock_service/profiles/meishan-2016.toml" in files


def test_wheels_for_picks_pure_and_own_machine(tmp_path: Path) -> None:
    for name in [
        "a-1-py3-none-any.whl",
        "b-1-cp311-cp311-manylinux2014_aarch64.manylinux_2_17_aarch64.whl",
        "b-1-cp311-cp311-manylinux2014_armv7l.whl",
        "b-1-cp311-cp311-linux_armv7l.whl",
        "b-1-cp311-cp311-manylinux_2_28_x86_64.whl",
    ]:
        (tmp_path / name).touch()
    assert [p.name for p in wheels_for(tmp_path, "armv7l")] == [
        "a-1-py3-none-any.whl",
        "b-1-cp311-cp311-linux_armv7l.whl",
        "b-1-cp311-cp311-manylinux2014_armv7l.whl",
    ]
    assert len(wheels_for(tmp_path, "aarch64")) == 2


def _fake_wheel(folder: Path, name: str, requires: list[str]) -> None:
    dist = name.split("-")[0] + "-" + name.split("-")[1]
    meta = "Metadata-Version: 2.1\nName: x\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    with zipfile.ZipFile(folder / name, "w") as zf:
        zf.writestr(f"{dist}.dist-info/METADATA", meta)


def test_dependencies_only_a_pi_wants_are_found_from_the_wheels(tmp_path: Path) -> None:
    # What luma.led_matrix does: a dependency the x86 host's resolution never sees.
    _fake_wheel(tmp_path, "luma_led_matrix-1.9.0-py2.py3-none-any.whl", [
        "luma.core>=2.4.0",
        'rpi_ws281x; platform_machine == "armv7l" and platform_system == "Linux"',
        'sphinx>=1.5.1; extra == "docs"',
    ])  # fmt: skip
    _fake_wheel(tmp_path, "greenlet-3-cp311-cp311-manylinux_2_28_aarch64.whl",
                ['pytest; platform_machine == "aarch64" and extra == "test"'])  # fmt: skip
    pins = ["luma.core==2.6.0", "luma_led_matrix==1.9.0"]
    assert machine_only_dependencies(tmp_path, "armv7l", pins) == ["rpi_ws281x"]
    assert machine_only_dependencies(tmp_path, "aarch64", pins) == []


def test_requirements_leave_out_what_the_machine_lacks() -> None:
    pins = ["cbor2==6.3.0", "Pillow==13.0.0", "pydantic==2.14.4", "RPi.GPIO==0.7.1"]
    text = requirements_for(pins, "qizhong==0.1.0", ["cbor2==6.3.0", "pillow", "rpi_gpio"])
    assert text.split() == ["qizhong==0.1.0", "pydantic==2.14.4"]


def test_a_folder_that_is_not_a_source_checkout_is_refused(tmp_path: Path) -> None:
    # What an installed qizhong (site-packages, no pyproject.toml) would hand the builder.
    with pytest.raises(BundleError, match=r"not a qizhong source checkout.*pyproject.toml"):
        build_project_wheel(tmp_path / "out", source=tmp_path)


def test_unknown_target_is_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="unknown target 'riscv64'"):
        build_bundle(tmp_path / "b", targets=("riscv64",))
    assert not (tmp_path / "b").exists()


@pytest.mark.skipif(
    os.environ.get("QZ_BUNDLE_CROSS") != "1",
    reason="the Pi targets download ~40 MB and take about a minute: QZ_BUNDLE_CROSS=1",
)
def test_cross_bundle_for_the_pis(tmp_path: Path) -> None:
    report = build_bundle(tmp_path / "b", targets=("aarch64", "armv7l"), host=False)
    manifest = json.loads((report.dir / "bundle.json").read_text())
    assert set(manifest["archives"]) == {"aarch64", "armv7l"}
    wheels = manifest["wheels"]
    for machine in ("aarch64", "armv7l"):
        # The compiled core of the wire models must be there for both Pis.
        assert any(w.startswith("pydantic_core-") and machine in w for w in wheels), machine
    assert any(w.startswith("lgpio-") and "aarch64" in w for w in wheels)
    # What PyPI lacks is said, not silently dropped (armv7 pillow lives on piwheels).
    assert "spidev" in manifest["missing"]["aarch64"]
    assert any(m.startswith("pillow") for m in manifest["missing"]["armv7l"])
    # Only armv7l's markers want rpi_ws281x (luma.led_matrix); PyPI has no armv7 wheel of it.
    assert "rpi_ws281x" in manifest["missing"]["armv7l"]
    assert "rpi_ws281x" not in manifest["missing"]["aarch64"]
