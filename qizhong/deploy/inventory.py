"""An Ansible inventory generated from the venue roster (``qizhong deploy inventory``).

The roster says which nodes exist and which boards each drives; the inventory adds what
Ansible needs to reach them: a host name per node (``<id>.<domain>`` by default, the name
Raspberry Pi Imager sets), the station host, the broker URL the nodes use, and the path of
each account's credentials file written by ``qizhong broker-config`` on the control machine.

The output is YAML in which every string is a JSON-quoted scalar, so board ids like ``1`` or
``on`` stay strings and no YAML library is needed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from broker_config.roster import Roster

__all__ = ["Face", "InventoryOptions", "build_inventory", "render_yaml", "write_inventory"]

Face = Literal["gpio", "serial", "simulated"]


@dataclass(frozen=True, slots=True, kw_only=True)
class InventoryOptions:
    station_host: str = "station.local"
    domain: str = "local"  # node hosts are "<id>.<domain>"; "" for bare ids
    broker_url: str | None = None  # None: from the roster's listener (public_host or host)
    credentials_dir: Path = Path("broker/credentials")
    face: Face = "gpio"
    ansible_user: str | None = "pi"


def _broker_url(roster: Roster, options: InventoryOptions) -> str:
    if options.broker_url:
        return options.broker_url
    ls = roster.listeners
    host = ls.public_host or ls.host
    if host in ("0.0.0.0", "::", "127.0.0.1", "::1"):
        # A wildcard or loopback bind is not an address a Pi can reach: use the station's name.
        host = options.station_host
    host = f"[{host}]" if ":" in host else host
    return f"mqtt://{host}:{ls.port}"


def _host(name: str, domain: str) -> str:
    return f"{name}.{domain}" if domain else name


def build_inventory(roster: Roster, options: InventoryOptions | None = None) -> dict[str, Any]:
    """The inventory as plain data: ``all.vars``, groups ``station``, ``nodes``, ``screens``."""
    options = options or InventoryOptions()
    creds = options.credentials_dir
    common: dict[str, Any] = {}
    if options.ansible_user:
        common["ansible_user"] = options.ansible_user
    station = {
        "ansible_host": options.station_host,
        **common,
        "qizhong_username": roster.station.username,
        "qizhong_credentials_file": str(creds / f"{roster.station.username}.json"),
    }
    nodes: dict[str, Any] = {}
    for node in roster.node:
        nodes[node.id] = {
            "ansible_host": _host(node.id, options.domain),
            **common,
            "qizhong_node_id": node.id,
            "qizhong_username": node.account,
            "qizhong_credentials_file": str(creds / f"{node.account}.json"),
            "qizhong_boards": [{"id": b, "face": options.face} for b in node.boards],
        }
    screens: dict[str, Any] = {}
    for screen in roster.screen:
        screens[screen.id] = {
            "ansible_host": _host(screen.id, options.domain),
            **common,
            "qizhong_display_id": screen.id,
            "qizhong_display_query": roster.screen_query(screen),
        }
    return {
        "all": {
            "vars": {
                "qizhong_venue": roster.venue,
                "qizhong_broker_url": _broker_url(roster, options),
                "qizhong_station_host": options.station_host,
            },
            "children": {
                "station": {"hosts": {"station": station}},
                "nodes": {"hosts": nodes},
                "screens": {"hosts": screens},
            },
        }
    }


def _scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


def _emit(value: Any, indent: int, out: list[str]) -> None:
    pad = "  " * indent
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, Mapping | list) and item:
                out.append(f"{pad}{_scalar(key)}:")
                _emit(item, indent + 1, out)
            else:
                empty = "{}" if isinstance(item, Mapping) else "[]"
                text = empty if isinstance(item, Mapping | list) else _scalar(item)
                out.append(f"{pad}{_scalar(key)}: {text}")
    elif isinstance(value, Sequence) and not isinstance(value, str):
        for item in value:
            if isinstance(item, Mapping) and item:
                # Flow style keeps a board on one line: {"id": "1", "face": "gpio"}.
                inner = ", ".join(f"{_scalar(k)}: {_scalar(v)}" for k, v in item.items())
                out.append(f"{pad}- {{{inner}}}")
            else:
                out.append(f"{pad}- {_scalar(item)}")


def render_yaml(inventory: Mapping[str, Any], *, header: str = "") -> str:
    out = [f"# {line}" if line else "#" for line in header.splitlines()]
    _emit(inventory, 0, out)
    return "\n".join(out) + "\n"


def write_inventory(
    roster_path: str | Path, out: str | Path, options: InventoryOptions | None = None
) -> dict[str, Any]:
    """Load the roster (raising :class:`RosterError` on a bad one) and write the inventory."""
    roster = Roster.load(roster_path)
    inventory = build_inventory(roster, options)
    header = (
        f"Generated by `qizhong deploy inventory` from {roster_path}: edit the roster and\n"
        "run it again; per-host changes (wiring, faces) belong in host_vars/, not here."
    )
    Path(out).write_text(render_yaml(inventory, header=header), encoding="utf-8")
    return inventory
