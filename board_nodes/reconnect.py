"""How a board's link keeps to the broker: the keepalive it asks for, and the pauses between
its reconnects."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

__all__ = ["MOSQUITTO_CHECK_S", "broker_keepalive", "reconnect_delays"]

MOSQUITTO_CHECK_S = 6  # Mosquitto 2 checks keepalives when 5 whole seconds have passed


def broker_keepalive(keepalive_s: int) -> int:
    """The MQTT keepalive to ask the broker for, so that it gives up on a silent connection
    (and publishes the will) within 1.5 × ``keepalive_s`` of the node's last packet.

    Mosquitto 2 does not drop a client at 1.5 k: it compares whole seconds
    (``now_s - last_in_s > ⌊1.5 k⌋``) and runs that check only every ``MOSQUITTO_CHECK_S``
    (6 s), so the will comes up to ⌊1.5 k⌋ + 1 + 6 s after the last packet (measured: 6.7 s
    for k = 2, 7.5 s for k = 4; the issue saw 15–17 s for k = 10). So: the largest k with
    that, and half a second to reach the station, within 1.5 × ``keepalive_s`` — 5 for the
    default 10 s (lost within 15 s), 1 for 6 s, the least ``keepalive_s`` allowed.
    """
    budget = 1.5 * keepalive_s - MOSQUITTO_CHECK_S - 1.5
    k = keepalive_s
    while k > 1 and (3 * k) // 2 > budget:
        k -= 1
    return k


def reconnect_delays(
    min_s: float, max_s: float, rng: Callable[[], float] = random.random
) -> Iterator[float]:
    """The pauses before each reconnect: doubling from ``min_s`` to ``max_s``, each drawn from
    the upper half of its step (jitter, so a venue's boards do not all knock at once) and
    never past ``max_s``: a board is back within ``connect_timeout_s + max_s`` of its link."""
    step = min(min_s, max_s)
    while True:
        yield step * (0.5 + 0.5 * rng())
        step = min(step * 2, max_s)
