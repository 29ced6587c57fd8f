"""The one way to reach the broker: its configuration and the MQTT client built from it.

Node, station and benchmarks all connect through :func:`mqtt_client`, so a ``mqtts://`` URL, the
TLS files, the credentials and ``TCP_NODELAY`` behave the same on every side of the contract.
"""

from __future__ import annotations

import asyncio
import math
import socket
import ssl
from collections.abc import Awaitable
from pathlib import Path
from typing import Annotated, Any, Self, TypeVar
from urllib.parse import urlsplit

import aiomqtt
from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["NODELAY", "BrokerSettings", "CancellableClient", "mqtt_client"]

T = TypeVar("T")

# The broker's ``set_tcp_nodelay`` covers one direction only: paho leaves Nagle on, and a QoS 1
# exchange of small packets then waits ~40 ms for delayed ACKs (docs/benchmarks.md). aiomqtt
# applies these to the socket right after it connects.
NODELAY = ((socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),)


class BrokerSettings(BaseModel):
    """Where the broker is and who we are to it; each side adds its own keys in a subclass."""

    model_config = ConfigDict(extra="forbid")

    url: str = "mqtt://127.0.0.1:1883"
    username: str | None = None
    password: str | None = None  # for tests and the demo; production uses password_file
    password_file: Path | None = None
    ca_file: Path | None = None  # mqtts://: the venue CA (default: the system's)
    cert_file: Path | None = None  # a client certificate, when the listener asks for one
    key_file: Path | None = None
    keepalive_s: Annotated[int, Field(ge=2, le=600)] = 10

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise ValueError(
                f"must start with mqtt:// or mqtts:// (mqtt://host:port), not {value!r}"
            )
        if not parts.hostname:
            raise ValueError(f"has no host: {value!r}")
        try:
            parts.port  # noqa: B018 - raises on a bad port
        except ValueError:
            raise ValueError(f"has a bad port: {value!r}") from None
        return value

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "127.0.0.1"

    @property
    def port(self) -> int:
        parts = urlsplit(self.url)
        return parts.port or (8883 if parts.scheme == "mqtts" else 1883)

    @property
    def tls(self) -> bool:
        return urlsplit(self.url).scheme == "mqtts"

    def resolved_against(self, base: Path) -> Self:
        """These settings with every relative file path taken as relative to ``base`` (the
        folder of the config file that named it, not the process's working directory)."""
        fix = {
            key: base / value
            for key in ("password_file", "ca_file", "cert_file", "key_file")
            if isinstance(value := getattr(self, key), Path) and not value.is_absolute()
        }
        return self.model_copy(update=fix)

    def read_password(self) -> str | None:
        if self.password is not None:
            return self.password
        if self.password_file is None:
            return None
        return self.password_file.read_text(encoding="utf-8").strip()

    def credentials(self) -> tuple[str | None, str | None]:
        """(username, password) to connect with."""
        return self.username, self.read_password()

    def tls_context(self) -> ssl.SSLContext | None:
        """For ``mqtts://``: the venue CA (or the system's) and the client certificate if any."""
        if not self.tls:
            return None
        context = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        if self.cert_file:
            context.load_cert_chain(
                str(self.cert_file), str(self.key_file) if self.key_file else None
            )
        return context


class CancellableClient(aiomqtt.Client):
    """aiomqtt's client, with its waits (CONNACK, SUBACK, PUBACK, the disconnect) made with
    ``asyncio.timeout`` instead of ``asyncio.wait_for``. On Python 3.11 ``wait_for`` swallows a
    cancellation that arrives in the same loop pass as the awaited acknowledgement (CPython
    gh-86296, fixed in 3.12): a node stopped just as a SUBACK came back went on into its
    drain/receive TaskGroup and waited there forever."""

    async def _wait_for(self, fut: Awaitable[T], timeout: float | None) -> T:
        if timeout is None:
            timeout = self.timeout
        try:
            async with asyncio.timeout(None if timeout == math.inf else timeout):
                return await fut
        except TimeoutError:
            raise aiomqtt.MqttError("Operation timed out") from None

    def _on_socket_register_write(self, client: Any, userdata: Any, sock: Any) -> None:
        """As aiomqtt's, but the writer is registered only if the socket is still open and
        still the client's when the loop gets to it. A publish on a connection that has just
        died asks for a writer, paho closes the socket before the next loop pass, and aiomqtt's
        deferred ``add_writer`` then hit a closed descriptor (EBADF, logged as an ERROR; a
        station stopping just after its broker did this every time) — or a reused one."""

        def write() -> None:
            try:
                client.loop_write()
            except Exception as exc:  # aiomqtt's own handling: the link broke
                if not self._disconnected.done():
                    self._disconnected.set_exception(exc)

        def register() -> None:
            if sock.fileno() >= 0 and client.socket() is sock:
                self._loop.add_writer(sock.fileno(), write)

        # paho may call this from the executor thread that runs connect(): threadsafe.
        self._loop.call_soon_threadsafe(register)


def mqtt_client(
    broker: BrokerSettings,
    *,
    identifier: str,
    keepalive_s: int | None = None,
    connect_timeout_s: float | None = None,
    **options: Any,
) -> aiomqtt.Client:
    """An MQTT 5 client for ``broker``: its host, port, credentials, TLS and TCP_NODELAY.

    ``options`` go to :class:`aiomqtt.Client` as they are (will, clean_start, properties, …).
    """
    username, password = broker.credentials()
    client = CancellableClient(
        broker.host,
        broker.port,
        username=username,
        password=password,
        identifier=identifier,
        protocol=aiomqtt.ProtocolVersion.V5,
        keepalive=broker.keepalive_s if keepalive_s is None else keepalive_s,
        tls_context=broker.tls_context(),
        socket_options=NODELAY,
        **options,
    )
    if connect_timeout_s is not None:
        # paho's TCP connect blocks for up to this (default 5 s); a SYN lost in a cut then holds
        # the next attempt back long after the link returned. aiomqtt has no argument for it.
        client._client.connect_timeout = connect_timeout_s
    return client
