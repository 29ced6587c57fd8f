"""``station.toml``: the station's configuration, validated with pydantic.

A bad file raises :class:`ConfigError` naming the file, the dotted key and the reason.
See docs/station.md for every key.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from broker_config.roster import Roster
from clock_service.text_rule import text_problem
from venue_station.auth import check_hash_format
from venue_station.errors import ConfigError
from wire_contract.broker import BrokerSettings
from wire_contract.topics import ID_PATTERN

__all__ = [
    "AccountConfig",
    "BackupConfig",
    "BrokerConfig",
    "HttpConfig",
    "PairingConfig",
    "StandbyConfig",
    "StationConfig",
]

Id = Annotated[str, Field(pattern=ID_PATTERN)]  # the contract's ids (wire_contract owns it)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BrokerConfig(BrokerSettings):
    """The station's broker: the contract's settings (``mqtt://``/``mqtts://``, TLS files) and
    the station's persistent session."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    username: str = "station"
    # A credentials file: broker-config's credentials/<user>.json, TOML, or "user:password" lines.
    credentials_file: Path | None = None
    client_id: str | None = None  # default: qz-station-{venue}, stable for the persistent session
    session_expiry_s: int = Field(default=7 * 24 * 3600, ge=60)

    def credentials(self) -> tuple[str, str | None]:
        """(username, password) from password, password_file or credentials_file."""
        if self.password is not None or self.password_file is not None:
            return self.username, self.read_password()
        if self.credentials_file is not None:
            return _read_credentials(self.credentials_file, self.username)
        return self.username, None


class HttpConfig(_Model):
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)  # 0: any free port (tests)
    secure_cookies: bool = False  # implied by tls_cert; set it behind a TLS-terminating proxy
    # HTTPS: the station's certificate and key, e.g. broker-config's certs/server.crt + .key
    # (signed by the venue CA the phones and laptops are given). Both or neither.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # Login: attempts per client address and failures per account, per window (429 beyond);
    # password checks on at most hash_concurrency threads, hash_queue more waiting (503 beyond).
    login_per_address: int = Field(default=10, ge=1, le=100_000)
    login_per_account: int = Field(default=10, ge=1, le=100_000)
    login_window_s: float = Field(default=60.0, gt=0, le=86_400)
    hash_concurrency: int = Field(default=2, ge=1, le=64)
    hash_queue: int = Field(default=16, ge=0, le=10_000)
    # Bodies: a JSON action, an imported CSV (413 beyond, refused while streaming).
    max_json_bytes: int = Field(default=64 * 1024, ge=1024, le=16 * 1024 * 1024)
    max_import_bytes: int = Field(default=8 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    # Live streams (SSE) in all and per client address (503 beyond). Each one is a socket:
    # the unit's LimitNOFILE must stay well above sse_max (deploy/systemd).
    sse_max: int = Field(default=4000, ge=1, le=1_000_000)
    sse_per_address: int = Field(default=16, ge=1, le=1_000_000)
    # A request's head (line and headers) is due within this many seconds of the connection
    # (or of the last response on a kept-alive one), else the connection is closed: a
    # slowloris holds no socket for long (wire_contract/http_guard.py).
    header_timeout_s: float = Field(default=10.0, gt=0, le=3600)

    @model_validator(mode="after")
    def _tls_pair(self) -> HttpConfig:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together: give both or neither")
        return self

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    @property
    def cookies_secure(self) -> bool:
        return self.secure_cookies or self.tls


class AccountConfig(_Model):
    username: Annotated[str, Field(min_length=1, max_length=64)]
    password_hash: str
    role: Literal["recorder", "viewer", "arbiter", "chief", "admin"] = "arbiter"
    # A recorder's boards (录谱): it may read and write these boards' records and nothing else;
    # none given: every board's record.
    boards: tuple[Id, ...] | None = None

    @field_validator("username")
    @classmethod
    def _plain(cls, value: str) -> str:
        problem = text_problem(value)
        if problem is not None:
            raise ValueError(f"{problem}; a user name is plain text")
        return value

    @model_validator(mode="after")
    def _boards_for_recorders(self) -> AccountConfig:
        if self.boards is not None and self.role != "recorder":
            raise ValueError(f"boards is only for a recorder account, not a {self.role}")
        return self

    @field_validator("password_hash")
    @classmethod
    def _hash(cls, value: str) -> str:
        check_hash_format(value)
        return value


class PairingConfig(_Model):
    """``[pairing]``: the engine the chief may run for the next round (docs/pairing.md).

    ``engine``: ``bbpPairings`` (run as ``path --dutch input.trf -p output.txt``) or ``javafo``
    (``path input.trf -p output.txt``; a ``.jar`` path runs through ``java -jar``). None: no
    engine; pairs are imported or entered by hand."""

    engine: Literal["bbpPairings", "javafo"] | None = None
    path: Path | None = None
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    max_output_bytes: int = Field(default=1_000_000, ge=1000, le=50_000_000)

    @model_validator(mode="after")
    def _path_with_engine(self) -> PairingConfig:
        if self.engine is not None and self.path is None:
            raise ValueError(f"engine {self.engine!r} needs pairing.path, the program to run")
        return self


class BackupConfig(_Model):
    """``[backup]``: continuous copies of the SQLite store (docs/operations.md), e.g.
    ``dir = "/media/usb/qz-backup"``: every ``every_s`` and at every round's end, the last
    ``keep`` kept. None: no backups. PostgreSQL: pg_dump / streaming replication instead."""

    dir: Path | None = None
    every_s: float = Field(default=120.0, ge=5, le=3600)
    keep: int = Field(default=30, ge=1, le=10_000)


class StandbyConfig(_Model):
    """``[standby]``: this station is the warm standby of ``primary`` (its web address, e.g.
    ``http://10.0.0.2:8080``): ``qizhong station standby`` copies the primary's store every
    ``every_s`` logged in as ``user`` (an ``admin`` account of the primary) with the password in
    ``password_file``; ``qizhong station promote`` runs it once the primary is gone
    (docs/operations.md)."""

    primary: Annotated[str, Field(pattern=r"^https?://[^\s/]+(/.*)?$", max_length=200)]
    user: Annotated[str, Field(min_length=1, max_length=64)]
    password_file: Path
    every_s: float = Field(default=60.0, ge=5, le=3600)


class StationConfig(_Model):
    venue: Id
    regulation: str = "meishan-2016"
    data_dir: Path = Path("station-data")
    database_url: str | None = None  # default: sqlite file station.db in data_dir
    # Boards the station accepts events for; empty and no roster: any board of the venue.
    boards: tuple[Id, ...] = ()
    roster: Path | None = None  # a broker roster TOML: its boards are the known boards
    rebirth_grace_ms: int = Field(default=300, ge=0)  # a gap must last this long to ask
    rebirth_retry_ms: int = Field(default=3000, ge=100)
    command_timeout_s: float = Field(default=3.0, gt=0, le=60)
    # Every board's clock is probed this often (a round trip, docs/wire.md "Clock probe").
    clock_probe_s: float = Field(default=5.0, ge=0.5, le=300)
    # A board online that has said nothing (no event, state, status, nor an answer to its
    # probes) this long is shown "unknown since" its last message and alerted (board_silent):
    # a node gone with a clean DISCONNECT leaves no will (docs/station.md).
    board_silent_s: float = Field(default=12.0, ge=2, le=600)
    broker: BrokerConfig = BrokerConfig()
    http: HttpConfig = HttpConfig()
    account: tuple[AccountConfig, ...] = ()
    pairing: PairingConfig = PairingConfig()
    backup: BackupConfig = BackupConfig()
    standby: StandbyConfig | None = None
    # The key decision txns are signed with (docs/operations.md "Rebuild"): kept with this
    # config (not in data_dir, which a lost disk takes); made on the first start when missing.
    decision_key_file: Path | None = None

    @model_validator(mode="after")
    def _backup_sqlite(self) -> StationConfig:
        url = self.database_url or ""
        if self.backup.dir is not None and url and not url.startswith("sqlite"):
            raise ValueError(
                "backup.dir copies an SQLite store; for PostgreSQL use pg_dump or streaming "
                "replication (docs/operations.md)"
            )
        return self

    @property
    def db_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'station.db').resolve()}"

    def known_boards(self) -> frozenset[str]:
        found = set(self.boards)
        if self.roster is not None:
            found.update(Roster.load(self.roster).boards)
        return frozenset(found)

    @classmethod
    def load(cls, path: str | Path) -> StationConfig:
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(str(path), "", "no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(str(path), "", f"cannot read: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(str(path), "", f"not valid TOML: {exc}") from None
        config = cls.from_dict(data, source=str(path), base=path.parent)
        config.check_files(str(path))
        return config

    def check_files(self, source: str) -> None:
        """The files the station reads once running, read now: a missing roster or broker
        credentials file ended in a traceback, or a collector restarting every 5 s forever."""
        if self.roster is not None:
            try:
                Roster.load(self.roster)
            except ValueError as exc:  # the roster's RosterError
                raise ConfigError(source, "roster", str(exc)) from None
        b = self.broker
        for key, file in (
            ("password_file", b.password_file),
            ("credentials_file", b.credentials_file),
        ):
            if file is not None and not file.is_file():
                raise ConfigError(source, f"broker.{key}", f"no such file {file}")

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], *, source: str = "<config>", base: Path | None = None
    ) -> StationConfig:
        try:
            config = cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"])
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            raise ConfigError(source, key, err["msg"] + more) from None
        return config._resolved(base) if base is not None else config

    def _resolved(self, base: Path) -> StationConfig:
        # Relative paths in the file are relative to the file, not to the working directory.
        def fix(p: Path | None) -> Path | None:
            return p if p is None or p.is_absolute() else base / p

        broker = self.broker.model_copy(
            update={
                "password_file": fix(self.broker.password_file),
                "credentials_file": fix(self.broker.credentials_file),
                "ca_file": fix(self.broker.ca_file),
                "cert_file": fix(self.broker.cert_file),
                "key_file": fix(self.broker.key_file),
            }
        )
        http = self.http.model_copy(
            update={"tls_cert": fix(self.http.tls_cert), "tls_key": fix(self.http.tls_key)}
        )
        pairing = self.pairing.model_copy(update={"path": fix(self.pairing.path)})
        backup = self.backup.model_copy(update={"dir": fix(self.backup.dir)})
        standby = self.standby
        if standby is not None:
            standby = standby.model_copy(update={"password_file": fix(standby.password_file)})
        return self.model_copy(
            update={
                "standby": standby,
                "decision_key_file": fix(self.decision_key_file),
                "backup": backup,
                "pairing": pairing,
                "data_dir": fix(self.data_dir),
                "roster": fix(self.roster),
                "broker": broker,
                "http": http,
            }
        )


def _read_credentials(path: Path, username: str) -> tuple[str, str | None]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), "broker.credentials_file", f"cannot read: {exc}") from None
    data: dict[str, Any] = {}
    try:
        data = json.loads(text)  # what `qizhong broker-config` writes: credentials/<user>.json
    except ValueError:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
    if not isinstance(data, dict):
        data = {}
    if isinstance(data.get("password"), str):
        return str(data.get("username", username)), data["password"]
    for line in text.splitlines():
        user, sep, password = line.strip().partition(":")
        if sep and user == username:
            return user, password
    raise ConfigError(str(path), "broker.credentials_file", f"no password for {username!r} in it")
