"""The writer never loops on a row it cannot store (issue 12).

A batch that fails is written again item by item. An item that fails alone for a reason of
its own (a value the database refuses: an integer past BIGINT, a string past its column) is
*set aside*: kept with the reason in the ``set_aside`` table, an alert raised, and the writer
goes on. A failure of the database itself (unreachable, locked, full) is retried with back-off;
``WriterHealth`` says when the writer has been at one batch too long (``/healthz`` 503).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

__all__ = ["STUCK_AFTER_S", "WriterHealth", "describe_item", "is_transient", "write_contained"]

log = logging.getLogger("venue_station.intake.ingest")
STUCK_AFTER_S = 3.0
RETRY_MAX_S = 5.0


_VALUE_ERRORS = (OverflowError, ValueError, TypeError, UnicodeError)


def is_transient(exc: BaseException) -> bool:
    """Whether to retry: anything but a value the database (or its driver) refuses.

    Only a refused *value* is the row's own fault: the driver cannot bind it (an int past
    64 bits) or the database says so (a string past its column: SQLSTATE class 22, DataError).
    Everything else (unreachable, locked, full, a constraint) may pass on a retry."""
    if isinstance(exc, (sa.exc.DataError, *_VALUE_ERRORS)):
        return False
    if isinstance(exc, sa.exc.StatementError):
        orig = exc.orig
        if isinstance(orig, _VALUE_ERRORS) or type(orig).__name__.endswith("DataError"):
            return False
        sqlstate = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
        return not (isinstance(sqlstate, str) and sqlstate.startswith("22"))
    return True


@dataclass
class WriterHealth:
    busy_since: float | None = None  # monotonic s the current batch started
    retrying: bool = False
    last_error: str | None = None
    set_aside: int = 0

    def stuck(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        return self.busy_since is not None and now - self.busy_since > STUCK_AFTER_S

    def as_dict(self) -> dict[str, Any]:
        busy = None if self.busy_since is None else time.monotonic() - self.busy_since
        return {
            "stuck": self.stuck(),
            "busy_s": None if busy is None else round(busy, 3),
            "retrying": self.retrying,
            "last_error": self.last_error,
            "set_aside": self.set_aside,
        }


def describe_item(kind: str, item: Any) -> tuple[str | None, str]:
    """(board, a JSON text of the item) for the set-aside table."""
    if kind == "event":
        ev, received = item
        return ev.board, json.dumps(
            {"event": ev.model_dump(mode="json"), "received_ms": received}, default=str
        )
    board = item.get("board") if isinstance(item, dict) else None
    if kind == "expect":
        board = item[0]
    return board, json.dumps(item, default=str)


async def _retry_transient(
    write: Callable[[list[tuple[str, Any]]], Awaitable[None]],
    items: list[tuple[str, Any]],
    health: WriterHealth,
) -> BaseException | None:
    """Write until it succeeds or fails for a reason of the items; that reason, or None."""
    delay = 0.2
    while True:
        try:
            await write(items)
            health.retrying = False
            return None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not is_transient(exc):
                return exc
            health.retrying = True
            health.last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
            log.warning(
                "storing %d item(s) failed (%s); retrying in %.1fs",
                len(items),
                health.last_error,
                delay,
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_S)


async def write_contained(
    batch: list[tuple[str, Any]],
    write: Callable[[list[tuple[str, Any]]], Awaitable[None]],
    set_aside: Callable[[str, Any, BaseException], Awaitable[None]],
    health: WriterHealth,
) -> None:
    """Store ``batch``; set aside what cannot be stored; retry while the database is down."""
    health.busy_since = time.monotonic()
    try:
        failure = await _retry_transient(write, batch, health)
        if failure is None:
            return
        log.warning(
            "a batch of %d failed (%s: %s); storing its items one by one",
            len(batch),
            type(failure).__name__,
            str(failure)[:200],
        )
        for item in batch:
            failure = await _retry_transient(write, [item], health)
            if failure is not None:
                health.set_aside += 1
                await set_aside(item[0], item[1], failure)
    finally:
        health.busy_since = None
