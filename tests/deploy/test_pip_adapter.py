"""Pins pip's private copy of ``packaging`` that qizhong/deploy/pip_adapter.py falls back on:
an upgrade of pip that moves or drops it fails here, by name."""

from __future__ import annotations

import builtins
from typing import Any

import pytest

from qizhong.deploy.pip_adapter import requirement_classes

LINE = "lgpio>=0.2; platform_machine=='aarch64' or platform_machine=='armv7l'"


def test_pips_copy_of_packaging_is_there_and_reads_a_marker() -> None:
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement

    req = Requirement(LINE)
    assert req.name == "lgpio"
    assert req.marker is not None
    assert req.marker.evaluate({"platform_machine": "armv7l"})
    assert not req.marker.evaluate({"platform_machine": "x86_64"})
    with pytest.raises(InvalidRequirement):
        Requirement("lgpio>=; nonsense ==")


def test_without_packaging_the_adapter_gives_pips_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_packaging(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "packaging" or name.startswith("packaging."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_packaging)
    requirement, invalid = requirement_classes()
    assert requirement.__module__ == "pip._vendor.packaging.requirements"
    assert issubclass(invalid, Exception)
    assert requirement(LINE).marker.evaluate({"platform_machine": "aarch64"})
