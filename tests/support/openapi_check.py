"""Validate real responses against the station's generated OpenAPI document (issue 14).

``Checker(SCHEMA).check(method, path, response)`` validates a response with ``jsonschema``
against the schema the document declares for its operation and status (``$ref`` resolved with
a ``referencing`` registry holding the document) and remembers the operation as seen.
"""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

__all__ = ["Checker"]

DOC_URI = "urn:qizhong:station-openapi"


class Checker:
    """Validates a response against the document's schema for its operation and status."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        resource = Resource.from_contents(doc, default_specification=DRAFT202012)
        self.registry: Registry[Any] = Registry().with_resource(DOC_URI, resource)
        self.seen: set[tuple[str, str]] = set()

    def schema_for(self, method: str, path: str, status: int, media: str) -> dict[str, Any]:
        responses = self.doc["paths"][path][method]["responses"]
        response = responses.get(str(status)) or responses[f"{str(status)[0]}XX"]
        if "$ref" in response:  # components/responses/Error
            response = self.doc["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        schema: dict[str, Any] = response["content"][media]["schema"]
        assert schema, (method, path, status)
        return schema

    def check(self, method: str, path: str, r: httpx.Response) -> Any:
        media = r.headers["content-type"].split(";")[0]
        schema = self.schema_for(method, path, r.status_code, media)
        body = r.json() if media == "application/json" else r.text
        self.validate(schema, body)
        self.seen.add((method, path))
        return body

    def validate(self, schema: dict[str, Any], body: Any) -> None:
        # The operation's schema is a $ref into components: resolve it within the document.
        ref = schema.get("$ref")
        root = {"$ref": DOC_URI + ref} if ref else schema
        validator = jsonschema.Draft202012Validator(root, registry=self.registry)
        errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
        assert not errors, "\n".join(
            f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10]
        )
