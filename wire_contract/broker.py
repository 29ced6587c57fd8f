"""The one way to reach the broker: its configuration and the MQTT client built from it.

Node, station and benchmarks all connect through :func:`mqtt_client`, so a ``mqtts://`` URL, the
TLS files, the credentials and ``TCP_NODELAY`` behave the same on every side of the contract.
"""

from __future__ import annotations

import socket
import ssl
from pathlib import Path
from typing import Annotated, Any, Self
from urllib.parse import urlsplit

import aiomqtt
from pydantic import BaseModel, ConfigDict, Field, field_validator

from wire_contract.aiomqtt_adapter import CancellableClient, set_connect_timeout

__all__ = ["NODELAY", "BrokerSettings", "CancellableClient", "mqtt_client"]

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


def mqtt_client(
    broker: BrokerSettings,
    *,
    identifier: str,
    keepalive_s: int | None = None,
    connect_timeout_s: float | None = None,
    write_at_once: bool = False,
    **options: Any,
) -> aiomqtt.Client:
    """An MQTT 5 client for ``broker``: its host, port, credentials, TLS and TCP_NODELAY.

    ``write_at_once``: a publish goes on the socket in the call that makes it, not two turns
    of the loop later (``CancellableClient.write_at_once``): for a client whose every publish
    someone waits for (a board's link). ``options`` go to :class:`aiomqtt.Client` as they are
    (will, clean_start, properties, …).
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
    client.write_at_once = write_at_once
    if connect_timeout_s is not None:
        # paho's TCP connect blocks for up to this (default 5 s); a SYN lost in a cut then holds
        # the next attempt back long after the link returned. aiomqtt has no argument for it.
        set_connect_timeout(client, connect_timeout_s)
    return client
