"""Request bodies read with a bound: refused while streaming, never read whole first.

A body declared (``Content-Length``) past the limit is refused before a byte is read; a body
sent without a length (chunked) is read chunk by chunk and refused as soon as it passes the
limit, so the station holds at most ``limit`` plus one chunk of it in memory, whatever is sent.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import ClientDisconnect, Request

from venue_station.http_base import ApiError, station_of

__all__ = ["json_object", "read_body"]


def _too_large(limit: int) -> ApiError:
    return ApiError(
        413, f"request body too large (at most {limit} bytes)", kind="too_large", where="body"
    )


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isascii() or not declared.isdigit() or len(declared) > 18:
            raise ApiError(400, "Content-Length is not a whole number", where="header")
        if int(declared) > limit:
            raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
    except ClientDisconnect:
        raise ApiError(400, "the client went away mid-body", where="body") from None
    return b"".join(chunks)


async def json_object(request: Request) -> dict[str, Any]:
    """A request's body as a JSON object, within the station's byte bound."""
    raw = await read_body(request, station_of(request).config.http.max_json_bytes)
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ApiError(400, f"body is not JSON: {exc}", where="body") from None
    if not isinstance(data, dict):
        raise ApiError(400, "body must be a JSON object", where="body")
    return data
