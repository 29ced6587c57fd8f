"""Request bodies read with a bound: refused while streaming, never read whole first.

A body declared (``Content-Length``) past the limit is refused before a byte is read; a body
sent without a length (chunked) is read chunk by chunk and refused as soon as it passes the
limit, so the station holds at most ``limit`` plus one chunk of it in memory, whatever is sent.

A JSON action's body is then validated through its request model (``parse_body``), the same
model the OpenAPI document shows (venue_station/web/api_action_models.py): a field the model
refuses is a 400 naming it (``where="body.seed"``), so the document and the check cannot part.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request

from venue_station.web.http_base import ApiError, station_of

__all__ = ["json_object", "parse_body", "read_body", "validated"]

M = TypeVar("M", bound=BaseModel)


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


def validated(model: type[M], data: dict[str, Any]) -> M:
    """``data`` as ``model``, or a 400 naming the first field refused (``body.<field>``)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        loc = [str(part) for part in error["loc"]]
        # The top-level field is the place a client fixes; the full path goes in the message.
        where = f"body.{loc[0]}" if loc else "body"
        path = ".".join(loc) or "body"
        raise ApiError(400, f"{path}: {error['msg']}", where=where) from None


async def parse_body(request: Request, model: type[M]) -> M:
    """A request's JSON object body (bounded, as ``json_object``) validated as ``model``."""
    return validated(model, await json_object(request))
