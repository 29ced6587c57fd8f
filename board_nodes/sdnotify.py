"""systemd notification (``sd_notify``) without a dependency: READY, WATCHDOG, STOPPING.

Does nothing when the process does not run under systemd (no ``NOTIFY_SOCKET``).
"""

from __future__ import annotations

import os
import socket

__all__ = ["notify", "watchdog_interval_s"]


def notify(message: str) -> bool:
    """Send one notification (e.g. ``"READY=1"``); False when not under systemd."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]  # an abstract socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.connect(address)
        sock.sendall(message.encode())
    return True


def watchdog_interval_s() -> float | None:
    """Half the watchdog timeout systemd asked for, or None without a watchdog."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    return int(usec) / 2_000_000
