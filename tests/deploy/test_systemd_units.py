"""deploy/systemd: every unit passes `systemd-analyze verify`, and says what issue 8 asks."""

from __future__ import annotations

import configparser
import shutil
from pathlib import Path

import pytest
from support.deploy import SYSTEMD_DIR, run
from support.parts import needs_part

ANALYZE = shutil.which("systemd-analyze")
needs_analyze = needs_part(ANALYZE is None, "systemd-analyze", "apt-get install systemd")
INSTALLED = "/opt/qizhong/venv/bin/qizhong"


def _units(tmp_path: Path, *, binary: Path | None = None) -> Path:
    """A copy of deploy/systemd whose ExecStart names a qizhong that exists (verify needs it)."""
    copy = tmp_path / "units"
    shutil.copytree(SYSTEMD_DIR, copy)
    if binary is None:
        binary = tmp_path / "bin" / "qizhong"
        binary.parent.mkdir(parents=True, exist_ok=True)
        binary.write_text("#!/bin/sh\nexit 0\n")
        binary.chmod(0o755)
    for unit in copy.glob("*.service"):
        unit.write_text(unit.read_text().replace(INSTALLED, str(binary)))
    return copy


def _verify(directory: Path, *names: str):
    env = {"SYSTEMD_UNIT_PATH": f"{directory}:", "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
    return run([ANALYZE or "systemd-analyze", "verify", *names], env=env, cwd=directory)


def _service(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(SYSTEMD_DIR / name)
    return parser


@needs_analyze
@pytest.mark.parametrize("unit", ["qizhong-node.service", "qizhong-station.service"])
def test_unit_verifies_cleanly(tmp_path: Path, unit: str) -> None:
    proc = _verify(_units(tmp_path), unit)
    # verify returns 0 with warnings ("Unknown key ... ignoring"): any output is a failure.
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr


@needs_analyze
def test_verify_catches_a_missing_binary_and_a_bad_key(tmp_path: Path) -> None:
    units = _units(tmp_path, binary=tmp_path / "nowhere" / "qizhong")
    proc = _verify(units, "qizhong-node.service")
    assert proc.returncode != 0 and "nowhere/qizhong" in proc.stderr
    good = _units(tmp_path / "second")
    node = good / "qizhong-node.service"
    node.write_text(node.read_text().replace("Restart=always", "Restart=always\nWatchdogSecs=3"))
    assert "Unknown key" in _verify(good, "qizhong-node.service").stderr


@needs_analyze
@needs_part(not Path("/usr/sbin/mosquitto").exists(), "mosquitto", "apt-get install mosquitto")
def test_mosquitto_drop_in_is_loaded_and_verifies(tmp_path: Path) -> None:
    units = _units(tmp_path)
    (units / "mosquitto.service").write_text(
        "[Unit]\nDescription=Mosquitto (as Debian packages it)\n\n[Service]\nType=notify\n"
        "NotifyAccess=main\nExecStart=/usr/sbin/mosquitto -c /etc/mosquitto/mosquitto.conf\n"
    )
    proc = _verify(units, "mosquitto.service")
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr
    # The drop-in is really read: a second ExecStart in it makes the unit invalid.
    dropin = units / "mosquitto.service.d" / "qizhong.conf"
    dropin.write_text(dropin.read_text().replace("ExecStart=\n", ""))
    assert "more than one ExecStart" in _verify(units, "mosquitto.service").stderr


def test_node_unit_is_a_watched_hardened_notify_service() -> None:
    unit = _service("qizhong-node.service")
    svc = unit["Service"]
    assert svc["Type"] == "notify" and svc["NotifyAccess"] == "main"
    assert svc["WatchdogSec"].rstrip("s").isdigit()
    assert svc["Restart"] == "always" and unit["Unit"]["StartLimitIntervalSec"] == "0"
    assert svc["User"] == "qizhong" and svc["StateDirectory"] == "qizhong"
    assert set(svc["SupplementaryGroups"].split()) == {"gpio", "spi", "dialout"}
    for key, value in {
        "ProtectSystem": "strict",
        "NoNewPrivileges": "yes",
        "PrivateTmp": "yes",
        "ProtectHome": "yes",
    }.items():
        assert svc[key] == value, key
    # The node drives real devices: PrivateDevices would hide /dev/gpiochip0 and /dev/spidev0.0.
    assert "PrivateDevices" not in svc
    assert svc["ExecStart"] == f"{INSTALLED} node --config /etc/qizhong/node.toml"


def test_station_unit_follows_mosquitto_and_the_drop_in_replaces_execstart() -> None:
    svc = _service("qizhong-station.service")
    assert "mosquitto.service" in svc["Unit"]["After"]
    assert svc["Service"]["ExecStart"].endswith("station --config /etc/qizhong/station.toml")
    lines = (SYSTEMD_DIR / "mosquitto.service.d" / "qizhong.conf").read_text().splitlines()
    execs = [x for x in lines if x.startswith("ExecStart=")]
    assert execs == [
        "ExecStart=",
        "ExecStart=/usr/sbin/mosquitto -c /etc/qizhong/broker/mosquitto.conf",
    ]
