"""Each part imports only what its README allows; the core imports nothing of the others."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARTS = (
    "clock_service",
    "firmware_bridge",
    "wire_contract",
    "board_nodes",
    "venue_station",
    "broker_config",
    "federation_hub",
)
ALLOWED: dict[str, set[str]] = {
    "clock_service": set(),
    "firmware_bridge": {"clock_service"},
    "wire_contract": set(),  # the contract belongs to neither side
    "board_nodes": {"clock_service", "firmware_bridge", "wire_contract"},
    "venue_station": {"clock_service", "wire_contract", "broker_config.roster"},
    "broker_config": {"clock_service"},
    "federation_hub": {"clock_service", "wire_contract"},  # the pure core: standings
}


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if "." in node.module:
                found.add(node.module)
            else:  # `from wire_contract import messages` imports wire_contract.messages
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def violations(part: str) -> list[str]:
    out = []
    for path in sorted((ROOT / part).rglob("*.py")):
        for name in imports_of(path):
            top = name.split(".")[0]
            if top == part or top not in (*PARTS, "qizhong"):
                continue
            allowed = ALLOWED[part]
            if top in allowed or any(name == a or name.startswith(a + ".") for a in allowed):
                continue
            out.append(f"{path.relative_to(ROOT)} imports {name}")
    return out


@pytest.mark.parametrize("part", PARTS)
def test_a_part_imports_only_what_it_may(part: str) -> None:
    assert violations(part) == []


def test_the_rule_sees_a_forbidden_import(tmp_path: Path, monkeypatch) -> None:
    fake = tmp_path / "clock_service"
    fake.mkdir()
    bad = "from venue_station.store.database import Store\nimport board_nodes\n"
    (fake / "bad.py").write_text(bad)
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert sorted(violations("clock_service")) == [
        "clock_service/bad.py imports board_nodes",
        "clock_service/bad.py imports venue_station.store.database",
    ]
