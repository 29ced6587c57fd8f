"""The hub's configuration: a validated TOML file (``qizhong hub --config hub.toml``), like the
node's and the station's, with each command-line flag overriding its key.

Keys (docs/federation.md, "Running a hub"): ``nats`` (list of ``nats://`` URLs), ``user``,
``password_file`` (relative to the file; else ``$QZ_HUB_PASSWORD``), ``db``, ``http``
(``HOST:PORT``), ``prefix``, ``replicas`` (1, 3 or 5), ``batch``, ``workers``,
``max_ack_pending``, ``max_bytes_mb``, ``name``, ``log_level``, ``regulation``,
``public_ws``, ``live_max_boards`` and the tables ``[venue_regulation]`` (venue = profile) and
``[venue_name]`` (venue = what the public pages call it).
An unknown key, a wrong type or a value out of range stops the hub with ``file: key: reason``
(a :class:`~federation_hub.errors.HubConfigError`, exit status 2).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from federation_hub.consumer import MAX_BATCH
from federation_hub.errors import HubConfigError
from wire_contract.topics import ID_PATTERN

__all__ = ["HubConfig"]

Id = Annotated[str, Field(pattern=ID_PATTERN)]
VenueName = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[^\x00-\x1f\x7f]+$")]


class HubConfig(BaseModel):
    """One hub process's settings (the defaults are the flags' defaults)."""

    model_config = ConfigDict(extra="forbid")

    nats: Annotated[list[str], Field(min_length=1)]
    user: str = "hub"
    password_file: Path | None = None
    db: str
    http: str = "127.0.0.1:8090"
    prefix: Id = "fed"
    replicas: Literal[1, 3, 5] = 1
    batch: Annotated[int, Field(ge=1, le=MAX_BATCH)] = 200
    workers: Annotated[int, Field(ge=1, le=8)] = 1
    max_ack_pending: Annotated[int, Field(ge=1)] = 1000
    max_bytes_mb: Annotated[int, Field(ge=1)] = 8192
    name: str = Field(default_factory=lambda: f"hub-{os.getpid()}")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    regulation: str = "meishan-2016"
    venue_regulation: dict[Id, str] = Field(default_factory=dict)
    # what the public pages call a venue (default: its id): 杭州赛区, 第一届棋钟公开赛 …
    venue_name: dict[Id, VenueName] = Field(default_factory=dict)
    public_ws: str | None = None  # checked with the live page's settings (web.LiveConfig)
    live_max_boards: int = 1000  # likewise

    @field_validator("nats")
    @classmethod
    def _nats_urls(cls, urls: list[str]) -> list[str]:
        bad = [u for u in urls if not u.startswith(("nats://", "tls://"))]
        if bad:
            raise ValueError(f"expected nats://host:port, not {bad[0]!r}")
        return urls

    @field_validator("http")
    @classmethod
    def _host_port(cls, value: str) -> str:
        host, _, port = value.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"expected HOST:PORT, not {value!r}")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @classmethod
    def load(cls, path: Path | None, overrides: dict[str, Any]) -> HubConfig:
        """The file at ``path`` (None: none), each key in ``overrides`` replacing the file's."""
        raw: dict[str, Any] = {}
        source = "the command line"
        if path is not None:
            source = str(path)
            try:
                raw = tomllib.loads(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise HubConfigError(f"{path}: cannot read: {exc.strerror}") from None
            except tomllib.TOMLDecodeError as exc:
                raise HubConfigError(f"{path}: not valid TOML: {exc}") from None
            if isinstance(raw.get("password_file"), str):
                raw["password_file"] = str(path.parent / raw["password_file"])
        tables = {}
        for key, what in (("venue_regulation", "profile"), ("venue_name", "name")):
            table = raw.pop(key, {})
            if not isinstance(table, dict):
                raise HubConfigError(f"{source}: {key}: a table of venue = {what}")
            tables[key] = {**table, **overrides.pop(key, {})}
        try:
            return cls.model_validate({**raw, **overrides, **tables})
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"]) or "file"
            reason = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            raise HubConfigError(f"{source}: {key}: {reason}") from None
