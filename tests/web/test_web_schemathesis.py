"""Every malformed path, parameter or body is a 4xx, never a 500 (issue 12): schemathesis
generates requests from the station's own ``/api/openapi.json`` and sends them to a real
station over a real socket, anonymous and as the chief arbiter. Every response, a 200 or an
error, must also match the document's (generated) schema and media type for it (issue 14).

Bounded so it is neither slow nor flaky: a fixed small number of examples per operation and
hypothesis derandomised (the same requests every run). The live stream is left out (it never
ends), and so is logout (it would end the session the second pass runs with).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.station import ARBITER, ARBITER_PASSWORD, station_config

from venue_station.domain.station import Station

pytestmark = pytest.mark.slow

MAX_EXAMPLES = 15
SKIP = {"/api/stream", "/api/auth/logout"}


def _fuzz(base_url: str, headers: dict[str, str]) -> list[str]:
    """Run schemathesis over every operation; the requests that got a 500."""
    import schemathesis

    schema = schemathesis.openapi.from_url(f"{base_url}/api/openapi.json")
    failures: list[str] = []
    for result in schema.get_all_operations():
        op = result.ok()
        if op.path not in SKIP:
            _fuzz_one(op, base_url, headers, failures)
    return failures


def _fuzz_one(op: Any, base_url: str, headers: dict[str, str], failures: list[str]) -> None:
    import hypothesis

    @hypothesis.settings(
        max_examples=MAX_EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(hypothesis.HealthCheck),
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
    )
    @hypothesis.given(case=op.as_strategy())
    def check(case: Any) -> None:
        response = case.call(base_url=base_url, headers=headers, timeout=10)
        where = f"{op.method.upper()} {case.formatted_path} {case.query or ''}"
        if response.status_code >= 500 and response.status_code not in (503, 504):
            failures.append(f"{where} -> {response.status_code} {response.text[:200]}")
        elif (wrong := _conforms(case, response)) is not None:
            failures.append(f"{where} -> {response.status_code} not as documented: {wrong}")

    check()


def _conforms(case: Any, response: Any) -> str | None:
    """Whether a response has the status, media type and body shape the document declares
    (every 200 and every error against the generated schemas)."""
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
    )

    try:
        case.validate_response(
            response, checks=[response_schema_conformance, content_type_conformance]
        )
    except (Exception, BaseExceptionGroup) as exc:  # a group of the failed checks
        return str(exc)[:400]
    return None


async def test_schemathesis_finds_no_server_error(tmp_path: Path, start_station: Any) -> None:
    station: Station = await start_station(station_config(tmp_path), connect=False)
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        r = await client.post(
            "/api/auth/login", json={"username": ARBITER, "password": ARBITER_PASSWORD}
        )
        chief = {
            "Cookie": f"qz_session={r.cookies['qz_session']}",
            "X-CSRF-Token": r.json()["csrf"],
        }
    anonymous = await asyncio.to_thread(_fuzz, station.http_url, {})
    as_chief = await asyncio.to_thread(_fuzz, station.http_url, chief)
    assert anonymous == [] and as_chief == [], anonymous + as_chief
    async with httpx.AsyncClient(base_url=station.http_url) as client:
        assert (await client.get("/healthz")).status_code == 200
