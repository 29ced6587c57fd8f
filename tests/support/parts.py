"""Skips for a missing real part, and the CI rule: under ``CI=true`` such a skip fails the run.

A test that needs a part of the machine (a program, a package, a font, root for namespaces)
says so through this module, never with a bare ``pytest.skip``:

- ``skip_missing(part, hint)`` inside a test or fixture;
- ``@needs_part(missing, part, hint)`` as a mark (a ``skipif`` with the same reason).

Both word the reason ``missing part: <part> (<hint>)``. Off CI that is an ordinary skip (a
laptop without chromium still runs the rest); with ``CI=true`` the report of such a skip is
turned into a failure, so CI cannot be a green run that tested less. ``make test`` brings the
parts up first (tools/bring_up.py). Deliberate skips (the long form behind ``--chaos-long``,
``QZ_BUNDLE_CROSS``, the ``pi`` marker, a parameter a backend cannot test, a host CPU the
filter does not know) use plain ``pytest.skip`` and stay skips everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import NoReturn

import pytest

__all__ = ["MISSING", "ci", "needs_part", "skip_missing"]

MISSING = "missing part: "


def _reason(part: str, hint: str) -> str:
    return f"{MISSING}{part} ({hint})"


def skip_missing(part: str, hint: str) -> NoReturn:
    """Skip this test: ``part`` is not on this machine; ``hint`` says how to get it."""
    pytest.skip(_reason(part, hint))


def needs_part(missing: bool, part: str, hint: str) -> pytest.MarkDecorator:
    """A ``skipif`` mark for a test that needs ``part`` (skipped if ``missing``)."""
    return pytest.mark.skipif(missing, reason=_reason(part, hint))


def ci() -> bool:
    """The run is CI's: ``CI`` is ``true`` (or ``1``), as CI services and ``.ci/run`` set it."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if not (report.skipped and ci()):
        return report
    reason = _skip_reason(report)
    if MISSING not in reason:
        return report  # a deliberate skip: a long form, the pi marker, a backend's parameter
    report.outcome = "failed"
    report.longrepr = (
        f"CI=true and this test was skipped for a missing part, which fails the run:\n"
        f"  {reason.removeprefix('Skipped: ')}\n"
        f"make test installs or starts the parts (tools/bring_up.py)."
    )
    return report
