"""Session-wide test fixtures.

Shared helpers live in ``tests/support`` (import them as ``support.…``); each area's tests
live in ``tests/<area>/`` with file names unique across the whole tree.
"""

from __future__ import annotations

import logging

import pytest

pytest_plugins = ["support.plugins"]


class _ErrorCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def fail_on_error_log(request: pytest.FixtureRequest):
    """Fail any test that logs at ERROR or above, unless marked ``allow_error_log``."""
    collector = _ErrorCollector()
    root = logging.getLogger()
    root.addHandler(collector)
    try:
        yield collector
    finally:
        root.removeHandler(collector)
    if collector.records and request.node.get_closest_marker("allow_error_log") is None:
        lines = "\n".join(f"{r.name}: {r.getMessage()}" for r in collector.records[:10])
        pytest.fail(f"the test logged {len(collector.records)} ERROR record(s):\n{lines}")
