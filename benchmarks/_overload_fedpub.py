"""The hub overload's publishers: events for the federation's subjects
(``fed.qz.v1.{venue}.board.{board}.event``), as the venues' bridges would send them, spread
over several processes.

Why processes: one Python publisher topped out at ~10,265 events/s here (JSON + the client's
per-message work on one core), 1.65x the hub's capacity, short of the 2x issue 18 asks. Each
process owns a disjoint slice of the boards and continues their sequence numbers, so the
parent can still list every (venue, board, session, seq) published and compare it with the
store exactly once.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import nats
from _overload_common import drive

__all__ = ["START_DELAY_S", "VENUES", "Key", "Publisher", "all_boards", "publish_parallel"]

VENUES = ("va", "vb", "vc", "vd")
Key = tuple[str, str, int, int]
Board = tuple[str, str]
START_DELAY_S = 5.0  # spawned processes import nats and connect before the common start

# One event body, formatted rather than json.dumps'd per message (the publisher's hot path);
# the same fields a bridge carries (docs/wire.md), session 1.
BODY = (
    '{{"v": 1, "board": "{board}", "node": "n1", "game": "r1-b{board}", "session": 1, '
    '"seq": {seq}, "ts": {ts}, "type": "move", "replay": false, '
    '"clock": {{"red_ms": 900000, "black_ms": 900000, "running": "black"}}, '
    '"data": {{"side": "red", "used_ms": 2000, "move": {seq}}}}}'
)


def all_boards(boards: int) -> list[Board]:
    return [(v, str(b)) for v in VENUES for b in range(1, boards // len(VENUES) + 1)]


class Publisher:
    """Core NATS publishes round-robin over its boards; per board seqs continue from ``seq``.
    Not acked one by one: the stream's own message count is reported next to ``published``
    and the store is compared key by key (a message JetStream never stored is reported)."""

    def __init__(self, nc: Any, boards: list[Board], seq: dict[Board, int] | None = None) -> None:
        self.nc = nc
        self.boards = boards
        self.seq = {b: (seq or {}).get(b, 0) for b in boards}
        self.subjects = {(v, b): f"fed.qz.v1.{v}.board.{b}.event" for v, b in boards}
        self.published = 0

    async def publish(self, n: int) -> None:
        now = time.time_ns() // 1_000_000
        for _ in range(n):
            key = self.boards[self.published % len(self.boards)]
            self.published += 1
            seq = self.seq[key] = self.seq[key] + 1
            body = BODY.format(board=key[1], seq=seq, ts=now).encode()
            await self.nc.publish(self.subjects[key], body)
        await self.nc.flush()

    def keys(self) -> set[Key]:
        return {(v, b, 1, s) for (v, b), n in self.seq.items() for s in range(1, n + 1)}


def _worker(
    urls: list[str], auth: tuple[str, str], boards: list[Board], seq: dict[Board, int],
    rate: float, seconds: float, start_at: float,
) -> tuple[int, float, dict[Board, int]]:  # fmt: skip
    """One publishing process: (events sent, seconds it paced, its boards' last seqs)."""

    async def run() -> tuple[int, float, dict[Board, int]]:
        nc = await nats.connect(urls, user=auth[0], password=auth[1])
        try:
            pub = Publisher(nc, boards, seq)
            await asyncio.sleep(max(0.0, start_at - time.monotonic()))
            t0 = time.monotonic()
            sent, _ = await drive(rate, seconds, pub.publish)
            return sent, time.monotonic() - t0, pub.seq
        finally:
            await nc.close()

    return asyncio.run(run())


async def publish_parallel(
    urls: list[str], auth: tuple[str, str], pub: Publisher, rate: float, seconds: float,
    processes: int, start_at: float,
) -> tuple[int, float]:  # fmt: skip
    """Drive ``rate`` events/s for ``seconds`` from ``processes`` processes, all starting at
    ``start_at`` (time.monotonic(): CLOCK_MONOTONIC, one clock for every process), each with
    every ``processes``-th board of ``pub`` and its share of the rate; ``pub.seq`` is then
    advanced to what they published. Returns (events sent, achieved events/s)."""
    slices = [pub.boards[i::processes] for i in range(processes)]
    ctx = multiprocessing.get_context("spawn")  # no fork of a process with a running loop
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(processes, mp_context=ctx) as pool:
        futures = []
        for part in slices:
            seqs = {b: pub.seq[b] for b in part}
            share = rate * len(part) / len(pub.boards)
            futures.append(
                loop.run_in_executor(
                    pool, _worker, urls, auth, part, seqs, share, seconds, start_at
                )
            )
        results = await asyncio.gather(*futures)
    sent = sum(r[0] for r in results)
    for _, _, seq in results:
        pub.seq.update(seq)
    pub.published += sent
    return sent, sent / max(r[1] for r in results)
