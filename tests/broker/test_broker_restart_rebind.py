"""A broker restarted on its own ports waits for a port that is not free again yet.

Seen in a full run under load: mosquitto stopped, and on its restart "Unable to create
websockets listener on port …" — the old port was still taken for a moment — and the restart
failed the test. A restart keeps its ports (clients reconnect to the same URL), so it must wait
for them, and only for them: any other start failure is raised at once.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest

from broker_config.errors import MosquittoError

pytestmark = pytest.mark.broker


def _hold(port: int) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", port))
    s.listen(1)
    return s


def test_a_restart_waits_for_its_websockets_port_to_be_free(broker_factory: Any) -> None:
    broker = broker_factory()
    ws = next(x for x in broker.files.listeners if x.kind == "websockets")
    broker.terminate()
    squatter = _hold(ws.port)
    releaser = threading.Timer(1.0, squatter.close)
    releaser.start()
    try:
        broker.restart()
    finally:
        releaser.join()
    assert broker.running
    with socket.create_connection(("127.0.0.1", ws.port), timeout=5):
        pass


def test_a_restart_does_not_wait_on_other_failures(broker_factory: Any) -> None:
    broker = broker_factory()
    broker.terminate()
    broker.files.conf.write_text("not_a_mosquitto_option 1\n", encoding="utf-8")
    before = broker._console.read_text(errors="replace").count("Unknown configuration")
    with pytest.raises(MosquittoError):
        broker.restart()
    tries = broker._console.read_text(errors="replace").count("Unknown configuration") - before
    assert tries == 1, f"a config error was retried like a busy port ({tries} starts)"
