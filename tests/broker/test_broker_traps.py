"""Every Mosquitto trap of DESIGN.md §5, against the real broker, with a control where the
trap itself can be shown (so the check is known to be able to fail)."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import stat
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from support.broker import collect, mqtt_client, new_broker_dir, standard_roster
from support.parts import needs_part, skip_missing
from support.tls import make_test_certs

from broker_config import MosquittoError, MosquittoProcess

pytestmark = pytest.mark.broker

R = "qz/v1/test"
Factory = Callable[..., MosquittoProcess]


# -- websockets: bound to the address asked for ------------------------------------------------
def listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket in LISTEN on ``port`` (from /proc/net/tcp{,6})."""
    found: set[str] = set()
    for name, size in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(addr_hex)
            # the kernel prints each 32-bit word in host (little-endian) order
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, size, 4))
            found.add(str(ipaddress.ip_address(raw)))
    return found


def refused(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex((host, port)) != 0


async def test_websockets_listener_is_reachable(venue_broker: MosquittoProcess) -> None:
    tag = uuid.uuid4().hex
    async with mqtt_client(venue_broker, "hall", transport="websockets") as display:
        await display.subscribe(f"{R}/board/7/state", qos=1)
        async with mqtt_client(venue_broker, "node-c") as node:
            await node.publish(f"{R}/board/7/state", tag, qos=1)
        got = await collect(display, 1, within=5)
    assert [m.payload for m in got] == [tag.encode()]


async def test_websockets_listener_is_bound_to_the_asked_address_only(
    venue_broker: MosquittoProcess,
) -> None:
    assert venue_broker.ws_host == "127.0.0.1"
    assert listening_addresses(venue_broker.ws_port) == {"127.0.0.1"}
    assert refused("127.0.0.2", venue_broker.ws_port)  # another loopback address: nobody home
    assert listening_addresses(venue_broker.port) == {"127.0.0.1"}


def test_control_without_socket_domain_websockets_binds_everywhere() -> None:
    # The trap itself, so the check above is known to catch it.
    directory = new_broker_dir()
    broker = MosquittoProcess.from_roster(standard_roster(), directory, start=False)
    conf = broker.files.conf
    conf.write_text(conf.read_text().replace("socket_domain ipv4\n", ""))
    with broker:
        assert listening_addresses(broker.ws_port) - {"127.0.0.1"}
        assert not refused("127.0.0.2", broker.ws_port)


# -- set_tcp_nodelay ----------------------------------------------------------------------------
def test_tcp_nodelay_is_set_and_accepted(venue_broker: MosquittoProcess) -> None:
    assert "set_tcp_nodelay true" in venue_broker.files.conf.read_text().splitlines()
    assert venue_broker.running
    assert "Unknown configuration" not in venue_broker.log_tail(200)


def test_control_an_unknown_option_stops_the_broker_with_its_log(broker_factory: Factory) -> None:
    # What "accepted" means: mosquitto 2.0.11 refuses to start on an option it lacks.
    broker = broker_factory()
    broker.terminate()
    conf = broker.files.conf
    conf.write_text(conf.read_text().replace("set_tcp_nodelay true", "set_tcp_nodelayy true"))
    with pytest.raises(MosquittoError, match="set_tcp_nodelayy") as info:
        broker.start()
    assert "exited" in str(info.value)


# -- max_queued_messages -----------------------------------------------------------------------
def _persistent(broker: MosquittoProcess, identifier: str) -> aiomqtt.Client:
    props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
    props.SessionExpiryInterval = 600
    return mqtt_client(
        broker, "station", identifier=identifier, clean_start=False, properties=props
    )


async def _burst_to_offline_subscriber(broker: MosquittoProcess, count: int) -> list[int]:
    """Publish ``count`` QoS 1 events while the subscriber is away; what does it get back?"""
    sub_id = f"queue-{uuid.uuid4().hex[:8]}"
    topic = f"{R}/board/8/event"
    async with _persistent(broker, sub_id) as sub:
        await sub.subscribe(topic, qos=1)
    async with mqtt_client(broker, "node-c") as node:
        for i in range(count):
            await node.publish(topic, str(i), qos=1)
        async with _persistent(broker, sub_id) as sub:
            await node.publish(topic, "end", qos=1)  # queued behind the backlog
            got: list[int] = []
            async with asyncio.timeout(60):
                async for message in sub.messages:
                    if message.payload == b"end":
                        return got
                    got.append(int(message.payload))
    raise AssertionError("unreachable")


async def test_burst_beyond_mosquittos_default_queue_is_fully_delivered(
    venue_broker: MosquittoProcess,
) -> None:
    assert venue_broker.files.max_queued_messages >= 3000
    got = await _burst_to_offline_subscriber(venue_broker, 3000)
    assert got == list(range(3000))


async def test_control_default_queue_drops_the_burst(broker_factory: Factory) -> None:
    broker = broker_factory(standard_roster(max_queued_messages=1000))
    got = await _burst_to_offline_subscriber(broker, 3000)
    assert 0 < len(got) < 3000  # silently dropped: the reason the queue is sized


# -- the password file and the mosquitto user --------------------------------------------------
def _uid_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[2])  # effective uid
    raise AssertionError("no Uid line")


def test_password_file_is_0640_group_mosquitto_and_read_as_mosquitto(
    venue_broker: MosquittoProcess,
) -> None:
    import grp
    import pwd

    try:
        group = grp.getgrnam("mosquitto")
    except KeyError:
        skip_missing("the mosquitto group", "apt-get install mosquitto")
    for path in (venue_broker.files.password_file, venue_broker.files.acl_file):
        st = path.stat()
        assert stat.S_IMODE(st.st_mode) == 0o640
        assert st.st_gid == group.gr_gid
    assert venue_broker.pid is not None
    if os.geteuid() == 0:  # root here: mosquitto dropped to its own user and still read it
        assert _uid_of(venue_broker.pid) == pwd.getpwnam("mosquitto").pw_uid


@needs_part(os.geteuid() != 0, "root", "the trap needs a root-started mosquitto")
def test_control_a_root_only_password_file_stops_the_broker(broker_factory: Factory) -> None:
    broker = broker_factory()
    broker.terminate()
    os.chmod(broker.files.password_file, 0o600)
    os.chown(broker.files.password_file, 0, 0)
    with pytest.raises(MosquittoError, match="Unable to open pwfile"):
        broker.start()


@needs_part(os.geteuid() != 0, "root", "only root makes mosquitto drop privileges")
def test_runner_explains_an_unreachable_directory(tmp_path: Path) -> None:
    directory = tmp_path / "broker"  # under pytest's 0700 folders
    with pytest.raises(MosquittoError, match="mosquitto user cannot enter"):
        MosquittoProcess.from_roster(standard_roster(), directory)


# -- persistence -------------------------------------------------------------------------------
async def _retained(broker: MosquittoProcess, topic: str) -> bytes | None:
    # The arbiter's account: a station client here would be the station's (one client id per
    # account) and its clean start would end the persistent session under test.
    async with mqtt_client(broker, "arb") as client:
        await client.subscribe(topic, qos=1)
        got = await collect(client, 1, within=2)
    return bytes(got[0].payload) if got else None


async def _wait_for_autosave(broker: MosquittoProcess, since: float) -> None:
    db = broker.files.persistence_dir / "mosquitto.db"
    async with asyncio.timeout(10):
        # mosquitto tells nobody when it saved: watch the file
        while not (db.exists() and db.stat().st_mtime > since):
            await asyncio.sleep(0.1)


async def test_retained_state_survives_kill_after_autosave(broker_factory: Factory) -> None:
    broker = broker_factory(standard_roster(autosave_interval_s=1))
    tag = uuid.uuid4().hex.encode()
    async with mqtt_client(broker, "node-a") as node:
        await node.publish(f"{R}/board/1/state", tag, qos=1, retain=True)
    await _wait_for_autosave(broker, since=time.time())
    broker.restart(kill=True)
    assert await _retained(broker, f"{R}/board/1/state") == tag


async def test_retained_state_and_queue_survive_a_clean_restart(broker_factory: Factory) -> None:
    broker = broker_factory(standard_roster(autosave_interval_s=3600))
    tag = uuid.uuid4().hex.encode()
    sub_id = f"persist-{uuid.uuid4().hex[:8]}"
    async with _persistent(broker, sub_id) as sub:
        await sub.subscribe(f"{R}/board/2/event", qos=1)
    async with mqtt_client(broker, "node-a") as node:
        await node.publish(f"{R}/board/2/state", tag, qos=1, retain=True)
        await node.publish(f"{R}/board/2/event", tag, qos=1)
    broker.restart()  # SIGTERM: mosquitto saves on the way out
    assert await _retained(broker, f"{R}/board/2/state") == tag
    async with _persistent(broker, sub_id) as sub:
        got = await collect(sub, 1, within=5)
    assert [bytes(m.payload) for m in got] == [tag]


# -- the %c trap ---------------------------------------------------------------------------------
async def test_control_a_client_id_pattern_is_spoofable(broker_factory: Factory) -> None:
    # Why the ACL has no `pattern ... %c`: with one, node-a calling itself "node-b" writes
    # node-b's boards. (test_broker_acl checks the generated ACL refuses the same.)
    broker = broker_factory()
    broker.terminate()
    # Plain Mosquitto: without the generated `use_username_as_clientid` (which alone defeats
    # this: the liar's client id becomes its username, see test_broker_identity.py).
    conf = broker.files.conf.read_text().replace("use_username_as_clientid true", "")
    broker.files.conf.write_text(conf)
    broker.files.acl_file.write_text(
        f"user station\ntopic read {R}/#\n\npattern write {R}/board/+/event\n"
        f"# e.g. clients named after their node, boards checked by the node... or not\n"
        f"pattern write {R}/node/%c/#\n"
    )
    broker.start()
    tag = uuid.uuid4().hex
    async with mqtt_client(broker, "station") as watcher:
        await watcher.subscribe(f"{R}/#", qos=1)
        async with mqtt_client(broker, "node-a", identifier="node-b") as liar:
            await liar.publish(f"{R}/node/node-b/event", tag, qos=1)
        got = await collect(watcher, 1, within=5)
    assert [str(m.topic) for m in got] == [f"{R}/node/node-b/event"]


# -- TLS and the bridge --------------------------------------------------------------------------
async def test_tls_listener_when_certificates_are_given(
    broker_factory: Factory, tmp_path: Path
) -> None:
    import ssl

    from broker_config import Roster

    certs = make_test_certs(tmp_path)
    os.chmod(certs["keyfile"], 0o600)  # like a real key: the broker gets a readable copy
    base = standard_roster()
    roster = Roster.build(
        venue="test", nodes={n.id: list(n.boards) for n in base.node}, tls={"port": 8883, **certs}
    )
    broker = broker_factory(roster)
    context = ssl.create_default_context(cafile=certs["cafile"])
    user, password = broker.credentials("station")
    tag = uuid.uuid4().hex
    async with aiomqtt.Client(
        "127.0.0.1",
        broker.tls_port,
        username=user,
        password=password,
        protocol=aiomqtt.ProtocolVersion.V5,
        tls_context=context,
    ) as c:
        await c.subscribe(f"{R}/station/status", qos=1)
        await c.publish(f"{R}/station/status", tag, qos=1)
        got = await collect(c, 1, within=5)
    assert [bytes(m.payload) for m in got] == [tag.encode()]
    assert broker.files.credentials("station").urls["mqtts"].startswith("mqtts://127.0.0.1:")


async def test_bridge_forwards_state_but_not_events(broker_factory: Factory) -> None:
    from broker_config import Roster

    boards = [str(b) for b in range(1, 13)]
    remote = broker_factory(Roster.build(venue="test", nodes={"bridge": boards}))
    user, password = remote.credentials("bridge")
    local = broker_factory(
        Roster.build(
            venue="test",
            nodes={"node-a": ["1", "2"]},
            bridge={
                "host": "127.0.0.1",
                "port": remote.port,
                "username": user,
                "password": password,
            },
        )
    )
    tag = uuid.uuid4().hex
    async with mqtt_client(remote, "station") as far, mqtt_client(local, "node-a") as node:
        await far.subscribe(f"{R}/#", qos=1)
        got: set[str] = set()
        async with asyncio.timeout(15):  # the bridge connects in the background
            while f"{R}/board/1/state" not in got:
                await node.publish(f"{R}/board/1/event", tag, qos=1)
                await node.publish(f"{R}/board/1/state", tag, qos=1)
                got |= {
                    str(m.topic)
                    for m in await collect(far, within=0.3)
                    if m.payload == tag.encode()
                }
    assert got == {f"{R}/board/1/state"}
