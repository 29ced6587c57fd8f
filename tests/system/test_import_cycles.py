"""No package's modules import each other in a circle (issue 14).

Every import counts, also one inside a function (that only hides a circle); only an import under
``if TYPE_CHECKING:`` does not, since it never runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "clock_service",
    "firmware_bridge",
    "wire_contract",
    "board_nodes",
    "broker_config",
    "qizhong",
    "venue_station",
    "federation_hub",
)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(path: Path, root: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports when it runs (at any depth)."""
    name = module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return (found & known) - {name}


def cycles(package: str, root: Path = ROOT) -> list[list[str]]:
    """The import circles within ``package``: each strongly connected set of its modules."""
    files = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
    graph = {m: sorted(runtime_imports(p, root, set(files))) for m, p in files.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: list[str] = []
            while not group or group[-1] != v:
                group.append(stack.pop())
            if len(group) > 1:
                out.append(sorted(group))

    for v in graph:
        if v not in index:
            connect(v)
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_within_a_package(package: str) -> None:
    assert cycles(package) == []


def test_a_cycle_is_found_even_when_hidden_in_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import x\n")
    (pkg / "b.py").write_text("def f():\n    from pkg import a\nx = 1\n")
    (pkg / "c.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    import pkg.a\n")
    (pkg / "d.py").write_text("from . import c\n")
    assert cycles("pkg", tmp_path) == [["pkg.a", "pkg.b"]]
