"""The logged-in sessions kept in the store, so a station restart logs no one out.

An outsider deputy arbiter's phone dropped to a bare login form when the station restarted
mid-round, and the flags that fell meanwhile were neither shown nor beeped until someone logged
in again. ``auth.Sessions`` now says when a session opens or ends; the keeper writes them all
(``Sessions.dumps``: each by its id's hash) to the store's ``meta`` row ``web_sessions`` — one
write at a time, the latest always last — and the next start takes them back
(``Sessions.restore``) before the web answers. A backup, and a standby's copy, carry them too.
A store that refuses the write costs nothing but the keeping: the sessions work on in memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from venue_station.auth import Sessions
from venue_station.domain.record_keys import secret_fingerprint

if TYPE_CHECKING:
    from venue_station.store.database import Store

__all__ = ["META", "SessionKeeper"]

log = logging.getLogger(__name__)

META = "web_sessions"
RETRY_S = 2.0


class SessionKeeper:
    def __init__(self, sessions: Sessions, store: Callable[[], Store | None]) -> None:
        self.sessions = sessions
        self._store = store
        self._dirty = False
        self._task: asyncio.Task[None] | None = None
        self.saves = 0

    def __repr__(self) -> str:
        return f"<SessionKeeper saves={self.saves} dirty={self._dirty}>"

    async def restore(self) -> int:
        self.sessions.on_change = self.changed  # kept from now on, whatever is restored
        store = self._store()
        if store is None:
            # no store yet (a station opening on a full disk): nothing is taken back, and the
            # first save — once there is a store — replaces what was kept with this run's
            return 0
        key_fp = await secret_fingerprint(store)  # a record key's session: the same secret
        taken = self.sessions.restore(await store.get_meta(META), key_fp=key_fp)
        if taken:
            log.info("web: %d logged-in sessions kept from before this start", taken)
        return taken

    def changed(self) -> None:
        self._dirty = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._save(), name="keep-sessions")

    async def _save(self) -> None:
        # Until it is written: a logout not kept would come back at the next start.
        while self._dirty:
            store = self._store()
            if store is None:
                await asyncio.sleep(RETRY_S)
                continue
            self._dirty = False
            try:
                await store.set_meta(META, self.sessions.dumps())
                self.saves += 1
            except Exception as exc:  # the store refusing (a full disk): again in a moment
                self._dirty = True
                log.warning("web: the logged-in sessions could not be kept (again in %s s): %s",
                            RETRY_S, exc)  # fmt: skip
                await asyncio.sleep(RETRY_S)

    async def close(self) -> None:
        """Write what changed last (a clean stop), for at most 2 s."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=2.0)
            task.cancel()
