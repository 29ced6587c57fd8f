"""Flag alert p99 while the web port and one board are attacked, against the same p99 at rest.

A private Mosquitto from ``broker-config``, the station as its own process (``qizhong station``,
SQLite, default web limits), and this process as a node (``node-a``'s broker account) that
publishes flag events and as the arbiter logged in to ``/api/stream``. Latency per flag: the
node's QoS 1 publish starts -> the flag alert is read from the arbiter's SSE stream (one clock:
this process's ``perf_counter``).

Two phases in the same run, the same flags each:

- ``rest``: nothing else happens (the baseline);
- ``attack``: a second process attacks at once with what a hall full of phones and one node
  hold: 32 clients sending wrong logins as fast as the station answers (each from its own
  address), 1,500 live SSE streams (15 per address over 100 addresses; they read what comes),
  and a flooding board (``node-f``'s account publishing move events on its own board
  ``--flood-rate`` per second, far above what a clock produces).

Ratio: attack p99 over rest p99 (aim <= 2). Also printed: p50s, what the attackers got back
(status counts), the flood's achieved rate, and /healthz's answer time under attack.
Full: 200 flags per phase; ``--quick``: 20 flags per phase and 300 SSE streams. A flag whose
alert is not on the arbiter's stream within 10 s is lost (listed; past 1 % lost there is no p99
and the ratio is null); after 5 lost the phase stops.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import signal
import socket
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _common import emit, parse_args, percentiles
from _station_bench import client, private_broker

from broker_config import MosquittoProcess, Roster
from venue_station.auth import hash_password
from wire_contract.broker import BrokerSettings, mqtt_client

VENUE = "bench"
PASSWORD = "bench-arbiter-pw"
BOARDS = [str(b) for b in range(1, 11)]
FLOOD_BOARD = "99"
LOST_AFTER_S = 10.0  # a flag alert not on the arbiter's stream by then counts as lost


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _station_toml(broker: MosquittoProcess, work: Path, port: int) -> Path:
    user, password = broker.credentials("station")
    path = work / "station.toml"
    path.write_text(
        f'venue = "{VENUE}"\n'
        f'data_dir = "{work / "station"}"\n'
        "[broker]\n"
        f'url = "mqtt://{broker.host}:{broker.port}"\n'
        f'username = "{user}"\n'
        f'password = "{password}"\n'
        f'client_id = "bench-station-{uuid.uuid4().hex[:6]}"\n'
        "[http]\n"
        'host = "127.0.0.1"\n'
        f"port = {port}\n"
        "[[account]]\n"
        'username = "arb"\n'
        f'password_hash = "{hash_password(PASSWORD)}"\n'
        'role = "arbiter"\n',
        encoding="utf-8",
    )
    return path


def _flag(board: str, seq: int) -> bytes:
    now = time.time_ns() // 1_000_000
    return json.dumps(
        {
            "v": 1, "board": board, "node": "node-a", "game": f"r1-b{board}", "session": 1,
            "seq": seq, "ts": now, "type": "flag", "replay": False,
            "clock": {"red_ms": 0, "black_ms": 60_000, "running": None},
            "data": {"side": "red"},
        }
    ).encode()  # fmt: skip


class Arbiter:
    """The arbiter's logged-in SSE stream; flag alerts by (board, seq) with their arrival."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.seen: dict[tuple[str, int], float] = {}
        self.arrived = asyncio.Event()
        self.kinds: dict[str, int] = {}

    async def run(self, ready: asyncio.Event) -> None:
        try:
            await self._run(ready)
        except Exception as exc:  # the flags would wait forever: say why
            print(f"the arbiter's stream ended: {exc!r}", file=sys.stderr, flush=True)
            raise
        print("the arbiter's stream ended", file=sys.stderr, flush=True)

    async def _run(self, ready: asyncio.Event) -> None:
        import httpx

        async with httpx.AsyncClient(base_url=self.base, timeout=None) as http:
            r = await http.post("/api/auth/login", json={"username": "arb", "password": PASSWORD})
            r.raise_for_status()
            async with http.stream("GET", "/api/stream") as response:
                kind = ""
                async for line in response.aiter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                        self.kinds[kind] = self.kinds.get(kind, 0) + 1
                        if kind == "hello":
                            ready.set()
                    elif line.startswith("data: ") and kind == "alert":
                        alert = json.loads(line[6:])["alert"]
                        if alert["kind"] == "flag":
                            self.seen[(alert["board"], alert["seq"])] = time.perf_counter()
                            self.arrived.set()


async def _flags(
    broker: MosquittoProcess, arbiter: Arbiter, seqs: dict[str, int], n: int, lost: list[str]
) -> list[float]:
    """Publish ``n`` flags; the latency of each whose alert came within ``LOST_AFTER_S``, and
    the (board, seq) of each whose alert did not in ``lost``."""
    out: list[float] = []
    async with client(broker, "node-a") as node:
        for i in range(n):
            board = BOARDS[i % len(BOARDS)]
            seqs[board] += 1
            key = (board, seqs[board])
            t0 = time.perf_counter()
            await node.publish(f"qz/v1/{VENUE}/board/{board}/event", _flag(*key), qos=1)
            while key not in arbiter.seen and time.perf_counter() - t0 < LOST_AFTER_S:
                arbiter.arrived.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(arbiter.arrived.wait(), 1)
            if key in arbiter.seen:
                out.append((arbiter.seen[key] - t0) * 1000)
            else:
                lost.append(f"{board}/{key[1]}")
                if len(lost) >= 5:  # the stream is not coming back: do not wait out the rest
                    lost += ["not tried"] * (n - i - 1)
                    break
            await asyncio.sleep(0.05)
    return out


async def _healthz_ms(base: str) -> float:
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        t0 = time.perf_counter()
        r = await http.get("/healthz")
        r.raise_for_status()
        return (time.perf_counter() - t0) * 1000


# -- the attacker (a process of its own) ------------------------------------------------------
async def _attack(args: argparse.Namespace) -> None:
    import httpx

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    counts: dict[str, int] = {}
    streams: list[asyncio.StreamWriter] = []

    async def sse(address: str) -> None:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", args.port, local_addr=(address, 0)
        )
        streams.append(writer)
        writer.write(b"GET /api/stream HTTP/1.1\r\nHost: x\r\n\r\n")
        status = await reader.readline()
        counts[f"sse {status.split()[1].decode()}"] = (
            counts.get(f"sse {status.split()[1].decode()}", 0) + 1
        )
        while not stop.is_set() and await reader.read(65536):
            pass

    async def login(n: int) -> None:
        transport = httpx.AsyncHTTPTransport(local_address=f"127.0.8.{n + 1}")
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{args.port}", transport=transport, timeout=60
        ) as http:
            while not stop.is_set():
                r = await http.post(
                    "/api/auth/login", json={"username": f"eve{n}", "password": "x"}
                )
                counts[f"login {r.status_code}"] = counts.get(f"login {r.status_code}", 0) + 1

    async def flood() -> None:
        flooder = BrokerSettings(
            url=f"mqtt://127.0.0.1:{args.broker_port}", username="node-f",
            password=args.flood_password,
        )  # fmt: skip
        async with mqtt_client(flooder, identifier=f"node-f-{uuid.uuid4().hex[:6]}") as c:
            seq, t0 = 0, time.perf_counter()
            while not stop.is_set():
                seq += 1
                body = {
                    "v": 1, "board": FLOOD_BOARD, "node": "node-f", "game": None, "session": 1,
                    "seq": seq, "ts": time.time_ns() // 1_000_000, "type": "move", "replay": False,
                    "clock": {"red_ms": 1, "black_ms": 1, "running": "black"},
                    "data": {"side": "red", "used_ms": 1, "move": seq},
                }  # fmt: skip
                await c.publish(f"qz/v1/{VENUE}/board/{FLOOD_BOARD}/event", json.dumps(body), qos=1)
                behind = seq / args.flood_rate - (time.perf_counter() - t0)
                if behind > 0:
                    await asyncio.sleep(behind)
            counts["flood sent"] = seq
            counts["flood per s"] = int(seq / (time.perf_counter() - t0))

    tasks = []
    parts = set(args.parts.split(","))
    for i in range(args.streams if "sse" in parts else 0):  # 15 per address (the station allows 16)
        tasks.append(asyncio.create_task(sse(f"127.0.7.{i // 15 + 1}")))
        if i % 100 == 99:
            await asyncio.sleep(0.05)
    tasks += [asyncio.create_task(login(n)) for n in range(32 if "login" in parts else 0)]
    if "flood" in parts:
        tasks.append(asyncio.create_task(flood()))
    await asyncio.sleep(2)
    print("ready", flush=True)
    await stop.wait()
    await asyncio.sleep(0.2)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for w in streams:
        w.close()
    print(json.dumps(counts), flush=True)


# -- the run -----------------------------------------------------------------------------------
async def main() -> None:
    args = parse_args(__doc__.splitlines()[0], extra=_extra_args)
    if args.attacker:
        await _attack(args)
        return
    n = 20 if args.quick else 200
    streams = 300 if args.quick else 1500
    nodes = {"node-a": BOARDS, "node-f": [FLOOD_BOARD]}
    # A broker queue that never drops the station's messages (issue 12: sizing it is the
    # broker side's part); what is measured here is the station's own delay.
    roster = Roster.build(venue=VENUE, nodes=nodes, broker={"max_queued_messages": 1_000_000})
    with private_broker(roster, prefix="qz-bench-attack-") as broker:
        work = Path(tempfile.mkdtemp(prefix="qz-bench-attack-station-"))
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        station = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "qizhong", "station",
            "--log-level", os.environ.get("QZ_BENCH_LOG", "ERROR"),
            "--config", str(_station_toml(broker, work, port)),
        )  # fmt: skip
        attacker = None
        try:
            for _ in range(300):
                with contextlib.suppress(Exception):
                    if await _healthz_ms(base) >= 0:
                        break
                await asyncio.sleep(0.1)
            arbiter = Arbiter(base)
            ready = asyncio.Event()
            watch = asyncio.create_task(arbiter.run(ready))
            await asyncio.wait_for(ready.wait(), 30)
            seqs = dict.fromkeys(BOARDS, 0)
            lost_rest: list[str] = []
            lost_attack: list[str] = []
            rest = await _flags(broker, arbiter, seqs, n, lost_rest)
            attacker = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--attacker", "--port", str(port),
                "--broker-port", str(broker.port), "--streams", str(streams),
                "--flood-rate", str(args.flood_rate), "--parts", args.parts,
                # "=": a generated password may begin with "-" (argparse took it for an option)
                f"--flood-password={broker.credentials('node-f')[1] or ''}",
                stdout=asyncio.subprocess.PIPE,
            )  # fmt: skip
            assert attacker.stdout is not None
            line = await asyncio.wait_for(attacker.stdout.readline(), 120)
            assert line.strip() == b"ready", line
            healthz = await _healthz_ms(base)
            attacked = await _flags(broker, arbiter, seqs, n, lost_attack)
            attacker.send_signal(signal.SIGTERM)
            counts = json.loads((await attacker.stdout.readline()) or b"{}")
            await attacker.wait()
            watch.cancel()
        finally:
            if attacker is not None and attacker.returncode is None:
                attacker.kill()
                await attacker.wait()
            station.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(station.wait(), 15)
            except TimeoutError:
                station.kill()
                await station.wait()
            import shutil

            shutil.rmtree(work, ignore_errors=True)
    p_rest = percentiles(rest)
    # A lost alert is later than any measured one: past 1 % lost, there is no p99 to give.
    p_attack = percentiles(attacked + [math.inf] * len(lost_attack))
    p99 = p_attack["p99"] if math.isfinite(p_attack["p99"]) else None
    emit(
        {
            "benchmark": "attack_load",
            "flags_per_phase": n,
            "sse_streams": streams,
            "flood_rate_asked": args.flood_rate,
            "rest_p50_ms": round(p_rest["p50"], 2),
            "rest_p99_ms": round(p_rest["p99"], 2),
            "attack_p50_ms": round(p_attack["p50"], 2) if math.isfinite(p_attack["p50"]) else None,
            "attack_p99_ms": None if p99 is None else round(p99, 2),
            "healthz_under_attack_ms": round(healthz, 1),
            "alerts_lost_rest": lost_rest,
            "alerts_lost_attack": lost_attack[:8]
            + ([f"+{len(lost_attack) - 8}"] if len(lost_attack) > 8 else []),
            "attackers_got": counts,
            "ratio": None if p99 is None else round(p99 / p_rest["p99"], 2),
        }
    )


def _extra_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--flood-rate", type=int, default=500, help="flooding board, events/s")
    parser.add_argument(
        "--parts", default="login,sse,flood", help="which attacks run (comma separated)"
    )
    parser.add_argument("--attacker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--broker-port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--streams", type=int, default=1500, help=argparse.SUPPRESS)
    parser.add_argument("--flood-password", default="", help=argparse.SUPPRESS)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(main())
