"""What an anonymous reader (a phone in the hall, the public display) does not get.

Arbiter-only: alerts, pending fouls and forfeits (a proposal the arbiter has not ruled on yet:
telling the hall "black fouled" before the arbiter decides is the arbiter's call, not the
clock's; of a state's ``pending`` only a flag's loss to rule is public, as ``{"reason":
"flag"}``), and the station's metrics. Everything else on the web port is public.

``public_message(kind, data)`` is the public copy of a live (SSE) message, or None when the
whole message is arbiter-only; ``public_board(view)`` and ``is_private_event(ev)`` do the same
for the read routes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["is_private_event", "public_board", "public_message"]

_PENDING_TYPES = ("foul", "forfeit")


def is_private_event(ev: Mapping[str, Any]) -> bool:
    """A foul or forfeit still pending the arbiter's ruling."""
    data = ev.get("data")
    return (
        ev.get("type") in _PENDING_TYPES
        and isinstance(data, Mapping)
        and data.get("status") == "pending"
    )


def _public_state(state: Any) -> Any:
    # A flag's loss waiting for the ruling stays (as no more than that): the flag is public
    # (its event, the ⚑), and without it a phone's card read a flag to rule as one dismissed
    # (暂停 · 待加时: a reviewer)
    if isinstance(state, Mapping) and state.get("pending"):
        flags = [
            p for p in state["pending"] if isinstance(p, Mapping) and p.get("reason") == "flag"
        ]
        return {**state, "pending": [{"reason": "flag"}] if flags else []}
    return state


def public_board(view: Mapping[str, Any]) -> dict[str, Any]:
    return {**view, "state": _public_state(view.get("state"))}


def public_message(kind: str, data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if kind == "alert":
        return None
    if kind == "event" and isinstance(data.get("event"), Mapping):
        return None if is_private_event(data["event"]) else data
    if kind == "state" and isinstance(data.get("state"), Mapping) and data["state"].get("pending"):
        return {**data, "state": _public_state(data["state"])}
    if kind == "hello" and isinstance(data.get("boards"), list):
        return {**data, "boards": [public_board(b) for b in data["boards"]]}
    return data
