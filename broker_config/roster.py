"""The venue roster: who may connect to the broker and which boards each node speaks for.

A roster is TOML (see docs/broker.md), validated with pydantic; a bad roster raises
:class:`RosterError` naming the file, the key (dotted path with table indexes) and the reason
for every problem found, so a technician fixes the file in one pass.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from broker_config.bridge import FederationSettings
from broker_config.errors import RosterError, RosterProblem
from broker_config.screens import Screen

__all__ = [
    "Account",
    "BridgeSettings",
    "BrokerSettings",
    "Listeners",
    "NodeEntry",
    "Roster",
    "TlsListener",
    "WebsocketsListener",
    "board_account",
]

_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")


def _check_id(value: str) -> str:
    if not _ID_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not a valid id: use 1 to 32 of A-Z a-z 0-9 _ -")
    return value


def _check_host(value: str) -> str:
    # An IP literal, not a name: the websockets listener needs to know the address family
    # (socket_domain) and a venue broker should bind where the technician says, exactly.
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1)") from None
    return value


Id = Annotated[str, AfterValidator(_check_id)]
Host = Annotated[str, AfterValidator(_check_host)]
Port = Annotated[int, Field(ge=1, le=65535)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Account(_Model):
    """A broker account that is not a node: the station, an arbiter or a display."""

    username: Id


class NodeEntry(_Model):
    """One Pi: its id, the boards it drives, and its broker username (the id by default)."""

    id: Id
    boards: tuple[Id, ...] = Field(min_length=1)
    username: Id | None = None

    @property
    def account(self) -> str:
        return self.username or self.id


class WebsocketsListener(_Model):
    host: Host = "127.0.0.1"
    port: Port = 9001


class TlsListener(_Model):
    host: Host | None = None  # None: the same address as the plain listener
    port: Port = 8883
    cafile: Path
    certfile: Path
    keyfile: Path
    require_certificate: bool = False


class Listeners(_Model):
    host: Host = "127.0.0.1"
    port: Port = 1883
    # The name clients use in their URLs (credentials files) when the broker binds 0.0.0.0.
    public_host: str | None = None
    websockets: WebsocketsListener | None = None
    tls: TlsListener | None = None


class BrokerSettings(_Model):
    persistence: bool = True
    autosave_interval_s: int = Field(default=10, ge=1, le=3600)
    outage_minutes: int = Field(default=30, ge=1, le=24 * 60)
    events_per_board_per_minute: int = Field(default=6, ge=1, le=600)
    # None: sized by the formula in mosquitto_conf.queue_size(); a number overrides it.
    max_queued_messages: int | None = Field(default=None, ge=0)
    max_inflight_messages: int = Field(default=100, ge=1, le=65535)
    persistent_client_expiration_days: int = Field(default=7, ge=1)


class BridgeSettings(_Model):
    """An outbound bridge of the public topics (state, status) to a remote broker."""

    name: Id = "remote"
    host: str
    port: Port = 1883
    username: str | None = None
    password: str | None = None
    cafile: Path | None = None
    remote_prefix: str = ""  # prepended to the topics on the remote side, e.g. "venues/"


class Roster(_Model):
    venue: Id
    station: Account = Account(username="station")
    node: tuple[NodeEntry, ...] = ()
    arbiter: tuple[Account, ...] = ()
    display: tuple[Account, ...] = ()
    screen: tuple[Screen, ...] = ()  # hall screens (broker_config/screens.py)
    listeners: Listeners = Listeners()
    broker: BrokerSettings = BrokerSettings()
    bridge: BridgeSettings | None = None
    federation: FederationSettings | None = None  # venue -> centre (broker_config/bridge.py)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> Roster:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RosterError(str(path), [RosterProblem("", f"cannot read: {exc}")]) from None
        return cls.from_toml(text, source=str(path), base_dir=path.parent)

    @classmethod
    def from_toml(
        cls, text: str, *, source: str = "<roster>", base_dir: Path | None = None
    ) -> Roster:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RosterError(source, [RosterProblem("", f"not valid TOML: {exc}")]) from None
        roster = cls.from_dict(data, source=source)
        return roster._resolve_paths(base_dir) if base_dir is not None else roster

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<roster>") -> Roster:
        try:
            roster = cls.model_validate(data)
        except ValidationError as exc:
            raise RosterError(source, [_problem(err) for err in exc.errors()]) from None
        problems = roster.problems()
        if problems:
            raise RosterError(source, problems)
        return roster

    @classmethod
    def build(
        cls,
        *,
        venue: str,
        nodes: Mapping[str, Sequence[str]],
        station: str = "station",
        arbiters: Iterable[str] = (),
        displays: Iterable[str] = (),
        host: str = "127.0.0.1",
        port: int = 1883,
        websockets: tuple[str, int] | None = None,
        tls: Mapping[str, Any] | None = None,
        broker: Mapping[str, Any] | None = None,
        bridge: Mapping[str, Any] | None = None,
        federation: Mapping[str, Any] | None = None,
    ) -> Roster:
        """Build and validate a roster in code (tests, demo); same checks as a file."""
        listeners: dict[str, Any] = {"host": host, "port": port}
        if websockets is not None:
            listeners["websockets"] = {"host": websockets[0], "port": websockets[1]}
        if tls is not None:
            listeners["tls"] = dict(tls)
        data: dict[str, Any] = {
            "venue": venue,
            "station": {"username": station},
            "node": [{"id": nid, "boards": list(boards)} for nid, boards in nodes.items()],
            "arbiter": [{"username": u} for u in arbiters],
            "display": [{"username": u} for u in displays],
            "listeners": listeners,
            "broker": dict(broker or {}),
        }
        if bridge is not None:
            data["bridge"] = dict(bridge)
        if federation is not None:
            data["federation"] = dict(federation)
        return cls.from_dict(data, source="Roster.build")

    def with_ports(
        self, *, port: int, ws_port: int | None = None, tls_port: int | None = None
    ) -> Roster:
        """The same roster with other listener ports (a private broker on free ports)."""
        ls = self.listeners
        update: dict[str, Any] = {"port": port}
        if ls.websockets is not None and ws_port is not None:
            update["websockets"] = ls.websockets.model_copy(update={"port": ws_port})
        if ls.tls is not None and tls_port is not None:
            update["tls"] = ls.tls.model_copy(update={"port": tls_port})
        return self.model_copy(update={"listeners": ls.model_copy(update=update)})

    # -- queries --------------------------------------------------------------------------
    @property
    def topic_root(self) -> str:
        return f"qz/v1/{self.venue}"

    @property
    def boards(self) -> tuple[str, ...]:
        return tuple(b for n in self.node for b in n.boards)

    def accounts(self) -> dict[str, str]:
        """Every broker username -> its role (station, node, arbiter, display)."""
        out = {self.station.username: "station"}
        out.update({n.account: "node" for n in self.node})
        out.update({a.username: "arbiter" for a in self.arbiter})
        out.update({d.username: "display" for d in self.display})
        return out

    def board_accounts(self) -> dict[str, str]:
        """Each board's own connection account -> the node account whose password it shares.

        ``{node account}.{board}``: a node opens one connection per board (one will each), and
        the broker makes every connection's client id its username (identity: no account can
        take another's client id), so every connection needs an account of its own. The dot
        cannot occur in a roster id, so these never collide with another account."""
        return {board_account(n.account, b): n.account for n in self.node for b in n.boards}

    def problems(self) -> list[RosterProblem]:
        """The checks that span several entries (pydantic checks each entry alone)."""
        found: list[RosterProblem] = []
        node_at: dict[str, int] = {}
        board_at: dict[str, str] = {}
        for i, n in enumerate(self.node):
            if n.id in node_at:
                found.append(
                    RosterProblem(
                        f"node[{i}].id",
                        f"node {n.id!r} is listed twice (first at node[{node_at[n.id]}])",
                    )
                )
                continue
            node_at[n.id] = i
            for j, b in enumerate(n.boards):
                if b in board_at:
                    found.append(
                        RosterProblem(
                            f"node[{i}].boards[{j}]",
                            f"board {b!r} is already on node {board_at[b]!r}",
                        )
                    )
                board_at.setdefault(b, n.id)
        dup_nodes = {i for i, n in enumerate(self.node) if node_at[n.id] != i}
        entries = [("station.username", self.station.username)]
        entries += [
            (f"node[{i}]." + ("username" if n.username else "id"), n.account)
            for i, n in enumerate(self.node)
            if i not in dup_nodes
        ]
        entries += [(f"arbiter[{i}].username", a.username) for i, a in enumerate(self.arbiter)]
        entries += [(f"display[{i}].username", d.username) for i, d in enumerate(self.display)]
        users: dict[str, str] = {}
        for key, user in entries:
            if user in users:
                found.append(
                    RosterProblem(key, f"username {user!r} is already used by {users[user]}")
                )
            users.setdefault(user, key)
        found += self._screen_problems(node_at)
        ls = self.listeners
        ports = {("listeners.port", ls.port)}
        if ls.websockets is not None:
            ports.add(("listeners.websockets.port", ls.websockets.port))
        if ls.tls is not None:
            ports.add(("listeners.tls.port", ls.tls.port))
        seen: dict[int, str] = {}
        for key, p in sorted(ports):
            if p in seen:
                found.append(RosterProblem(key, f"port {p} is already used by {seen[p]}"))
            seen.setdefault(p, key)
        return found

    def _screen_problems(self, node_at: Mapping[str, int]) -> list[RosterProblem]:
        found: list[RosterProblem] = []
        screen_at: dict[str, int] = {}
        for i, sc in enumerate(self.screen):
            if sc.id in screen_at:
                first = screen_at[sc.id]
                reason = f"screen {sc.id!r} is listed twice (first at screen[{first}])"
                found.append(RosterProblem(f"screen[{i}].id", reason))
            screen_at.setdefault(sc.id, i)
            if sc.boards is not None and sc.nodes:
                found.append(RosterProblem(f"screen[{i}]", "give boards or nodes, not both"))
            for j, n in enumerate(sc.nodes):
                if n not in node_at:
                    found.append(RosterProblem(f"screen[{i}].nodes[{j}]", f"no node {n!r}"))
        return found

    def screen_query(self, screen: Screen) -> str:
        """The display page's query string of ``screen`` (its nodes' boards as ranges)."""
        return screen.query({n.id: n.boards for n in self.node})

    def _resolve_paths(self, base: Path) -> Roster:
        roster = self
        if self.federation is not None:
            roster = self.model_copy(update={"federation": self.federation.resolved(base)})
        return roster._resolve_tls(base)

    def _resolve_tls(self, base: Path) -> Roster:
        tls = self.listeners.tls
        if tls is None:
            return self
        fixed = tls.model_copy(
            update={k: base / getattr(tls, k) for k in ("cafile", "certfile", "keyfile")}
        )
        return self.model_copy(
            update={"listeners": self.listeners.model_copy(update={"tls": fixed})}
        )


def board_account(node_account: str, board: str) -> str:
    """The username a node uses for one board's connection (see ``Roster.board_accounts``)."""
    return f"{node_account}.{board}"


def _problem(err: Any) -> RosterProblem:
    loc = tuple(err.get("loc", ()))
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        reason = f"unknown key {loc[-1]!r}" if loc else "unknown key"
    elif kind == "missing":
        reason = "required key is missing"
    else:
        reason = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return RosterProblem(key, reason)
