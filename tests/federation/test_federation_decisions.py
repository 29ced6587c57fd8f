"""The station's decisions travel to the hub (issue 27), through a real venue Mosquitto from
``broker-config`` bridged to a real nats-server, a real station and a hub on PostgreSQL.

The attacker holds node-a's broker account (boards 1 and 2). It stamps a confirmed result on
board 1 with a made-up txn and with the txn of a command the station really sent it, and it
publishes a forged ``Decision`` on the station's topic. The arbiter enters a real result on
board 2. The hub counts board 2's result only; its standings equal the venue's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from support.broker import STANDARD_NODES, mqtt_client
from support.nats import HUB_USER, NatsCentre, small_plan
from support.station import envelope, station_config

from broker_config import MosquittoProcess, Roster
from federation_hub.consumer import HubConsumer
from federation_hub.standings import VenueProfiles, venue_standings
from federation_hub.store import HubStore
from wire_contract.messages import Command

pytestmark = [pytest.mark.postgres, pytest.mark.broker, pytest.mark.slow]
Factory = Callable[..., MosquittoProcess]
R = "qz/v1/va"
PAIRS = "round,board,red,black\n1,1,张三,李四\n1,2,王五,赵六\n"


class Board:
    """node-a's MQTT side for one venue ``va``: numbered events, commands read, replies ok."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.client = client
        self.seq: dict[str, int] = {}
        self.commands: list[tuple[str, Command]] = []

    async def emit(
        self, board: str, type_: str, data: dict[str, Any], txn: str | None = None
    ) -> None:
        seq = self.seq[board] = self.seq.get(board, 0) + 1
        ev = envelope(board, seq, type=type_, data=data, game=f"r1-b{board}", txn=txn)
        await self.client.publish(f"{R}/board/{board}/event", json.dumps(ev).encode(), qos=1)

    async def serve(self) -> None:
        async for message in self.client.messages:
            board = str(message.topic).split("/")[4]
            cmd = Command.model_validate_json(message.payload)  # type: ignore[arg-type]
            self.commands.append((board, cmd))
            reply = json.dumps({"txn": cmd.txn, "ok": True}).encode()
            await self.client.publish(f"{R}/board/{board}/reply", reply, qos=1)

    async def txn_of(self, board: str, cmd: str) -> str:
        async with asyncio.timeout(10):
            while not any(b == board and c.cmd == cmd for b, c in self.commands):
                await asyncio.sleep(0.02)
        return next(c.txn for b, c in reversed(self.commands) if b == board and c.cmd == cmd)


async def until(predicate: Callable[[], Any], timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not await predicate():
            await asyncio.sleep(0.1)


async def test_a_forged_decision_never_reaches_the_hubs_standings(
    broker_factory: Factory, tmp_path: Path, hub_db: str, start_station: Any
) -> None:
    centre = NatsCentre.start(nodes=1, venues={"va": ("venue-va", "pw-va")})
    store = await HubStore.open(hub_db)
    hub = HubConsumer(
        servers=centre.urls,
        user=HUB_USER[0],
        password=HUB_USER[1],
        store=store,
        plan=small_plan(),
        batch=50,
    )
    hub_task = asyncio.create_task(hub.run())
    try:
        await asyncio.wait_for(hub.ready.wait(), 20)
        user, password = centre.users.venues["va"]
        roster = Roster.build(
            venue="va",
            nodes=STANDARD_NODES,
            federation={"urls": centre.mqtt_urls(), "username": user, "password": password},
        )
        venue = broker_factory(roster)
        station = await start_station(
            station_config(tmp_path, venue, venue="va", command_timeout_s=3.0)
        )
        await station.import_pairings(PAIRS, send=False)
        async with mqtt_client(venue, "node-a") as client:
            for b in ("1", "2"):
                await client.subscribe(f"{R}/board/{b}/cmd", qos=1)
            board = Board(client)
            serving = asyncio.create_task(board.serve())
            try:
                for b, (red, black) in (("1", ("张三", "李四")), ("2", ("王五", "赵六"))):
                    ready = {"game": f"r1-b{b}", "tc": "30m+5s", "red": red, "black": black}
                    await board.emit(b, "ready", ready)
                won = {"winner": "red", "reason": "resign", "status": "confirmed"}
                # board 1 decides its own game: a made-up txn, then a real command's txn
                await board.emit("1", "result", won, txn="st-0123456789abcdef")
                await station.send_command("1", "pause", {})
                await board.emit("1", "result", won, txn=await board.txn_of("1", "pause"))
                # and a forged decision on the station's own topic (the ACL refuses it)
                forged = {
                    "v": 1, "board": "1", "session": 1, "seq": 2, "game": "r1-b1",
                    "type": "result", "status": "confirmed", "winner": "red",
                    "reason": "resign", "txn": "st-0123456789abcdef", "by": "arb1", "ts": 1,
                }  # fmt: skip
                await client.publish(f"{R}/station/decision", json.dumps(forged).encode(), qos=1)
                # the arbiter's real result on board 2
                asked = {"winner": "black", "reason": "resign"}
                await station.send_command("2", "result", asked, user="arb1")
                txn = await board.txn_of("2", "result")
                await board.emit("2", "result", {**asked, "status": "confirmed"}, txn=txn)

                async def hub_has_all() -> bool:
                    facts = await store.game_facts("va")
                    return sum(f["type"] == "result" for f in facts) == 3 and any(
                        f["decision"] for f in facts
                    )

                await until(hub_has_all)
            finally:
                serving.cancel()
        profiles = VenueProfiles.load("meishan-2016", {})
        out = await venue_standings(store, "va", profiles)
        games = {g["game"]: g for g in out["games"]}
        assert games["r1-b1"]["result"] is None and games["r1-b1"]["status"] == "pending"
        assert games["r1-b2"]["result"] == "0-1"
        hub_points = {r["player"]: r["points"] for r in out["standings"]}
        venue_points = {r.player: r.points for r in await station.standings()}
        assert hub_points == venue_points == {"张三": 0, "李四": 0, "王五": 0, "赵六": 2}
        # only the station's one decision reached the hub, by the arbiter, with its txn
        facts = [f for f in await store.game_facts("va") if f["decision"]]
        assert [(f["board"], f["decision"]["txn"], f["decision"]["by"]) for f in facts] == [
            ("2", txn, "arb1")
        ]
    finally:
        hub_task.cancel()
        await asyncio.gather(hub_task, return_exceptions=True)
        await store.close()
        centre.close()
