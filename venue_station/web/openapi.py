"""The OpenAPI 3.1 document of the station's web port, served at ``/api/openapi.json``,
generated from the pydantic models of ``api_models.py`` and ``api_action_models.py`` and the
route table of ``openapi_paths.py``.

Each operation names its response model (or the media type of a download, a stream or a page)
and its request body; the models' JSON Schemas (2020-12, what OpenAPI 3.1 takes) become
``components/schemas``. Starlette stays (FastAPI would generate the same from the same models,
but the routes, their bounds and their errors are Starlette's already; docs/web.md).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from venue_station.web import api_action_models as act
from venue_station.web import api_models as m
from venue_station.web.openapi_paths import PATHS, TEXT, Op

__all__ = ["SCHEMA", "Op", "build_document"]

REF = "#/components/schemas/{model}"
ERROR = {"$ref": "#/components/responses/Error"}


_SECURITY: dict[str, list[dict[str, list[str]]]] = {
    "reader": [{"session": []}],
    "action": [{"session": [], "csrf": []}],
}


def _models() -> list[tuple[type[BaseModel], JsonSchemaMode]]:
    seen: dict[tuple[type[BaseModel], JsonSchemaMode], None] = {(m.Error, "serialization"): None}
    for ops in PATHS.values():
        for op in ops.values():
            for model in (op.response, op.json_too):
                if isinstance(model, type):
                    seen[(model, "serialization")] = None
            if isinstance(op.body, type):
                seen[(op.body, "validation")] = None
    return list(seen)


def _content(media: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {media: {"schema": schema}}


def _operation(op: Op, refs: dict[Any, Any]) -> dict[str, Any]:
    if op.response == "application/json":  # this document itself
        content = _content(op.response, {"type": "object", "required": ["openapi", "paths"]})
    elif isinstance(op.response, str):
        content = _content(op.response, TEXT)
    else:
        content = _content("application/json", refs[(op.response, "serialization")])
    for media in op.also:
        content.update(_content(media, TEXT))
    if op.json_too is not None:
        content.update(_content("application/json", refs[(op.json_too, "serialization")]))
    out: dict[str, Any] = {
        "summary": op.summary,
        "parameters": list(op.params),
        "responses": {
            "200": {"description": op.summary, "content": content},
            "4XX": ERROR,
            "5XX": ERROR,
        },
    }
    if op.body is not None:
        if isinstance(op.body, str):
            body = _content(op.body, TEXT)
        else:
            body = _content("application/json", refs[(op.body, "validation")])
            if op.body is act.LoginBody:  # the login form posts the same fields
                body.update(
                    _content(
                        "application/x-www-form-urlencoded", body["application/json"]["schema"]
                    )
                )
        # An empty JSON body is read as {} (bodies.json_object): required only when a field is.
        required = isinstance(op.body, str) or any(
            f.is_required() for f in op.body.model_fields.values()
        )
        out["requestBody"] = {"required": required, "content": body}
    if op.auth is not None:
        out["security"] = _SECURITY[op.auth]
    return out


def build_document() -> dict[str, Any]:
    """The whole document, its schemas generated from the models."""
    refs, defs = models_json_schema(_models(), ref_template=REF)
    paths = {
        path: {method: _operation(op, refs) for method, op in ops.items()}
        for path, ops in PATHS.items()
    }
    # /healthz answers 503 with the same body when not ok (the load balancer's probe reads it)
    paths["/healthz"]["get"]["responses"]["503"] = {
        "description": "not ok: a task down, the writer stuck or the broker lost",
        "content": _content("application/json", refs[(m.Health, "serialization")]),
    }
    # /board/{id} with a malformed id is the page's plain 404, not the API's JSON error
    for page in ("/board/{board}", "/record/{board}"):
        paths[page]["get"]["responses"]["404"] = {
            "description": "not a board id",
            "content": _content("text/plain", TEXT),
        }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "qizhong station API",
            "version": "1",
            "description": "Boards, events, games, results, alerts, commands and exports of a "
            'venue. Errors are {"error": str, "where"?: str} (components/schemas/Error). '
            "Roles: viewer reads alerts and metrics; arbiter rules on alerts and commands a "
            "board; chief also imports, sends rounds, commands the venue and runs the "
            "knockout; admin also lists the accounts. Generated from the station's pydantic "
            "models (venue_station/web/openapi.py).",
        },
        "components": {
            "schemas": defs.get("$defs", {}),
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "qz_session"},
                "csrf": {"type": "apiKey", "in": "header", "name": "X-CSRF-Token"},
            },
            "responses": {
                "Error": {
                    "description": "a clear error",
                    "content": _content("application/json", refs[(m.Error, "serialization")]),
                }
            },
        },
        "paths": paths,
    }


SCHEMA: dict[str, Any] = build_document()
