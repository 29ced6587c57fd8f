"""No shipped module reaches a library's private name, except the one adapter module per
library listed here (each says which private, why, and what replaces it; each has a test that
pins the behaviour relied on).

What counts as reaching a library's private (``_name``, not a dunder), outside the adapters:
- importing one: ``from lib import _x``, ``import lib._x``, ``from lib._x import …``;
- ``obj._name`` or ``getattr(obj, "_name")`` on anything but ``self``/``cls``, where
  ``_name`` is not a name the project itself defines, or is one of the privates the adapters
  wrap (:data:`WRAPPED`), which the project must not reach around them;
- a class of ours overriding a ``_name`` its library base class has.
Our own privates reached across our own objects are not this test's business; a few names
the libraries document as public despite the underscore are allowed (:data:`PUBLIC`).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator

from test_import_rules import PARTS, ROOT  # the same folder: the parts the rules know

SHIPPED = (*PARTS, "qizhong")

ADAPTERS = {
    "wire_contract/aiomqtt_adapter.py": "aiomqtt (and paho under it)",
    "qizhong/deploy/pip_adapter.py": "pip (its vendored packaging)",
}

# Underscored but public by the library's own documentation.
PUBLIC = {
    "_mapping",  # sqlalchemy Row._mapping
    "_fields",  # namedtuple
    "_asdict",
    "_replace",
    "_make",
    "_exit",  # os._exit
}

# The privates the adapters wrap: named here because the project has privates of the same
# name of its own (a collector's ``self._client``), so "not defined by us" would miss them.
WRAPPED = {
    "_client",
    "_queue",
    "_wait_for",
    "_loop",
    "_disconnected",
    "_on_socket_open",
    "_on_socket_register_write",
    "_selector",
    "_callback",
    "_args",
    "_sock",
    "_vendor",
}

# Our own objects whose privates share a wrapped name (file → names).
OWN = {
    "firmware_bridge/selftest.py": {"_queue"},  # GpioFace's event queue
    "firmware_bridge/selftest_serial.py": {"_queue"},  # SerialFace's event queue
    "firmware_bridge/serial/face.py": {"_disconnected"},  # SerialFace's own event
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def shipped_files() -> Iterator[tuple[str, ast.Module]]:
    for part in SHIPPED:
        for path in sorted((ROOT / part).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def defined_names(trees: list[ast.Module]) -> set[str]:
    """Every private name the project defines: functions, classes, attributes it assigns,
    arguments, module and class names."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)  # dataclass(field=...) and models' private attributes
    return {n for n in names if _private(n)}


def _is_self(node: ast.expr) -> bool:
    if isinstance(node, ast.Name) and node.id in {"self", "cls"}:
        return True
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _ours(module: str) -> bool:
    return module.split(".")[0] in SHIPPED


def reaches(rel: str, tree: ast.Module, ours: set[str]) -> list[str]:
    """What ``tree`` reaches of a library's private parts, as ``file:line: what``."""
    own = OWN.get(rel, set())
    found = []

    def private_use(node: ast.AST, name: str) -> None:
        if name in PUBLIC or name in own:
            return
        if name in WRAPPED or name not in ours:
            found.append(f"{rel}:{node.lineno}: .{name}")  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not _ours(node.module):
            if node.level == 0 and any(_private(p) for p in node.module.split(".")):
                found.append(f"{rel}:{node.lineno}: from {node.module}")
            found += [
                f"{rel}:{node.lineno}: import {a.name}" for a in node.names if _private(a.name)
            ]
        elif isinstance(node, ast.Import):
            found += [
                f"{rel}:{node.lineno}: import {a.name}"
                for a in node.names
                if not _ours(a.name) and any(_private(p) for p in a.name.split("."))
            ]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and not _is_self(node.value):
            private_use(node, node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "setattr", "hasattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            private_use(node, node.args[1].value)
    return found


def overrides(rel: str, tree: ast.Module) -> list[str]:
    """Methods ``_name`` of our classes that override a ``_name`` of a library base class."""
    if not any(isinstance(n, ast.ClassDef) and n.bases for n in ast.walk(tree)):
        return []  # nothing inherits here (and a migration script must not be imported)
    module = importlib.import_module(rel.removesuffix(".py").replace("/", "."))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        cls = getattr(module, node.name, None)
        if not isinstance(cls, type):
            continue  # a class made inside a function
        bases = [b for b in cls.__mro__[1:] if b is not object and not _ours(b.__module__)]
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _private(item.name):
                hits = [b for b in bases if item.name in vars(b)]
                found += [
                    f"{rel}:{item.lineno}: {node.name}.{item.name} overrides "
                    f"{b.__module__}.{b.__qualname__}.{item.name}"
                    for b in hits
                ]
    return found


def test_no_module_reaches_a_library_private_outside_its_adapter() -> None:
    files = list(shipped_files())
    ours = defined_names([tree for _, tree in files]) - WRAPPED
    found = [
        hit
        for rel, tree in files
        if rel not in ADAPTERS
        for hit in reaches(rel, tree, ours) + overrides(rel, tree)
    ]
    assert found == [], (
        "a library's private name outside its adapter module (put it in the library's adapter, "
        "with a pinning test, or use public API):\n" + "\n".join(found)
    )


def test_the_adapters_are_where_the_privates_are() -> None:
    """Each listed adapter exists, says in its docstring why, and does reach a private (an
    adapter left with nothing to wrap is to be removed from the list)."""
    files = dict(shipped_files())
    ours = defined_names(list(files.values())) - WRAPPED
    for rel, library in ADAPTERS.items():
        assert rel in files, f"{rel} ({library}) is gone: remove it from ADAPTERS"
        doc = ast.get_docstring(files[rel]) or ""
        assert "private" in doc and "replace" in doc, (
            f"{rel}: say which private, why, what replaces it"
        )
        assert reaches(rel, files[rel], ours) or overrides(rel, files[rel]), rel


def test_the_scan_sees_each_way_of_reaching() -> None:
    sample = ast.parse(
        "import aiomqtt\n"
        "from pip._vendor.packaging import requirements\n"
        "from asyncio import _get_running_loop\n"
        "def f(client, loop):\n"
        "    client._client.ack(1, 1)\n"
        "    getattr(loop, '_selector', None)\n"
        "    handle._callback\n"
        "    self._client = 1\n"
        "    row._mapping\n"
    )
    hits = reaches("sample.py", sample, ours={"_mine"})
    assert sorted(h.split(": ", 1)[1] for h in hits) == [
        "._callback",
        "._client",
        "._selector",
        "from pip._vendor.packaging",
        "import _get_running_loop",
    ], hits
    assert reaches("sample.py", ast.parse("def f(o):\n    o._mine()\n"), ours={"_mine"}) == []


def test_the_scan_sees_an_override_of_a_library_private() -> None:
    rel = "wire_contract/aiomqtt_adapter.py"
    tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
    names = sorted(hit.split(".")[-1] for hit in overrides(rel, tree))
    assert names == ["_on_publish", "_on_socket_open", "_on_socket_register_write", "_wait_for"], (
        names
    )
