"""``write_broker_config``: a roster in, a complete broker directory out.

DIR/mosquitto.conf, passwd, acl    root:mosquitto 0640 (mosquitto reads them after dropping root)
DIR/data/, DIR/log/                 mosquitto:mosquitto 0750 (persistence and the log)
DIR/tls/                            copies of the certificates, root:mosquitto 0640
DIR/credentials/<user>.json         0600: username, password, broker URLs; kept across runs
DIR/broker.json                     what was written (listeners, accounts), for the runner
"""

from __future__ import annotations

import json
import logging
import os
import pwd
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from broker_config.acl import render_acl
from broker_config.errors import BrokerConfigError
from broker_config.mosquitto_conf import ConfPaths, queue_size, render_conf
from broker_config.passwords import (
    MOSQUITTO_GROUP,
    find_tool,
    hash_password_file,
    kept_password,
    mosquitto_gid,
    new_password,
    set_owner,
)
from broker_config.roster import Roster

__all__ = ["BrokerFiles", "Credentials", "Listener", "write_broker_config"]

log = logging.getLogger(__name__)
ListenerKind = Literal["mqtt", "websockets", "mqtts"]
_SCHEME = {"mqtt": "mqtt", "websockets": "ws", "mqtts": "mqtts"}


@dataclass(frozen=True, slots=True)
class Listener:
    kind: ListenerKind
    host: str
    port: int
    public_host: str | None = None

    @property
    def url(self) -> str:
        host = self.public_host or self.host
        host = f"[{host}]" if ":" in host else host
        return f"{_SCHEME[self.kind]}://{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class Credentials:
    username: str
    password: str
    role: str
    urls: dict[str, str]

    @property
    def url(self) -> str:
        return self.urls["mqtt"]

    @classmethod
    def load(cls, path: str | Path) -> Credentials:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(data["username"], data["password"], data["role"], dict(data["urls"]))


@dataclass(frozen=True, slots=True)
class BrokerFiles:
    """What ``write_broker_config`` wrote; :meth:`load` reads it back from a directory."""

    dir: Path
    venue: str
    listeners: tuple[Listener, ...]
    accounts: dict[str, str]
    max_queued_messages: int
    warnings: tuple[str, ...] = field(default=())

    conf = property(lambda self: self.dir / "mosquitto.conf")
    password_file = property(lambda self: self.dir / "passwd")
    acl_file = property(lambda self: self.dir / "acl")
    persistence_dir = property(lambda self: self.dir / "data")
    log_file = property(lambda self: self.dir / "log" / "mosquitto.log")
    credentials_dir = property(lambda self: self.dir / "credentials")

    def listener(self, kind: ListenerKind) -> Listener | None:
        return next((x for x in self.listeners if x.kind == kind), None)

    def credentials(self, username: str) -> Credentials:
        if username not in self.accounts:
            raise BrokerConfigError(f"no account {username!r} in {self.dir}")
        return Credentials.load(self.credentials_dir / f"{username}.json")

    @classmethod
    def load(cls, directory: str | Path) -> BrokerFiles:
        directory = Path(directory).resolve()
        try:
            data = json.loads((directory / "broker.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BrokerConfigError(f"{directory}: not a broker-config directory ({exc})") from None
        return cls(
            dir=directory,
            venue=data["venue"],
            listeners=tuple(Listener(**x) for x in data["listeners"]),
            accounts=dict(data["accounts"]),
            max_queued_messages=int(data["max_queued_messages"]),
        )


def _listeners(roster: Roster) -> tuple[Listener, ...]:
    ls = roster.listeners
    out = [Listener("mqtt", ls.host, ls.port, ls.public_host)]
    if ls.websockets is not None:
        out.append(Listener("websockets", ls.websockets.host, ls.websockets.port, ls.public_host))
    if ls.tls is not None:
        out.append(Listener("mqtts", ls.tls.host or ls.host, ls.tls.port, ls.public_host))
    return tuple(out)


def _write(path: Path, text: str, mode: int, gid: int | None, warnings: list[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    _own(tmp, mode, gid, warnings)
    os.replace(tmp, path)


def _own(
    path: Path, mode: int, gid: int | None, warnings: list[str], uid: int | None = None
) -> None:
    problem = set_owner(path, mode, group=gid, user=uid)
    if problem and problem not in warnings:
        warnings.append(problem)


def write_broker_config(
    roster: Roster, out_dir: str | Path, *, mosquitto_passwd: str | None = None
) -> BrokerFiles:
    """Write (or rewrite) a broker directory for ``roster``; passwords already issued are kept."""
    out = Path(out_dir).resolve()
    warnings: list[str] = []
    gid = mosquitto_gid()
    uid: int | None = None
    if gid is None:
        warnings.append(
            f"no {MOSQUITTO_GROUP!r} group here: files keep your group; run "
            "mosquitto as the user that ran broker-config"
        )
    else:
        try:
            uid = pwd.getpwnam(MOSQUITTO_GROUP).pw_uid
        except KeyError:
            uid = None
    out.mkdir(parents=True, exist_ok=True)
    _own(out, 0o750, gid, warnings)
    for sub in ("data", "log"):
        (out / sub).mkdir(exist_ok=True)
        _own(out / sub, 0o750, gid, warnings, uid if os.geteuid() == 0 else None)
    creds_dir = out / "credentials"
    creds_dir.mkdir(exist_ok=True)
    os.chmod(creds_dir, 0o700)

    paths = ConfPaths(out / "passwd", out / "acl", out / "data", out / "log" / "mosquitto.log")
    if roster.listeners.tls is not None:
        paths = _copy_tls(roster, out, paths, gid, warnings)

    listeners = _listeners(roster)
    urls = {x.kind: x.url for x in listeners}
    accounts = roster.accounts()
    passwords: dict[str, str] = {}
    for user, role in accounts.items():
        cred = creds_dir / f"{user}.json"
        passwords[user] = kept_password(cred, user) or new_password()
        body: dict[str, Any] = {
            "username": user,
            "password": passwords[user],
            "role": role,
            "venue": roster.venue,
            "urls": urls,
        }
        _write(cred, json.dumps(body, indent=2) + "\n", 0o600, None, warnings)
    for stale in creds_dir.glob("*.json"):
        if stale.stem not in accounts:
            stale.unlink()

    # A board's connection account shares its node's password: one secret per Pi.
    for user, node in roster.board_accounts().items():
        passwords[user] = passwords[node]
    tool = find_tool("mosquitto_passwd", mosquitto_passwd)
    hash_password_file(paths.password_file, passwords, tool=tool)
    _own(paths.password_file, 0o640, gid, warnings)
    _write(paths.acl_file, render_acl(roster), 0o640, gid, warnings)
    # The conf may hold the bridge's remote password: same protection as the password file.
    _write(out / "mosquitto.conf", render_conf(roster, paths), 0o640, gid, warnings)

    files = BrokerFiles(out, roster.venue, listeners, accounts, queue_size(roster), tuple(warnings))
    manifest = {
        "venue": files.venue,
        "accounts": accounts,
        "max_queued_messages": files.max_queued_messages,
        "listeners": [
            {"kind": x.kind, "host": x.host, "port": x.port, "public_host": x.public_host}
            for x in listeners
        ],
    }
    _write(out / "broker.json", json.dumps(manifest, indent=2) + "\n", 0o644, None, warnings)
    for w in warnings:
        log.warning("%s", w)
    return files


def _copy_tls(
    roster: Roster, out: Path, paths: ConfPaths, gid: int | None, warnings: list[str]
) -> ConfPaths:
    # Copies, because a key in /etc/letsencrypt or a home directory is usually unreadable
    # by the mosquitto user; the copies are root:mosquitto 0640 like the password file.
    tls = roster.listeners.tls
    assert tls is not None
    tls_dir = out / "tls"
    tls_dir.mkdir(exist_ok=True)
    _own(tls_dir, 0o750, gid, warnings)
    copied: dict[str, Path] = {}
    for key, name in (("cafile", "ca.crt"), ("certfile", "server.crt"), ("keyfile", "server.key")):
        src = Path(getattr(tls, key))
        if not src.is_file():
            raise BrokerConfigError(f"listeners.tls.{key}: {src} is not a readable file")
        dst = tls_dir / name
        shutil.copyfile(src, dst)
        _own(dst, 0o640, gid, warnings)
        copied[key] = dst
    return ConfPaths(
        paths.password_file,
        paths.acl_file,
        paths.persistence_dir,
        paths.log_file,
        copied["cafile"],
        copied["certfile"],
        copied["keyfile"],
    )
