"""A TCP port for a server a test starts seconds later (a playbook run, a subprocess).

``bind(0)`` hands out a port of the ephemeral range (Linux: 32768–60999), which every outgoing
connection on the machine draws from too: with the suite in two processes, a port picked that
way and bound 20 s later was once taken by then (test_deploy_dry_run: "address already in
use"). A port below that range is only ever taken by a server that asked for it.
"""

from __future__ import annotations

import random
import socket

__all__ = ["server_port"]

LOW, HIGH = 20_000, 32_000


def server_port() -> int:
    """A port in 20000..31999 free right now, outside the ephemeral range."""
    for _ in range(200):
        port = random.randrange(LOW, HIGH)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in 20000..31999")
