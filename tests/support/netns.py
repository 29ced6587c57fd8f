"""A real network path for a node: its own network namespace joined to this one by a veth pair.

- ``netns_link`` (function): a :class:`NetnsLink` — namespace ``qz13-<tag>`` with the node's
  end ``10.213.K.2/30``, this namespace's end ``10.213.K.1/30`` (K chosen free, the tag unique
  per test), loopback up inside. Cuts are netfilter rules *inside the node's namespace*
  (``cut()``: DROP both ways on its veth, a blackhole: no RST, connections stay half-open),
  ``heal()``, ``link_down()``/``link_up()``. Deleting the namespace at teardown takes its
  rules and both veth ends with it; nothing is ever added to this namespace's netfilter.
- ``netns_skip_reason()``: why namespaces cannot be used here (not root, no ``ip``/``iptables``,
  or creating one fails), or None.

Only our own addresses (10.213.K.0/30) are ever targets.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from support.parts import skip_missing

__all__ = ["NetnsLink", "netns_skip_reason"]

PREFIX = "10.213"


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=20)


@functools.cache
def netns_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "iptables"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install iproute2 iptables)"
    name = f"qz13-chk{secrets.token_hex(3)}"
    made = _run("ip", "netns", "add", name, check=False)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    try:
        probe = _run("ip", "netns", "exec", name, "iptables", "-S", check=False)
        if probe.returncode != 0:
            return f"iptables does not work in a namespace: {probe.stderr.strip()}"
    finally:
        _run("ip", "netns", "del", name, check=False)
    return None


def _free_octet() -> int:
    used = _run("ip", "-o", "-4", "addr", "show").stdout
    free = [k for k in range(1, 255) if f" {PREFIX}.{k}." not in used]
    if not free:
        raise RuntimeError(f"no free {PREFIX}.K.0/30 left")
    return free[secrets.randbelow(len(free))]


@dataclass
class NetnsLink:
    ns: str
    host_if: str
    node_if: str
    host_ip: str
    node_ip: str
    cut_now: bool = False

    def exec_argv(self, *argv: str) -> list[str]:
        """``argv`` run inside the node's namespace."""
        return ["ip", "netns", "exec", self.ns, *argv]

    def _in_ns(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run(*self.exec_argv(*argv), check=check)

    def cut(self) -> None:
        """A blackhole: every packet on the node's veth dropped, both ways, no reset."""
        self._in_ns("iptables", "-I", "INPUT", "-i", self.node_if, "-j", "DROP")
        self._in_ns("iptables", "-I", "OUTPUT", "-o", self.node_if, "-j", "DROP")
        self.cut_now = True

    def heal(self) -> None:
        self._in_ns("iptables", "-D", "INPUT", "-i", self.node_if, "-j", "DROP")
        self._in_ns("iptables", "-D", "OUTPUT", "-o", self.node_if, "-j", "DROP")
        self.cut_now = False

    def link_down(self) -> None:
        self._in_ns("ip", "link", "set", self.node_if, "down")

    def link_up(self) -> None:
        self._in_ns("ip", "link", "set", self.node_if, "up")

    def close(self) -> None:
        _run("ip", "netns", "del", self.ns, check=False)
        _run("ip", "link", "del", self.host_if, check=False)  # gone with the namespace, normally


def make_link() -> NetnsLink:
    tag = secrets.token_hex(3)
    k = _free_octet()
    link = NetnsLink(
        ns=f"qz13-{tag}",
        host_if=f"qz13h{tag}",
        node_if=f"qz13n{tag}",
        host_ip=f"{PREFIX}.{k}.1",
        node_ip=f"{PREFIX}.{k}.2",
    )
    try:
        _run("ip", "netns", "add", link.ns)
        _run("ip", "link", "add", link.host_if, "type", "veth", "peer", "name", link.node_if)
        _run("ip", "link", "set", link.node_if, "netns", link.ns)
        _run("ip", "addr", "add", f"{link.host_ip}/30", "dev", link.host_if)
        _run("ip", "link", "set", link.host_if, "up")
        link._in_ns("ip", "addr", "add", f"{link.node_ip}/30", "dev", link.node_if)
        link._in_ns("ip", "link", "set", link.node_if, "up")
        link._in_ns("ip", "link", "set", "lo", "up")
    except BaseException:
        link.close()
        raise
    return link


@pytest.fixture
def netns_link() -> Iterator[NetnsLink]:
    reason = netns_skip_reason()
    if reason is not None:
        skip_missing("network namespaces", reason)
    link = make_link()
    try:
        yield link
    finally:
        link.close()
