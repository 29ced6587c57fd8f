"""Every JSON body a route takes is validated through its request model (issue 14): the same
model the generated ``/api/openapi.json`` shows. Derived from the document, so a new route with
a body is covered too: for each operation, a body the model refuses — a field it does not name,
or a field of the wrong JSON type — is a 400 naming that field (``body.<field>``). A route that
went back to checking a few fields by hand would let the unknown field through.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
from support.station import ARBITER, ARBITER_PASSWORD, station_config

from venue_station.domain.station import Station
from venue_station.web.openapi import build_document

EXTRA = "qz_not_a_field"
# A path parameter each body route accepts before it reads the body (session, path, then body).
PATH_VALUES = {"board": "1", "id": "1", "round": "1", "game": "r1-b1"}
KNOCKOUT_GAME = "ko-sf1"


def _resolve(schema: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    return _resolve(doc["components"]["schemas"][ref.rsplit("/", 1)[1]], doc)


def _valid(schema: dict[str, Any], doc: dict[str, Any]) -> Any:
    """A value the schema accepts (only the required fields need one: simple types)."""
    schema = _resolve(schema, doc)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return _valid(schema["anyOf"][0], doc)
    return {"string": "1", "integer": 1, "object": {}, "boolean": True}[schema["type"]]


def _wrong(schema: dict[str, Any], doc: dict[str, Any]) -> Any:
    """A value of a JSON type the schema refuses: a list for an object, else an object."""
    return [1] if _resolve(schema, doc).get("type") == "object" else {"qz": [1]}


def _body_routes(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(url, the body's schema) of every operation taking a JSON body."""
    routes = []
    for path, ops in doc["paths"].items():
        for op in ops.values():
            content = op.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                url = path.replace("/knockout/games/{id}", f"/knockout/games/{KNOCKOUT_GAME}")
                url = url.replace("/knockout/choices/{id}", f"/knockout/choices/{KNOCKOUT_GAME}")
                url = re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES[m.group(1)], url)
                routes.append((url, _resolve(content["application/json"]["schema"], doc)))
    return routes


def _refusals(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """(url, body, the place its 400 must name) for each body route and each of its fields."""
    cases = []
    for url, schema in _body_routes(doc):
        props = schema.get("properties", {})
        required = {name: _valid(props[name], doc) for name in schema.get("required", [])}
        cases.append((url, {**required, EXTRA: 1}, f"body.{EXTRA}"))
        for name, prop in props.items():
            cases.append((url, {**required, name: _wrong(prop, doc)}, f"body.{name}"))
    return cases


def test_the_document_has_body_routes_for_the_test_to_cover() -> None:
    urls = [url for url, _ in _body_routes(build_document())]
    assert "/api/auth/login" in urls and "/api/knockout/start" in urls, urls
    assert len(urls) >= 7, urls


async def test_a_body_the_model_refuses_is_a_400_naming_the_field(
    tmp_path: Path, start_station: Any
) -> None:
    station: Station = await start_station(station_config(tmp_path), connect=False)
    cases = _refusals(build_document())
    wrong: list[str] = []
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        headers = {"X-CSRF-Token": r.json()["csrf"]}
        for url, body, where in cases:
            r = await client.post(url, json=body, headers=headers)
            is_json = r.headers.get("content-type", "").startswith("application/json")
            got = r.json() if is_json else {}
            if r.status_code != 400 or got.get("where") != where or not got.get("error"):
                wrong.append(f"{url} {body} -> {r.status_code} {r.text[:200]} (want {where})")
        # the login form posts the same model's fields: refused the same way
        form = {"username": ARBITER, "password": ARBITER_PASSWORD, EXTRA: "1"}
        r = await client.post("/api/auth/login", data=form)
        assert r.status_code == 400 and r.json()["where"] == f"body.{EXTRA}", r.text
        r = await client.post("/api/auth/login", data={"username": "", "password": "x"})
        assert r.status_code == 400 and r.json()["where"] == "body.username", r.text
        form = {"username": ARBITER, "password": ARBITER_PASSWORD}
        assert (await client.post("/api/auth/login", data=form)).status_code == 200
        # nothing it refused was applied: the knockout was never started
        assert (await client.get("/api/knockout")).json() == {"started": False}
    assert wrong == [], "\n".join(wrong)
    assert len(cases) >= 20, len(cases)
