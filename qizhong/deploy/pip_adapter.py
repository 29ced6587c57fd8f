"""The one module that reaches a private part of pip: ``pip._vendor.packaging``, pip's own copy
of ``packaging``, the fallback when ``packaging`` itself is not installed.

Why: ``qizhong bundle`` reads the bundled wheels' ``Requires-Dist`` markers on a control
machine that may have qizhong and pip only (``packaging`` is not one of qizhong's
dependencies; pip, which builds the bundle, always carries a copy). What replaces it on an
upgrade that drops pip's copy: declare ``packaging`` as a dependency and import it alone.
tests/deploy/test_pip_adapter.py pins that pip's copy is there and reads a marker the same way.
"""

from __future__ import annotations

from typing import Any

__all__ = ["requirement_classes"]


def requirement_classes() -> tuple[type[Any], type[Exception]]:
    """``(Requirement, InvalidRequirement)`` from ``packaging``, else from pip's copy of it."""
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:  # a control machine with pip only
        from pip._vendor.packaging.requirements import (  # type: ignore[assignment]
            InvalidRequirement,
            Requirement,
        )
    return Requirement, InvalidRequirement
