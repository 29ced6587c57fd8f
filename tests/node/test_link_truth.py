"""The node's MQTT link tells the truth (issue 13, cases 6–8), against a real broker.

- every connection is numbered (``conn``) in its ``online`` and its will, so the station can
  order a will after the ``online`` of its own connection (docs/wire.md "Status order");
- ``clock_probe`` is answered with the node's wall clock at receipt and answer, and changes
  nothing (docs/wire.md "Clock probe");
- reconnects back off, jittered, never past ``reconnect_max_s`` (2 s by default), and a
  backlog goes out with at most ``MAX_INFLIGHT`` publishes awaiting their acknowledgement:
  no aiomqtt "pending publish calls" warnings.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import time

import pytest
from support.node import Probe, node_config, running_node

from board_nodes.config import BrokerConfig, NodeConfig
from board_nodes.link import MAX_INFLIGHT, broker_keepalive, reconnect_delays
from clock_service import Side
from firmware_bridge.simulated import SimulatedFace

pytestmark = pytest.mark.broker


# -- pure ------------------------------------------------------------------------------------
def test_reconnect_delays_double_jittered_and_never_pass_the_maximum() -> None:
    defaults = BrokerConfig()
    assert defaults.reconnect_max_s <= 2.0 and defaults.connect_timeout_s <= 2.0
    rng = random.Random(13).random
    delays = [d for _, d in zip(range(40), reconnect_delays(0.2, 2.0, rng), strict=False)]
    assert all(0.1 <= d <= 2.0 for d in delays)
    assert delays[0] <= 0.2 and max(delays[:3]) < 1.0  # short at first
    assert len({round(d, 6) for d in delays[10:]}) > 20  # jittered at the cap, not in step
    assert all(d >= 1.0 for d in delays[10:])  # the upper half of the capped step
    # Extremes of the jitter stay within the bound too.
    assert list(zip(range(6), reconnect_delays(0.5, 2.0, lambda: 1.0), strict=False))[-1][1] == 2.0
    assert next(reconnect_delays(5.0, 2.0, lambda: 1.0)) == 2.0  # min above max: max wins


@pytest.mark.parametrize(
    ("keepalive_s", "asked"), [(6, 1), (7, 2), (10, 5), (12, 7), (30, 25), (600, 595)]
)
def test_the_broker_keepalive_leaves_mosquitto_time_to_publish_the_will(
    keepalive_s: int, asked: int
) -> None:
    # Mosquitto 2 drops a client when now_s - last_in_s > ⌊1.5 k⌋, checking every 6 s.
    assert broker_keepalive(keepalive_s) == asked
    assert (3 * asked) // 2 + 1 + 6 + 0.5 <= 1.5 * keepalive_s


def test_a_keepalive_too_short_for_the_promise_is_refused() -> None:
    with pytest.raises(ValueError, match="keepalive_s"):
        BrokerConfig(keepalive_s=5)
    with pytest.raises(ValueError, match="connect_timeout_s"):
        BrokerConfig(connect_timeout_s=0)


# -- against the broker ----------------------------------------------------------------------
async def test_a_will_is_delivered_with_its_connections_number(broker_factory, tmp_path) -> None:
    """The will the broker publishes for a dead connection carries that connection's epoch
    (the wall ms it was built at, its own ts), and the next connection's online a later one."""
    broker = broker_factory()
    face = SimulatedFace(mode="idle")
    config = node_config(broker, "node-a", ["1"], tmp_path)
    seen: list[dict] = []
    async with Probe(broker) as probe, running_node(config, {"1": face}) as node:
        await probe.wait_for(lambda: probe.status.get("1", {}).get("state") == "online")
        first_conn, first_ts = probe.status["1"]["conn"], probe.status["1"]["ts"]
        link = node.links["1"]
        client = link.client
        assert client is not None
        # Break the TCP connection under paho (no DISCONNECT): the broker publishes the will.
        sock = client._client.socket()
        assert sock is not None
        sock.shutdown(socket.SHUT_RDWR)
        await probe.wait_for(lambda: probe.status.get("1", {}).get("state") == "lost", 10)
        seen.append(probe.status["1"])
        await probe.wait_for(
            lambda: (
                probe.status["1"]["state"] == "online" and probe.status["1"]["conn"] > first_conn
            ),
            10,
        )
        seen.append(probe.status["1"])
    will, online = seen
    assert will["conn"] == first_conn == will["ts"] and online["conn"] > will["conn"]
    assert will["ts"] < first_ts  # stamped before its connection's online: ts cannot order


async def test_a_clock_probe_is_answered_with_the_nodes_clock_and_changes_nothing(
    venue_broker, tmp_path
) -> None:
    face = SimulatedFace(mode="idle")
    config = node_config(venue_broker, "node-b", ["3"], tmp_path)
    async with Probe(venue_broker) as probe, running_node(config, {"3": face}) as node:
        t0 = _wall_ms()
        reply = await probe.command("3", "clock_probe", {"t0": t0})
        t3 = _wall_ms()
        assert reply["ok"] is True and reply["error"] is None
        rx, tx = reply["clock"]["rx"], reply["clock"]["tx"]
        assert t0 <= rx <= tx <= t3  # the same machine's clock: in order
        again = await probe.command("3", "clock_probe", {"t0": t0}, txn=reply["txn"])
        assert again["clock"]["rx"] >= rx  # answered afresh, never from the journal
        assert node.journal.reply_for("3", reply["txn"]) is None
        assert node.links["3"].counters["clock_probes"] == 2
        # Bad probes get a reason; a venue-wide one is not a probe of anyone's clock.
        for args in ({}, {"t0": -1}, {"t0": "now"}, {"t0": 2**60}):
            bad = await probe.command("3", "clock_probe", args)
            assert bad["ok"] is False and "clock_probe args" in bad["error"]
        assert "clock" not in bad  # an ordinary reply keeps the old shape
        txn = await probe.venue_command("clock_probe", {"t0": t0})
        await probe.wait_for(lambda: txn in probe.replies)
        assert probe.replies[txn]["ok"] is False


async def test_a_backlog_goes_out_in_a_bounded_window_without_warnings(
    broker_factory, tmp_path, caplog
) -> None:
    """150 events played while the broker is down go out in order, none lost, and aiomqtt
    never warns of pending publish calls (today: ~300 warnings, 64 publishes at once)."""
    broker = broker_factory()
    face = SimulatedFace(mode="idle")
    config = node_config(broker, "node-a", ["1"], tmp_path)
    caplog.set_level(logging.WARNING)
    async with running_node(config, {"1": face}) as node:
        async with Probe(broker) as probe:
            await probe.command("1", "set_game", {"game": "g", "tc": "30m+5s"})
            await probe.command("1", "start")
            await probe.wait_for(lambda: bool(probe.board_events("1", "started")))
        broker.kill()
        await asyncio.sleep(0.2)
        for side in [Side.RED, Side.BLACK] * 75:
            face.press(side)
            await asyncio.sleep(0.003)
        await _until(lambda: node.journal.unsent_count("1") >= 150)
        caplog.clear()
        broker.restart()
        async with Probe(broker) as probe:
            await asyncio.wait_for(node.links["1"].connected.wait(), 10)
            await probe.wait_for(lambda: len(probe.board_events("1", "move")) >= 150, 20)
            seqs = [e["seq"] for e in probe.board_events("1")]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # in order, once each
    floods = [r.getMessage() for r in caplog.records if "pending publish calls" in r.getMessage()]
    assert floods == []
    assert MAX_INFLIGHT < 10  # below aiomqtt's warning threshold, subscribes included


async def test_a_node_config_round_trips_the_new_bounds(tmp_path) -> None:
    config = NodeConfig.model_validate(
        {
            "venue": "v",
            "node": "n",
            "data_dir": str(tmp_path),
            "broker": {"keepalive_s": 6, "connect_timeout_s": 1.5, "reconnect_max_s": 1},
            "board": [{"id": "1", "face": "simulated"}],
        }
    )
    assert config.broker.connect_timeout_s == 1.5 and broker_keepalive(6) == 1


# -- helpers ---------------------------------------------------------------------------------
def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


async def _until(predicate, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)
