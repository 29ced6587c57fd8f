"""How late is a flag? From the exact zero instant to the node's flag event, and to a subscriber.

A node runs 8 boards (simulated idle faces) against a private Mosquitto; each board plays
back-to-back games of a short time control that nobody presses, so each game ends in a flag.
The boards start an eighth of a game apart, so their flags fall apart as a hall's do (all eight
at the same instant was a burst no venue sees: eight flags, eight new games' commands and
states in one turn of the loop). For every flag we know the exact instant the time reached zero
(``deadline_ns()`` when the clock started) and measure, on the machine's monotonic clock:

- ``decided``: when the node's flag timer ran and the core settled the flag;
- ``journaled``: when the journal said the flag event is on disk (its transaction committed,
  fsync'd; written on the loop at once where the disk is fast, else the writer thread's news):
  the link may publish it from then on;
- ``arrived``: when a subscriber (the station's account, in a process of its own, as the
  station is) received the flag event.

``--slow-fsync-ms N`` makes every durable commit of the node's journal N ms slower (in its
writer, before the COMMIT: an SD card's fsync is 10–100 ms): *decided* must not move.

Baselines in the same run: the lateness of a bare ``loop.call_at`` with the same number of
timers in flight, as far apart, and the raw broker QoS 1 publish → receive latency, twice:
back to back (every process and the disk busy, as the issue measured it) and *spaced as the
flags are* (one every ``TC_MS / 8``: the flags come after that long idle, and on a virtual
machine an idle core or disk wakes slowly — after 125 ms idle this machine's round trip is
0.77 ms against 0.27 back to back, an ``fdatasync`` 0.87 against 0.22 ms).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from _common import emit, parse_args, percentiles
from _station_bench import private_broker, qos1_round_trips

from board_nodes.commands import apply_command
from board_nodes.config import NodeConfig
from board_nodes.journal import Journal
from board_nodes.node import Node
from broker_config import MosquittoProcess, Roster
from firmware_bridge.simulated import SimulatedFace
from wire_contract import messages as wire
from wire_contract.broker import BrokerSettings, mqtt_client

BOARDS = [str(b) for b in range(1, 9)]
TC_MS = 1000  # --quick: 200


async def bare_call_at(count: int, parallel: int) -> list[float]:
    """Lateness of ``parallel`` timers of TC_MS, re-armed as they fire, started TC_MS/parallel
    apart (as the boards are)."""
    loop = asyncio.get_running_loop()
    late: list[float] = []
    done = asyncio.Event()

    def fire(target_ns: int) -> None:
        late.append((time.monotonic_ns() - target_ns) / 1e6)
        if len(late) >= count:
            done.set()
        elif len(late) + parallel <= count:
            arm()

    def arm() -> None:
        target = time.monotonic_ns() + TC_MS * 1_000_000
        loop.call_at(target / 1e9, fire, target)

    for _ in range(parallel):
        arm()
        await asyncio.sleep(TC_MS / 1000 / parallel)
    await done.wait()
    return late


def slow_fsync(ms: float) -> Callable[[], None] | None:
    if not ms:
        return None
    return lambda: time.sleep(ms / 1000)


async def measure_flags(
    broker: MosquittoProcess, data_dir: Path, flags: int, *, slow_fsync_ms: float = 0
) -> dict:

    user, password = broker.credentials("bench-node")
    config = NodeConfig.model_validate(
        {
            "venue": "bench",
            "node": "bench-node",
            "data_dir": str(data_dir),
            "broker": {"url": broker.url, "username": user, "password": password},
            "board": [
                {"id": b, "face": "simulated", "simulated": {"mode": "idle"}} for b in BOARDS
            ],
        }
    )
    faces = {b: SimulatedFace(mode="idle") for b in BOARDS}
    journal = Journal(data_dir / "journal.sqlite3", before_commit=slow_fsync(slow_fsync_ms))
    node = Node(config, faces=faces, journal=journal)
    deadlines: dict[tuple[str, str], int] = {}
    decided: list[float] = []
    journaled: list[float] = []
    arrived: list[float] = []
    games = {"n": 0}
    on_its_way: dict[str, tuple[int, tuple[str, str]]] = {}  # board -> flag (seq, key)
    told = node.journal.on_written

    def written(boards: frozenset[str]) -> None:  # the writer committed these boards' events
        now = time.monotonic_ns()
        for board_id in boards:
            flag = on_its_way.get(board_id)
            if flag is not None and node.journal.on_disk(board_id, flag[0]):
                del on_its_way[board_id]
                journaled.append((now - deadlines[flag[1]]) / 1e6)
        told(boards)

    node.journal.on_written = written

    def new_game(board_id: str) -> None:
        board = node.boards[board_id]
        games["n"] += 1
        game = f"g{games['n']}"
        apply_command(board, "reset", None)
        apply_command(board, "set_game", wire.SetGameArgs(game=game, tc=f"{TC_MS}ms"))
        apply_command(board, "start", wire.StartArgs())
        # start is scheduled on the loop (call_later 0): record the deadline once it runs
        asyncio.get_running_loop().call_soon(note_deadline, board_id, game)

    def note_deadline(board_id: str, game: str) -> None:
        clock = node.boards[board_id].clock
        if clock is None or clock.deadline_ns() is None:
            asyncio.get_running_loop().call_soon(note_deadline, board_id, game)
            return
        deadlines[(board_id, game)] = clock.deadline_ns()  # type: ignore[assignment]

    def hook(board_id: str) -> None:
        board = node.boards[board_id]
        inner = board.on_event
        flag_due = board.flag._due  # the deadline timer (the flag stands after its proof)

        def timed_flag_due() -> None:
            key = (board_id, board.game["game"]) if board.game else None
            if key in deadlines and board.clock is not None:
                decided.append((time.monotonic_ns() - deadlines[key]) / 1e6)
            flag_due()

        def on_event(payload: dict) -> None:  # given to the journal, perhaps not yet on disk
            if payload["type"] == "flag":
                flag = (payload["seq"], (board_id, payload["game"]))
                if node.journal.on_disk(board_id, flag[0]):  # written on the loop at once
                    journaled.append((time.monotonic_ns() - deadlines[flag[1]]) / 1e6)
                else:
                    on_its_way[board_id] = flag
            inner(payload)
            if payload["type"] == "flag" and games["n"] < flags:
                asyncio.get_running_loop().call_soon(new_game, board_id)

        board.flag._due = timed_flag_due  # type: ignore[method-assign]
        board.on_event = on_event

    async with subscriber(broker, flags) as heard:
        node.setup()
        run = asyncio.create_task(node.run())
        await node.started.wait()
        for link in node.links.values():
            await link.connected.wait()
        for board_id in BOARDS:
            hook(board_id)
            new_game(board_id)
            await asyncio.sleep(TC_MS / 1000 / len(BOARDS))  # an eighth of a game apart
        for board, game, at in await asyncio.wait_for(heard, timeout=flags * TC_MS / 1000 + 60):
            arrived.append((at - deadlines[(board, game)]) / 1e6)
        node.stop()
        await run
    return {"decided": decided, "journaled": journaled, "arrived": arrived}


@contextlib.asynccontextmanager
async def subscriber(broker: MosquittoProcess, flags: int) -> AsyncIterator[asyncio.Task[Any]]:
    """The station's account reading the flags in a process of its own; yields a task that
    ends with ``(board, game, monotonic ns received)`` of the first ``flags`` flags (the
    machine's monotonic clock is one for every process)."""
    user, password = broker.credentials("station")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--subscriber", broker.url, user, password or "", str(flags),
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    ready = await proc.stdout.readline()
    assert ready.strip() == b"subscribed", ready

    async def heard() -> list[tuple[str, str, int]]:
        assert proc.stdout is not None
        out = json.loads(await proc.stdout.read())
        await proc.wait()
        return [tuple(x) for x in out]  # type: ignore[misc]

    task = asyncio.create_task(heard())
    try:
        yield task
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def subscribe_flags(url: str, user: str, password: str, flags: int) -> None:
    """The subscriber process: print 'subscribed', then the first ``flags`` flags as JSON."""
    settings = BrokerSettings(url=url, username=user, password=password or None)
    got: list[tuple[str, str, int]] = []
    async with mqtt_client(settings, identifier="bench-station") as station:
        await station.subscribe("qz/v1/bench/board/+/event", qos=1)
        print("subscribed", flush=True)
        async for message in station.messages:
            at = time.monotonic_ns()
            body = json.loads(message.payload)  # type: ignore[arg-type]
            if body["type"] == "flag":
                got.append((body["board"], body["game"], at))
                if len(got) >= flags:
                    break
    print(json.dumps(got), flush=True)


async def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--subscriber":
        url, user, password, flags = sys.argv[2:6]
        await subscribe_flags(url, user, password, int(flags))
        return

    def extra(parser: Any) -> None:
        parser.add_argument("--flags", type=int)
        parser.add_argument("--slow-fsync-ms", type=float, default=0.0)

    args = parse_args(__doc__.splitlines()[0], extra=extra)
    global TC_MS
    # The full run: >= 1,000 flags of 1 s games. --quick is a 400-flag smoke run of 0.2 s games.
    flags = args.flags or (400 if args.quick else 1200)
    TC_MS = 200 if args.quick else 1000
    roster = Roster.build(venue="bench", nodes={"bench-node": BOARDS})
    with private_broker(roster, prefix="qz-bench-flag-") as broker:
        base_call_at = percentiles(await bare_call_at(flags, len(BOARDS)))
        rtt = await qos1_round_trips(broker, 500, topic="qz/v1/bench/board/1/cmd")
        base_rtt = percentiles(rtt)
        spaced = await qos1_round_trips(
            broker, 200, topic="qz/v1/bench/board/1/cmd", gap_s=TC_MS / 1000 / len(BOARDS)
        )
        spaced_rtt = percentiles(spaced)
        got = await measure_flags(
            broker, broker.dir.parent / "node", flags, slow_fsync_ms=args.slow_fsync_ms
        )
    dec, jour, arr = (percentiles(got[k]) for k in ("decided", "journaled", "arrived"))
    emit(
        {
            "benchmark": "flag_latency",
            "boards": len(BOARDS),
            "slow_fsync_ms": args.slow_fsync_ms,
            "flags": len(got["arrived"]),
            "call_at_late_p50_ms": round(base_call_at["p50"], 3),
            "call_at_late_p99_ms": round(base_call_at["p99"], 3),
            "broker_rtt_p50_ms": round(base_rtt["p50"], 3),
            "broker_rtt_spaced_p50_ms": round(spaced_rtt["p50"], 3),
            "decided_p50_ms": round(dec["p50"], 3),
            "decided_p99_ms": round(dec["p99"], 3),
            "journaled_p50_ms": round(jour["p50"], 3),
            "journaled_p99_ms": round(jour["p99"], 3),
            "arrived_p50_ms": round(arr["p50"], 3),
            "arrived_p99_ms": round(arr["p99"], 3),
            "ratio": round(dec["p50"] / max(base_call_at["p50"], 1e-6), 2),
            "ratio_p99": round(dec["p99"] / max(base_call_at["p99"], 1e-6), 2),
            "arrival_ratio_vs_rtt": round(arr["p50"] / max(base_rtt["p50"], 1e-6), 2),
            "arrival_ratio_vs_spaced_rtt": round(arr["p50"] / max(spaced_rtt["p50"], 1e-6), 2),
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
