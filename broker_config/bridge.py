"""The venue's bridge to the federation centre: the roster's ``[federation]`` table, rendered.

The venue stays autonomous: its broker bridges its boards' ``status``, ``state`` and ``event``
topics OUT to the centre's NATS (MQTT listener) and takes in one topic only, the hub's asks
for events it lacks (``station/resend``, read by the station alone) — no command ever reaches
a board from the centre. The station's answers go out on ``resent/board/+/event``. Settings
learned against NATS 2.9 and Mosquitto 2.0:

- NATS speaks MQTT 3.1.1 only: ``bridge_protocol_version mqttv311``.
- ``try_private false``: NATS does not know Mosquitto's private bridge flag and refuses the
  connection with it (and a ``both`` bridge would then echo messages; ours has no ``both``, and
  nothing it brings in is a topic it sends out).
- ``cleansession false`` + QoS 1: while the uplink is cut, the venue broker queues the bridge's
  messages (bounded by ``max_queued_messages``, sized for an outage) and sends them on return;
  a re-sent message may arrive twice, the hub stores it once.
- Several ``address`` entries: the bridge moves to another NATS node if its node dies.
- Notifications stay local: publishing Mosquitto's ``$SYS`` bridge state to NATS would be refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

__all__ = ["BRIDGED_KINDS", "FederationSettings", "remote_root", "render_federation_bridge"]

BRIDGED_KINDS = ("status", "state", "event")  # never cmd, reply or anything inbound
_PREFIX_RE = re.compile(r"[A-Za-z0-9_-]{1,32}(/[A-Za-z0-9_-]{1,32}){0,3}")
MAX_CENTRE_URLS = 8


def _check_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("mqtt", "mqtts"):
        raise ValueError(f"{value!r}: the scheme must be mqtt:// or mqtts://")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{value!r}: the port is not a number in 1..65535") from None
    if not parts.hostname or port is None:
        raise ValueError(f"{value!r}: give host and port, e.g. mqtts://centre.example:8883")
    if parts.path not in ("", "/") or parts.query or parts.username:
        raise ValueError(f"{value!r}: only scheme://host:port (credentials go in username)")
    return value


def _check_prefix(value: str) -> str:
    if not _PREFIX_RE.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a valid prefix: 1 to 4 segments of A-Z a-z 0-9 _ - joined by /"
        )
    return value


CentreUrl = Annotated[str, AfterValidator(_check_url)]


class FederationSettings(BaseModel):
    """``[federation]``: where the centre is, who the venue is there, how it is encrypted."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    urls: tuple[CentreUrl, ...] = Field(min_length=1, max_length=MAX_CENTRE_URLS)
    username: str = Field(min_length=1, max_length=128, pattern=r"^[^\s]+$")
    password: str = Field(min_length=1, max_length=256, pattern=r"^[^\s]+$")
    # Topics arrive at the centre as {prefix}/qz/v1/{venue}/board/{board}/{kind}
    # (NATS subject {prefix}.qz.v1.{venue}.board.{board}.{kind}).
    prefix: Annotated[str, AfterValidator(_check_prefix)] = "fed"
    cafile: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None
    keepalive_s: int = Field(default=30, ge=5, le=600)

    @model_validator(mode="after")
    def _tls_consistent(self) -> FederationSettings:
        schemes = {urlsplit(u).scheme for u in self.urls}
        if len(schemes) > 1:
            raise ValueError("urls: use mqtt:// or mqtts:// for every centre URL, not both")
        if "mqtts" in schemes and self.cafile is None:
            raise ValueError("cafile: an mqtts:// centre needs the CA that signed its certificate")
        if "mqtt" in schemes and (self.cafile or self.certfile or self.keyfile):
            raise ValueError("cafile/certfile/keyfile need mqtts:// centre URLs")
        if (self.certfile is None) != (self.keyfile is None):
            raise ValueError("certfile and keyfile go together (a client certificate)")
        return self

    @property
    def tls(self) -> bool:
        return urlsplit(self.urls[0]).scheme == "mqtts"

    def addresses(self) -> list[str]:
        out = []
        for u in self.urls:
            parts = urlsplit(u)
            out.append(f"{parts.hostname}:{parts.port}")
        return out

    def resolved(self, base: Path) -> FederationSettings:
        update = {k: base / v for k in ("cafile", "certfile", "keyfile") if (v := getattr(self, k))}
        return self.model_copy(update=update) if update else self


def remote_root(prefix: str, venue: str) -> str:
    """The venue's topic root at the centre (MQTT form; NATS subjects swap / for .)."""
    return f"{prefix}/qz/v1/{venue}/"


def render_federation_bridge(venue: str, fed: FederationSettings) -> list[str]:
    """mosquitto.conf lines of the venue → centre bridge."""
    local = f"qz/v1/{venue}/"
    remote = remote_root(fed.prefix, venue)
    out = [
        "# Federation bridge (broker_config/bridge.py): this venue's board status, state and",
        "# events, the station's decisions and game records, OUT to the centre's NATS over",
        "# MQTT 3.1.1, QoS 1.",
        "# Nothing comes in but the hub's asks for events it lacks (station/resend).",
        f"connection {venue}-federation",
        f"address {' '.join(fed.addresses())}",
        "round_robin false",
        "bridge_protocol_version mqttv311",
        "try_private false",
        "cleansession false",
        f"remote_clientid qz-fed-{venue}",
        f"local_clientid qz-fed-{venue}-local",
        f"remote_username {fed.username}",
        f"remote_password {fed.password}",
        f"keepalive_interval {fed.keepalive_s}",
        "restart_timeout 1 15",
        "start_type automatic",
        "notifications true",
        "notifications_local_only true",
    ]
    if fed.tls:
        out.append(f"bridge_cafile {fed.cafile}")
        if fed.certfile is not None:
            out += [f"bridge_certfile {fed.certfile}", f"bridge_keyfile {fed.keyfile}"]
        out += ["bridge_insecure false", "bridge_tls_version tlsv1.2"]
    out += [f"topic board/+/{kind} out 1 {local} {remote}" for kind in BRIDGED_KINDS]
    # The station's decisions (issue 27): the hub counts a board's decision only beside one.
    out.append(f"topic station/decision out 1 {local} {remote}")
    # The boards' game records (issue 29), retained at the venue; the hub checks each.
    out.append(f"topic station/record/+ out 1 {local} {remote}")
    # The hub's mending (docs/federation.md): its asks for events a dying centre node lost
    # come IN (the one topic that does; only the station reads it, QoS 0: the hub asks again),
    # and the station's stored copies go OUT on their own subject: the hub takes them only
    # for seqs the board itself has numbered.
    out.append(f"topic station/resend in 0 {local} {remote}")
    out.append(f"topic resent/board/+/event out 1 {local} {remote}")
    return out
