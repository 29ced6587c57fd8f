"""One root error per package (gpiozero's ``exc`` pattern, in each package's ``errors.py``):
every exception a shipped package defines descends from its package's root, and the ones that
were ``ValueError`` (or ``RuntimeError``) before still are, so existing handlers keep working."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest
from test_import_rules import ROOT  # the same folder

ROOTS = {
    "clock_service": "ClockServiceError",
    "firmware_bridge": "FaceError",
    "wire_contract": "WireContractError",
    "board_nodes": "BoardNodeError",
    "venue_station": "StationError",
    "broker_config": "BrokerConfigError",
    "federation_hub": "FederationError",
    "qizhong": "QizhongError",
}

# What each was before it got a root: still so.
STILL = {
    "clock_service.clock.ClockError": ValueError,
    "clock_service.standings.StandingsError": ValueError,
    "clock_service.knockout.KnockoutError": ValueError,
    "clock_service.profile_table.RegulationError": ValueError,
    "clock_service.trf.records.TrfError": ValueError,
    "wire_contract.topics.WireError": ValueError,
    "wire_contract.bounds.PayloadBoundError": ValueError,
    "board_nodes.commands.CommandError": ValueError,
    "board_nodes.config.NodeConfigError": ValueError,
    "venue_station.auth.AuthError": ValueError,
    "qizhong.simulation.venue.VenueError": RuntimeError,
    "firmware_bridge.serial.codec.FrameError": ValueError,
}


def modules(package: str) -> list[str]:
    names = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        if "migrations" in rel.parts or rel.name == "__main__":
            continue  # alembic's scripts run inside alembic; __main__ would run the CLI
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names.append(".".join(parts))
    return names


def exceptions(package: str) -> dict[str, type[BaseException]]:
    found = {}
    for name in modules(package):
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
                and not attr.startswith("_")  # a private control-flow signal (a loop's stop)
            ):
                found[f"{name}.{attr}"] = value
    return found


@pytest.mark.parametrize("package", list(ROOTS))
def test_every_exception_of_a_package_descends_from_its_root(package: str) -> None:
    root = getattr(importlib.import_module(f"{package}.errors"), ROOTS[package])
    assert root.__bases__ == (Exception,), f"{root} is the root: it derives from Exception alone"
    found = exceptions(package)
    strays = sorted(name for name, cls in found.items() if not issubclass(cls, root))
    assert strays == [], f"not under {package}.errors.{ROOTS[package]}: {strays}"


def test_the_roots_are_distinct_and_each_in_its_errors_module() -> None:
    roots = [getattr(importlib.import_module(f"{p}.errors"), n) for p, n in ROOTS.items()]
    assert len(set(roots)) == len(roots)
    for package in ROOTS:
        assert (ROOT / package / "errors.py").is_file(), package


@pytest.mark.parametrize("dotted", list(STILL))
def test_what_was_a_value_error_still_is(dotted: str) -> None:
    module, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, STILL[dotted]), dotted


def test_the_check_finds_a_stray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "qz_sample"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("class SampleError(Exception):\n    pass\n")
    (pkg / "parts.py").write_text(
        "from qz_sample.errors import SampleError\n"
        "class Good(SampleError):\n    pass\n"
        "class Stray(ValueError):\n    pass\n"
        "class _Stop(Exception):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    found = exceptions("qz_sample")
    assert sorted(found) == [
        "qz_sample.errors.SampleError",
        "qz_sample.parts.Good",
        "qz_sample.parts.Stray",
    ]
    root = found["qz_sample.errors.SampleError"]
    assert [n for n, c in found.items() if not issubclass(c, root)] == ["qz_sample.parts.Stray"]
