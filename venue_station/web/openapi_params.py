"""The OpenAPI document's parameter objects, shared by openapi.py and the route modules that
describe their own operations (records_models.py, duties_models.py)."""

from __future__ import annotations

from typing import Any

__all__ = ["path_param", "query_param"]


def query_param(name: str, desc: str, kind: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": desc,
        "schema": {"type": kind},
    }


def path_param(name: str, desc: str, kind: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": desc,
        "schema": {"type": kind},
    }
