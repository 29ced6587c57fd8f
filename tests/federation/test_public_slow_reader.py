"""One PUBLIC reader that asks for 5,000 subscriptions and never reads (issue 27: it held a
venue's publisher for 5 s; live states arrived up to 7.9 s late). Against a real nats-server
from the centre's generated config: a venue publishes live states, an honest viewer on the
public WebSocket times each one; the run is made unloaded and again with the attacker
connected. The loaded p99 stays within 2x of the unloaded one and the attacker is cut."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.request

import nats
import pytest
from support.nats import NatsCentre

from federation_hub.centre_conf import PUBLIC_MAX_SUBSCRIPTIONS

pytestmark = pytest.mark.slow
SUBJECT = "fed.qz.v1.va.board.{}.state"
STATES = 200
RATE = 40  # states a second: a venue's live clocks, a few boards changing at once


def state(board: int, seq: int) -> bytes:
    # about the size of a real snapshot (wire_contract.messages.StateSnapshot)
    body = {
        "v": 1,
        "board": str(board),
        "node": "node-a",
        "game": f"r1-b{board}",
        "session": 1,
        "seq": seq,
        "ts": time.time_ns() // 1_000_000,
        "clock": {"red_ms": 1_700_000 - seq, "black_ms": 1_750_000, "running": "red"},
        "phase": "running",
        "moves": {"red": seq, "black": seq},
        "sent_ns": time.monotonic_ns(),
    }
    return json.dumps(body).encode()


async def latencies(centre: NatsCentre) -> list[float]:
    """ms from the venue's publish to the viewer's receipt, for every state sent."""
    viewer = await nats.connect(servers=[f"ws://127.0.0.1:{centre.nodes[0].ws_port}"])
    venue = await nats.connect(centre.urls, user="venue-va", password="pw-va")
    got: list[float] = []
    done = asyncio.Event()
    heard = asyncio.Event()

    async def on_msg(msg: nats.aio.msg.Msg) -> None:
        body = json.loads(msg.data)
        if body["seq"] < 0:  # the probe that says the viewer's interest has arrived
            heard.set()
            return
        got.append((time.monotonic_ns() - body["sent_ns"]) / 1e6)
        if len(got) == STATES:
            done.set()

    try:
        await viewer.subscribe("fed.qz.v1.va.board.*.state", cb=on_msg)
        await viewer.flush()
        # The viewer's interest crosses two accounts' imports (venue -> FED -> PUBLIC) after
        # its flush returns: a state published at once can find no one (seen: the first of
        # 200 lost on a loaded machine). Probe until one arrives, then time the real ones.
        async with asyncio.timeout(10):
            while not heard.is_set():
                await venue.publish(SUBJECT.format(1), state(1, -1))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(heard.wait(), 0.05)
        for seq in range(STATES):
            await venue.publish(SUBJECT.format(seq % 8 + 1), state(seq % 8 + 1, seq))
            await asyncio.sleep(1 / RATE)
        await venue.flush()
        async with asyncio.timeout(30):
            await done.wait()
    finally:
        await viewer.close()
        await venue.close()
    return got


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def slow_consumers(centre: NatsCentre) -> int:
    url = f"http://127.0.0.1:{centre.nodes[0].http_port}/varz"
    with urllib.request.urlopen(url, timeout=5) as r:
        return int(json.load(r)["slow_consumers"])


async def test_a_public_reader_with_5000_subscriptions_stalls_no_one_and_is_cut(
    nats_centre: NatsCentre,
) -> None:
    await latencies(nats_centre)  # warm-up: connections, JIT-free but caches and routes
    unloaded = await latencies(nats_centre)
    reader, writer = await asyncio.open_connection("127.0.0.1", nats_centre.nodes[0].port)
    await reader.readline()  # INFO
    connect = {"user": "public", "pass": "public", "verbose": False, "pedantic": False}
    writer.write(f"CONNECT {json.dumps(connect)}\r\n".encode())
    subs = "".join(f"SUB fed.qz.v1.va.board.*.state {i}\r\n" for i in range(1, 5001))
    writer.write(subs.encode() + b"PING\r\n")
    await writer.drain()
    await asyncio.sleep(0.5)  # connected and subscribed (as far as it is let)
    # ...and never reads while the venue goes on
    loaded = await latencies(nats_centre)
    assert len(loaded) == STATES  # every state arrived
    print(f"p99 unloaded {p99(unloaded):.1f} ms, with the reader {p99(loaded):.1f} ms")
    # within 2x (of at least 5 ms: a sub-millisecond p99 on a shared machine is noise)
    assert p99(loaded) <= 2 * max(p99(unloaded), 5.0), (p99(unloaded), p99(loaded))
    # The venue goes on (a busy round: 1 KB states, 8 boards) while the reader reads nothing:
    # it is cut as a slow consumer, the venue never held back.
    venue = await nats.connect(nats_centre.urls, user="venue-va", password="pw-va")
    worst = 0.0
    try:
        start = time.monotonic()
        seq = 0
        while slow_consumers(nats_centre) == 0 and time.monotonic() - start < 30:
            for _ in range(200):
                seq += 1
                t0 = time.monotonic()
                await venue.publish(SUBJECT.format(seq % 8 + 1), state(seq % 8 + 1, seq) * 3)
                worst = max(worst, time.monotonic() - t0)
            await venue.flush()
            await asyncio.sleep(0.05)
    finally:
        await venue.close()
    assert slow_consumers(nats_centre) >= 1, "the reader was never cut"
    rest = b""
    async with asyncio.timeout(10):
        while chunk := await reader.read(1 << 20):
            rest += chunk  # what it was sent before the cut, then the end of the stream
    assert b"-ERR 'maximum subscriptions exceeded'" in rest
    assert rest.count(b"MSG ") <= seq * PUBLIC_MAX_SUBSCRIPTIONS
    writer.close()
