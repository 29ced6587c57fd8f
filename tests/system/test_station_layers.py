"""The station's domain knows nothing of HTTP, and its web reads only through the store (issue 14).

- Every ``venue_station`` module is either the web (``WEB``: routes, auth on the wire, pages,
  exports over HTTP, SSE, the server) or the domain. A domain module imports nothing of
  Starlette, uvicorn or httpx and no web module, at any depth in the module (an import inside
  a function or under ``TYPE_CHECKING`` counts too): so the domain starts, runs and is tested
  without a web server, and the web is started beside it (``web_server.py``).
- No web module imports SQLAlchemy or ``venue_station.tables``: reads go through ``Store``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "venue_station"
WEB = {
    "access",
    "api",
    "api_action_models",
    "api_actions",
    "api_models",
    "bodies",
    "cli",  # the launcher: starts the web beside the domain
    "http_base",
    "knockout_flow",
    "openapi",
    "pages",
    "reasons_view",
    "round_clock",
    "standings_view",
    "text_bounds",
    "trf_view",
    "web_server",
}
# The domain named in the issue: each must stay out of WEB (a rename cannot hide one).
DOMAIN_CORE = {
    "station",
    "collector",
    "ingest",
    "ingest_writer",
    "store",
    "store_reads",
    "tables",
    "results",
    "alerts",
    "commands",
    "standings",
    "knockout",
    "trf_io",
}
HTTP_LIBRARIES = ("starlette", "uvicorn", "httpx", "fastapi")
SQL = ("sqlalchemy", "venue_station.tables")


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {p.stem: p for p in sorted(package.glob("*.py")) if p.stem != "__init__"}


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


def domain_violations(package: Path = PACKAGE) -> list[str]:
    web = tuple(f"venue_station.{m}" for m in WEB)
    out = []
    for name, path in modules(package).items():
        if name in WEB:
            continue
        for imported in sorted(imports_of(path)):
            if _is(imported, HTTP_LIBRARIES) or _is(imported, web):
                out.append(f"{name} imports {imported}")
    return out


def web_sql(package: Path = PACKAGE) -> list[str]:
    out = []
    for name, path in modules(package).items():
        if name in WEB:
            out += [f"{name} imports {i}" for i in sorted(imports_of(path)) if _is(i, SQL)]
    return out


def test_the_domain_imports_nothing_of_the_web() -> None:
    assert domain_violations() == []


def test_the_web_runs_no_sql_of_its_own() -> None:
    assert web_sql() == []


def test_the_named_domain_modules_exist_and_are_domain() -> None:
    present = set(modules())
    assert present >= DOMAIN_CORE, DOMAIN_CORE - present
    assert not DOMAIN_CORE & WEB
    assert {"web_server", "api", "standings_view", "knockout_flow"} <= present


def test_every_module_importing_starlette_is_web() -> None:
    """So a new route module must be listed in WEB (else the domain test names it)."""
    for name, path in modules().items():
        if any(_is(i, HTTP_LIBRARIES) for i in imports_of(path)):
            assert name in WEB, name


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    pkg = tmp_path / "venue_station"
    pkg.mkdir()
    (pkg / "station.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from venue_station.api import build_app\n"
        "def serve():\n    import uvicorn\n"
    )
    (pkg / "standings_view.py").write_text("import sqlalchemy as sa\n")
    (pkg / "ingest.py").write_text("from venue_station import http_base\n")
    assert domain_violations(pkg) == [
        "ingest imports venue_station.http_base",
        "station imports uvicorn",
        "station imports venue_station.api",
        "station imports venue_station.api.build_app",
    ]
    assert web_sql(pkg) == ["standings_view imports sqlalchemy"]
