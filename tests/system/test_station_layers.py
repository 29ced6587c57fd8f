"""The station's layers are its folders (issues 14 and 24).

``venue_station`` is built in wings (``venue_station.WINGS``, top down: web, domain, intake,
live, store), each a folder, on the ground of the package root. The rules, read from the tree:

- A module imports its own wing and the wings below it, never one above; a root module (the
  ground: errors, config, auth, resources) imports no wing. Every import counts, at any depth in
  the module (an import inside a function or under ``TYPE_CHECKING`` too).
- Only the web imports Starlette, uvicorn or httpx: the domain starts, runs and is tested without
  a web server, and the web is started beside it (``web/web_server.py``).
- No web module imports SQLAlchemy or the store's tables: reads go through ``Store``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "venue_station"
HTTP_LIBRARIES = ("starlette", "uvicorn", "httpx", "fastapi")
SQL = ("sqlalchemy", "venue_station.store.tables")
GROUND = ""  # the wing of a module in the package root


def wings(package: Path = PACKAGE) -> tuple[str, ...]:
    """``WINGS`` as the package's ``__init__.py`` writes it (read, not imported)."""
    for node in ast.parse((package / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "WINGS" for t in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError(f"{package}/__init__.py sets no WINGS")


def modules(package: Path = PACKAGE) -> dict[str, tuple[str, Path]]:
    """dotted name below the package -> (its wing, its file), for every module."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if rel.parts[0] in ("migrations",) or "migrations" in rel.parts:
            continue  # alembic's scripts, run by alembic, import nothing of ours
        if rel.name == "__init__.py" and len(rel.parts) == 1:
            continue
        wing = rel.parts[0] if len(rel.parts) > 1 else GROUND
        name = ".".join(rel.with_suffix("").parts)
        out[name] = (wing, path)
    return out


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (``from a import b`` also as ``a.b``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _is(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def wing_of_import(name: str, order: tuple[str, ...]) -> str | None:
    """The wing a ``venue_station`` import lands in (GROUND for the root), None if not ours."""
    parts = name.split(".")
    if parts[0] != "venue_station" or len(parts) == 1:
        return None
    return parts[1] if parts[1] in order else GROUND


def layer_violations(package: Path = PACKAGE) -> list[str]:
    order = wings(package)
    floor = {w: i for i, w in enumerate(order)}
    floor[GROUND] = len(order)
    out = []
    for name, (wing, path) in modules(package).items():
        if wing not in floor:
            out.append(f"{name} is in a folder that is no wing: {wing}")
            continue
        for imported in sorted(imports_of(path)):
            target = wing_of_import(imported, order)
            if target is None or target == wing:
                continue
            if floor[target] < floor[wing]:
                out.append(f"{name} ({wing or 'root'}) imports {imported} ({target or 'root'})")
    return out


def http_outside_web(package: Path = PACKAGE) -> list[str]:
    out = []
    for name, (wing, path) in modules(package).items():
        if wing != "web":
            found = sorted(imports_of(path))
            out += [f"{name} imports {i}" for i in found if _is(i, HTTP_LIBRARIES)]
    return out


def web_sql(package: Path = PACKAGE) -> list[str]:
    out = []
    for name, (wing, path) in modules(package).items():
        if wing == "web":
            out += [f"{name} imports {i}" for i in sorted(imports_of(path)) if _is(i, SQL)]
    return out


def test_no_import_runs_back_up_the_wings() -> None:
    assert layer_violations() == []


def test_only_the_web_speaks_http() -> None:
    assert http_outside_web() == []


def test_the_web_runs_no_sql_of_its_own() -> None:
    assert web_sql() == []


def test_every_wing_is_a_folder_with_a_readme_line() -> None:
    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    for wing in wings():
        assert (PACKAGE / wing / "__init__.py").is_file(), wing
        assert f"`{wing}/`" in readme, f"README.md says nothing of {wing}/"


def test_the_named_rooms_are_where_the_issue_put_them() -> None:
    where = {name: wing for name, (wing, _) in modules().items()}
    assert where["domain.station"] == "domain"
    assert where["web.web_server"] == "web" and where["web.api"] == "web"
    assert where["intake.collector"] == "intake" and where["intake.ingest"] == "intake"
    assert where["store.database"] == "store" and where["store.tables"] == "store"


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    pkg = tmp_path / "venue_station"
    for wing in ("web", "domain", "intake", "store"):
        (pkg / wing).mkdir(parents=True)
        (pkg / wing / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text('WINGS = ("web", "domain", "intake", "store")\n')
    (pkg / "domain" / "station.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from venue_station.web.api import build_app\n"
        "def serve():\n    import uvicorn\n"
    )
    (pkg / "web" / "standings_view.py").write_text("import sqlalchemy as sa\n")
    (pkg / "intake" / "ingest.py").write_text("from venue_station.web import http_base\n")
    (pkg / "errors.py").write_text("from venue_station.store import tables\n")
    (pkg / "stray").mkdir()
    (pkg / "stray" / "x.py").write_text("")
    assert layer_violations(pkg) == [
        "domain.station (domain) imports venue_station.web.api (web)",
        "domain.station (domain) imports venue_station.web.api.build_app (web)",
        "errors (root) imports venue_station.store (store)",
        "errors (root) imports venue_station.store.tables (store)",
        "intake.ingest (intake) imports venue_station.web (web)",
        "intake.ingest (intake) imports venue_station.web.http_base (web)",
        "stray.x is in a folder that is no wing: stray",
    ]
    assert http_outside_web(pkg) == ["domain.station imports uvicorn"]
    assert web_sql(pkg) == ["web.standings_view imports sqlalchemy"]
