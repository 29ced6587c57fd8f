"""Which of two statuses of a board is the later news (docs/wire.md "Status order")."""

from __future__ import annotations

from typing import Any

from wire_contract.messages import BoardStatus

__all__ = ["is_older"]


def is_older(new: BoardStatus, held: dict[str, Any]) -> bool:
    """Whether ``new`` says less recent news than the status ``held``.

    Both numbered (``conn``, docs/wire.md "Status order"): by session, connection, and within a
    connection its end (``lost``, ``offline``) after its ``online`` — a will's ``ts`` is stamped
    before its connection's ``online`` and says nothing about order. Otherwise (a node that
    predates ``conn``): by session and ``ts`` as before."""
    if new.conn is not None and held.get("conn") is not None:
        end = 0 if held["state"] == "online" else 1
        return (held["session"], held["conn"], end) > new.order_key()
    return bool((held["session"], held["ts"]) > (new.session, new.ts))
