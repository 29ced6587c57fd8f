"""Time truth on a faulty clock link: charged instant vs device instant, press → ``move``.

One node, one board on a serial clock (the emulator, the real byte protocol over TCP), a
private Mosquitto and a subscriber (the station's account). The emulator presses for red and
black in turn every 100–200 ms; it records the host monotonic instant of each press (the
truth). First a fault-free phase, then a faulty one: 10 % of frames dropped and 1 % corrupted
in both directions, and a 2 s silence of the line each minute (once in ``--quick``).

- ``charged error``: |the instant the clock core charged the press − the press's instant|;
- ``press → move``: from the press to the subscriber holding its ``move`` event.

The ratio is the faulty phase's press → move p99 over the fault-free phase's p50.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

from _common import emit, parse_args, percentiles
from _station_bench import private_broker

from board_nodes.commands import apply_command
from board_nodes.config import NodeConfig
from board_nodes.node import Node
from broker_config import MosquittoProcess, Roster
from clock_service import Side
from firmware_bridge.face import FaceEvent, FaceEventKind
from firmware_bridge.serial.emulator import ClockEmulator
from firmware_bridge.serial.face import SerialClockFace
from firmware_bridge.serial.faults import FaultyLine, LineFaults
from wire_contract import messages as wire
from wire_contract.broker import BrokerSettings, mqtt_client

BOARD = "1"


async def run(broker: MosquittoProcess, data_dir: Path, presses: int, silences: int) -> dict:

    user, password = broker.credentials("bench-node")
    config = NodeConfig.model_validate({
        "venue": "bench", "node": "bench-node", "data_dir": str(data_dir),
        "broker": {"url": broker.url, "username": user, "password": password},
        "board": [{"id": BOARD, "face": "serial", "url": "socket://127.0.0.1:1"}],
    })  # fmt: skip
    async with ClockEmulator() as emu:
        url = await emu.listen()
        face = SerialClockFace(url)
        node = Node(config, faces={BOARD: face})
        node.setup()
        board = node.boards[BOARD]
        charged: list[int] = []  # the instant the core applied each press at
        handle = board.handle_face

        def timed(event: FaceEvent) -> None:
            if event.kind is FaceEventKind.PRESS:
                charged.append(board.now())
            handle(event)

        board.handle_face = timed  # type: ignore[method-assign]
        arrived: list[int] = []
        sub_user, sub_password = broker.credentials("station")
        settings = BrokerSettings(
            url=f"mqtt://{broker.host}:{broker.port}", username=sub_user, password=sub_password
        )
        async with mqtt_client(settings, identifier="bench-station") as station:

            await station.subscribe(f"qz/v1/bench/board/{BOARD}/event", qos=1)

            async def receive() -> None:
                async for message in station.messages:
                    body = json.loads(message.payload)
                    if body["type"] == "move" and not body.get("replay"):
                        arrived.append(time.monotonic_ns())

            reader = asyncio.create_task(receive())
            task = asyncio.create_task(node.run())
            await node.started.wait()
            await node.links[BOARD].connected.wait()
            await emu.wait_connected()
            apply_command(board, "set_game", wire.SetGameArgs(game="g", tc="90m+0s"))
            apply_command(board, "start", wire.StartArgs())
            await asyncio.sleep(0.5)
            rng = random.Random(7)
            in_silence: set[int] = set()
            side = Side.RED

            async def play(n: int) -> None:
                nonlocal side
                for _ in range(n):
                    await emu.press(side)
                    side = side.other
                    await asyncio.sleep(rng.uniform(0.1, 0.2))

            await play(presses)
            clean = len(emu.presses)
            await asyncio.sleep(1.0)
            faults = LineFaults(drop=0.10, corrupt=0.01)
            to_host = FaultyLine(emu.link, faults, seed=1)
            to_clock = FaultyLine(face.link, faults, seed=2)
            per = presses // max(1, silences)
            for _ in range(max(1, silences)):
                await play(per // 2)
                to_host.silent = to_clock.silent = True
                first = len(emu.presses)
                await play(13)  # ~2 s of presses into a silent line
                to_host.silent = to_clock.silent = False
                in_silence.update(range(first, len(emu.presses)))
                await play(per - per // 2)
            await emu.wait_settled(timeout=30)
            async with asyncio.timeout(30):
                while len(arrived) < len(emu.presses):  # noqa: ASYNC110 (a bench poll)
                    await asyncio.sleep(0.05)
            reader.cancel()
            node.stop()
            await task
    truth = [ns for _side, _ms, ns in emu.presses]
    errors = [abs(c - t) / 1e6 for c, t in zip(charged, truth, strict=True)]
    latency = [(a - t) / 1e6 for a, t in zip(arrived, truth, strict=True)]
    return {
        "clean_error": errors[:clean], "fault_error": errors[clean:],
        "clean_latency": latency[:clean], "fault_latency": latency[clean:],
        "fault_latency_no_silence": [
            x for i, x in enumerate(latency) if i >= clean and i not in in_silence
        ],
        "faults": dict(faults.counts), "link": face.stats.as_dict(),
    }  # fmt: skip


async def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    presses = 60 if args.quick else 600  # 100–200 ms apart: ~10 s or ~2 min per phase
    silences = 1 if args.quick else 2  # one 2 s silence a minute
    roster = Roster.build(venue="bench", nodes={"bench-node": [BOARD]})
    with private_broker(roster, prefix="qz-bench-link-") as broker:
        got = await run(broker, broker.dir.parent / "node", presses, silences)
    ce, fe = percentiles(got["clean_error"]), percentiles(got["fault_error"])
    cl, fl = percentiles(got["clean_latency"]), percentiles(got["fault_latency"])
    fn = percentiles(got["fault_latency_no_silence"])
    link = got["link"]
    emit({
        "benchmark": "link_faults",
        "presses_clean": len(got["clean_error"]), "presses_faulty": len(got["fault_error"]),
        "faults": ", ".join(f"{k} {v}" for k, v in sorted(got["faults"].items())),
        "retransmits": link["retransmits"], "crc_errors": link["crc_errors"],
        "charged_error_clean_p99_ms": round(ce["p99"], 3),
        "charged_error_faulty_p50_ms": round(fe["p50"], 3),
        "charged_error_faulty_p99_ms": round(fe["p99"], 3),
        "charged_error_faulty_max_ms": round(fe["max"], 3),
        "press_move_clean_p50_ms": round(cl["p50"], 3),
        "press_move_clean_p99_ms": round(cl["p99"], 3),
        "press_move_faulty_p50_ms": round(fl["p50"], 3),
        "press_move_faulty_p99_ms": round(fl["p99"], 3),
        "press_move_faulty_outside_silences_p99_ms": round(fn["p99"], 3),
        "ratio": round(fl["p99"] / max(cl["p50"], 1e-6), 2),
    })  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
