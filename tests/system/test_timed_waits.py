"""No shipped code waits with ``asyncio.wait_for``.

On Python 3.11 (the Pi's bookworm and this project's floor) ``wait_for`` can lose a cancellation
that arrives as the awaited thing completes: a node's stop hung on it once, a hub ignored
SIGTERM for 10 minutes. ``async with asyncio.timeout(...)`` does not (docs/station.md, "timed
waits"). The one place that must name it is
``wire_contract.aiomqtt_adapter.CancellableClient``, which overrides aiomqtt's own ``_wait_for``
with a safe one.
"""

from __future__ import annotations

import ast

from test_import_rules import PARTS, ROOT  # the same folder: the parts the rules know

SHIPPED = (*PARTS, "qizhong")


def wait_for_calls(source: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "wait_for":
                if isinstance(f.value, ast.Name) and f.value.id == "asyncio":
                    lines.append(node.lineno)
            elif isinstance(f, ast.Name) and f.id == "wait_for":
                lines.append(node.lineno)
    return lines


def test_the_check_sees_both_spellings() -> None:
    head = "async def f(x):\n    "
    assert wait_for_calls(head + "await asyncio.wait_for(x, 1)\n")
    assert wait_for_calls(head + "await wait_for(x, 1)\n")
    assert not wait_for_calls(head + "async with asyncio.timeout(1):\n        await x\n")


def test_no_shipped_module_waits_with_asyncio_wait_for() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for part in SHIPPED
        for path in sorted((ROOT / part).rglob("*.py"))
        for line in wait_for_calls(path.read_text(encoding="utf-8"))
    ]
    assert found == [], f"asyncio.wait_for can lose a cancel on 3.11; use asyncio.timeout: {found}"
