"""Long-running station tasks, supervised: a task that fails is restarted with back-off.

One bad message, a locked database or a bug met once must not stop the station (issue 12).
Each task's state (up, restarts, last error) is what ``/healthz`` and ``/metrics`` show; a
task that is down (failed, waiting to restart) makes ``/healthz`` answer 503.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

__all__ = ["Supervisor", "TaskState"]

log = logging.getLogger("venue_station.domain.station")
BACKOFF_MIN_S = 0.2
BACKOFF_MAX_S = 5.0
HEALTHY_AFTER_S = 30.0  # a task that ran this long starts its back-off afresh
_OPERATIONAL = (OSError, sa.exc.OperationalError)


@dataclass
class TaskState:
    name: str
    up: bool = False
    restarts: int = 0
    last_error: str | None = None
    down_since: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "up": self.up,
            "restarts": self.restarts,
            "last_error": self.last_error,
            "down_s": None
            if self.down_since is None
            else round(time.monotonic() - self.down_since, 3),
        }


class Supervisor:
    def __init__(self) -> None:
        self.states: dict[str, TaskState] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def start(self, name: str, factory: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Run ``factory()`` as task ``name``, again after each failure, until cancelled."""
        state = self.states[name] = TaskState(name)
        self.tasks[name] = asyncio.create_task(self._run(state, factory), name=f"station-{name}")

    async def _run(self, state: TaskState, factory: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        delay = BACKOFF_MIN_S
        while True:
            started = time.monotonic()
            state.up, state.down_since = True, None
            try:
                await factory()
                state.up = False
                return  # finished by itself (a clean end)
            except asyncio.CancelledError:
                state.up = False
                raise
            except Exception as exc:
                state.up, state.down_since = False, time.monotonic()
                state.restarts += 1
                state.last_error = f"{type(exc).__name__}: {str(exc)[:300]}"
                if time.monotonic() - started > HEALTHY_AFTER_S:
                    delay = BACKOFF_MIN_S
                log.warning(
                    "station task %s failed (%s); restarting in %.1f s",
                    state.name,
                    state.last_error,
                    delay,
                    # A full or lost disk is the venue's trouble, not a bug: its alarm says so
                    # (alarms.py); a traceback is for what the code did not expect.
                    exc_info=None if isinstance(exc, _OPERATIONAL) else exc,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF_MAX_S)

    def down(self) -> list[str]:
        return sorted(name for name, s in self.states.items() if not s.up)

    async def cancel(self, name: str, *, timeout: float = 1.0) -> None:
        task = self.tasks.pop(name, None)
        if task is None:
            return
        task.cancel()
        await asyncio.wait({task}, timeout=timeout)

    async def cancel_all(self, *, timeout: float = 1.0) -> None:
        tasks = list(self.tasks.values())
        self.tasks.clear()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
