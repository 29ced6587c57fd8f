"""A deadline on an HTTP request's head, for the station's and the hub's uvicorn servers.

uvicorn times out only a connection idle *after* a response (``timeout_keep_alive``): one that
connects and sends its request line and headers a byte at a time (slowloris) is kept open for
ever, each one a socket and a file descriptor (issue 27: 300 such connections were all kept).
``header_deadline_protocol(s)`` is uvicorn's own ``httptools`` protocol with one addition: from
the moment a connection opens (and again after each response on a kept-alive one) its next
request's head must be complete within ``s`` seconds, or the connection is closed. A request
whose head arrived in time is not limited further (a live stream may last all day; a body's
size is bounded by the pages' own limits). Over TLS the deadline starts after the handshake
(asyncio's ``ssl_handshake_timeout``, 60 s, bounds that).

It lives here, beside the contract, because both sides serve HTTP and neither may import the
other (tests/system/test_import_rules.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["HEADER_TIMEOUT_S", "header_deadline_protocol"]

log = logging.getLogger(__name__)
HEADER_TIMEOUT_S = 10.0


class _HeaderDeadline(HttpToolsProtocol):
    header_timeout_s = HEADER_TIMEOUT_S
    closed_late = 0  # connections closed for a late head, per class (the tests read it)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head()

    def on_headers_complete(self) -> None:
        self._disarm_head()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head()  # a kept-alive connection's next head is due in time too

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head()
        super().connection_lost(exc)

    def _arm_head(self) -> None:
        self._disarm_head()
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_late)

    def _disarm_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            type(self).closed_late += 1
            log.debug("closed a connection whose request head took over %gs", self.header_timeout_s)
            self.transport.close()


def header_deadline_protocol(timeout_s: float = HEADER_TIMEOUT_S) -> type[HttpToolsProtocol]:
    """uvicorn's ``http=`` protocol class with a ``timeout_s`` deadline on each request head."""
    if not 0 < timeout_s <= 3600:
        raise ValueError(f"a header timeout is between 0 and 3600 s, not {timeout_s}")
    return type("HeaderDeadlineProtocol", (_HeaderDeadline,), {"header_timeout_s": timeout_s})
