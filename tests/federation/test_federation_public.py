"""Live clocks for the public (issue 18): viewers subscribe read-only on the centre's WebSocket
listener, in a PUBLIC account that can read board state and nothing else — no venue, no event,
no command, no JetStream — tested against the real nats-server."""

from __future__ import annotations

import asyncio
import contextlib
import json

import nats
import nats.errors
import pytest
from nats.aio.msg import Msg
from support.nats import HUB_USER, NatsCentre

STATE = "fed.qz.v1.va.board.1.state"


def ws_url(centre: NatsCentre) -> str:
    return f"ws://127.0.0.1:{centre.nodes[0].ws_port}"


async def errors_of(nc_kw: dict[str, object]) -> tuple[nats.NATS, list[Exception]]:
    errs: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        errs.append(exc)

    nc = await nats.connect(error_cb=on_error, **nc_kw)  # type: ignore[arg-type]
    return nc, errs


async def test_a_browser_viewer_without_credentials_gets_state_live(
    nats_centre: NatsCentre,
) -> None:
    viewer, _ = await errors_of({"servers": [ws_url(nats_centre)]})
    venue = await nats.connect(nats_centre.urls, user="venue-va", password="pw-va")
    try:
        got: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()

        async def on_msg(msg: nats.aio.msg.Msg) -> None:
            got.put_nowait((msg.subject, msg.data))

        await viewer.subscribe("fed.qz.v1.*.board.*.state", cb=on_msg)
        await viewer.flush()
        await venue.publish("fed.qz.v1.va.board.1.event", b'{"seq": 1}')
        # Until the viewer's interest has crossed the account import (asynchronous in the
        # server), a state may go nowhere: offer it until one arrives.
        async with asyncio.timeout(15):
            while got.empty():
                await venue.publish(STATE, json.dumps({"seq": 1}).encode())
                await venue.flush()
                await asyncio.sleep(0.2)
        subject, data = got.get_nowait()
        await asyncio.sleep(0.3)
        while not got.empty():
            assert got.get_nowait()[0] == STATE  # only states, never the event
        assert subject == STATE and json.loads(data) == {"seq": 1}
        await venue.publish("fed.qz.v1.va.board.1.event", b'{"seq": 2}')
        await venue.flush()
        await asyncio.sleep(0.5)
        assert got.empty()  # the event never reached the public side
    finally:
        await viewer.close()
        await venue.close()


@pytest.mark.parametrize(
    "subject",
    [
        "fed.qz.v1.va.board.1.event",
        "fed.qz.v1.va.board.1.status",
        "fed.qz.v1.va.board.1.cmd",
        "fed.qz.v1.va.station.record.1",  # a venue's record before the hub checked it
        "fed.>",
        ">",
        "$JS.API.>",
        "$MQTT.>",
    ],
)
async def test_the_public_account_cannot_subscribe_beyond_state(
    nats_centre: NatsCentre, subject: str
) -> None:
    viewer, errs = await errors_of({"servers": [ws_url(nats_centre)]})
    try:
        await viewer.subscribe(subject)
        await viewer.flush()
        await asyncio.sleep(0.3)
        assert any("permissions violation" in str(e).lower() for e in errs), errs
    finally:
        await viewer.close()


@pytest.mark.parametrize(
    "subject",
    ["fed.qz.v1.va.board.1.cmd", "fed.qz.v1.va.board.1.state", "qz.v1.va.venue.cmd", "x"],
)
async def test_the_public_account_can_publish_nothing(
    nats_centre: NatsCentre, subject: str
) -> None:
    viewer, errs = await errors_of({"servers": [ws_url(nats_centre)]})
    hub = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    try:
        seen: list[str] = []

        async def on_msg(msg: nats.aio.msg.Msg) -> None:
            seen.append(msg.subject)

        await hub.subscribe(">", cb=on_msg)
        await hub.flush()
        await viewer.publish(subject, b"{}")
        await viewer.flush()
        await asyncio.sleep(0.3)
        assert any("permissions violation" in str(e).lower() for e in errs), errs
        assert subject not in seen
    finally:
        await viewer.close()
        await hub.close()


async def test_the_public_account_has_no_jetstream(nats_centre: NatsCentre) -> None:
    viewer, _ = await errors_of({"servers": [ws_url(nats_centre)]})
    try:
        with pytest.raises((nats.errors.Error, TimeoutError)):
            await viewer.jetstream(timeout=1).stream_info("QZ_FED_EVENTS")
    finally:
        await viewer.close()


async def test_a_venue_cannot_read_the_federation(nats_centre: NatsCentre) -> None:
    venue, errs = await errors_of(
        {"servers": nats_centre.urls, "user": "venue-va", "password": "pw-va"}
    )
    try:
        await venue.subscribe("fed.qz.v1.vb.board.1.state")
        await venue.flush()
        await asyncio.sleep(0.3)
        assert any("permissions violation" in str(e).lower() for e in errs), errs
    finally:
        await venue.close()


async def _wait_nonempty(queue: asyncio.Queue[bytes]) -> None:
    while queue.empty():
        await asyncio.sleep(0.02)


async def test_a_venue_reads_only_the_hubs_asks_for_its_own_events(
    nats_centre: NatsCentre,
) -> None:
    """The mending (docs/federation.md): a venue's user reads one subject, the hub's asks for
    its own events; not another venue's, and it may not ask anyone itself."""
    venue, errs = await errors_of(
        {"servers": nats_centre.urls, "user": "venue-va", "password": "pw-va"}
    )
    hub = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    try:
        got: asyncio.Queue[bytes] = asyncio.Queue()

        async def on_msg(msg: Msg) -> None:
            got.put_nowait(msg.data)

        await venue.subscribe("fed.qz.v1.va.station.resend", cb=on_msg)
        await venue.flush()
        # The centre is a cluster: the venue's interest reaches the hub's server over a route,
        # later on a loaded machine, and core NATS drops what nobody there wants yet (the
        # mender asks again the same way). Asked until heard, at most 10 s.
        async with asyncio.timeout(10):
            while got.empty():
                await hub.publish("fed.qz.v1.va.station.resend", b"ask")
                await hub.flush()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_wait_nonempty(got), 0.5)
        await asyncio.sleep(0.5)  # an ask repeated while the first was on its way comes too
        while not got.empty():
            assert got.get_nowait() == b"ask"
        assert errs == []
        await venue.subscribe("fed.qz.v1.vb.station.resend")
        await venue.flush()
        await asyncio.sleep(0.3)
        assert len(errs) == 1 and "permissions violation" in str(errs[0]).lower()
        for subject in ("fed.qz.v1.va.station.resend", "fed.qz.v1.vb.station.resend"):
            await venue.publish(subject, b"ask")
        await venue.flush()
        await asyncio.sleep(0.3)
        assert len(errs) == 3 and got.empty(), errs
    finally:
        await venue.close()
        await hub.close()


async def test_only_the_hub_publishes_the_checked_records(nats_centre: NatsCentre) -> None:
    """Issue 29: the public reads ``fed.live.*.record.*``; a venue may not write there (it would
    skip the hub's check), the hub may, and a viewer gets it."""
    viewer, _ = await errors_of({"servers": [ws_url(nats_centre)]})
    venue, errs = await errors_of(
        {"servers": nats_centre.urls, "user": "venue-va", "password": "pw-va"}
    )
    hub = await nats.connect(nats_centre.urls, user=HUB_USER[0], password=HUB_USER[1])
    try:
        got: asyncio.Queue[bytes] = asyncio.Queue()

        async def on_msg(msg: Msg) -> None:
            await got.put(msg.data)

        await viewer.subscribe("fed.live.*.record.*", cb=on_msg)
        await viewer.flush()
        await venue.publish("fed.live.va.record.1", b'{"forged": true}')
        await venue.flush()
        await asyncio.sleep(0.3)
        assert any("permissions violation" in str(e).lower() for e in errs), errs
        assert got.empty()
        async with asyncio.timeout(5):
            while got.empty():
                await hub.publish("fed.live.va.record.1", b'{"checked": true}')
                await hub.flush()
                await asyncio.sleep(0.1)
        assert await got.get() == b'{"checked": true}'
    finally:
        for nc in (viewer, venue, hub):
            await nc.close()
