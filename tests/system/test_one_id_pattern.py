"""One id pattern: wire_contract.topics.ID_PATTERN is the contract's id (venue, node, board,
account); the modules that check an id import it rather than type the regex again. The copies
left are listed with why they cannot import it yet."""

from __future__ import annotations

import ast

from test_import_rules import ROOT  # the same folder
from test_timed_waits import SHIPPED

from wire_contract.topics import ID_PATTERN

OWNER = "wire_contract/topics.py"
SHAPE = "[A-Za-z0-9_-]{1,32}"
LEFT = {
    # broker_config may not import wire_contract (tests/system/test_import_rules.py)
    "broker_config/roster.py",
    "broker_config/screens.py",
    "broker_config/bridge.py",
    "clock_service/regulation.py",  # a profile's name, in the pure core (standard library only)
    "venue_station/web/pages.py",  # edited on a parallel branch: to import it after the merge
}


def copies() -> list[str]:
    found = []
    for part in SHIPPED:
        for path in sorted((ROOT / part).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and SHAPE in str(node.value):
                    found.append(rel)
    return sorted(set(found))


def test_only_the_owner_and_the_listed_copies_type_the_id_regex() -> None:
    assert SHAPE in ID_PATTERN
    found = set(copies()) - {OWNER}
    assert found - LEFT == set(), f"import wire_contract.topics.ID_PATTERN instead: {found - LEFT}"
    assert LEFT - found == set(), f"no copy left in {LEFT - found}: remove it from LEFT"


def test_the_station_config_checks_ids_with_the_contracts_pattern() -> None:
    from venue_station.config import StationConfig

    schema = StationConfig.model_json_schema()
    assert schema["properties"]["venue"]["pattern"] == ID_PATTERN
