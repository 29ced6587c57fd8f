"""A TCP relay that delays every byte both ways: network delay where the kernel has no netem.

    python delay_relay.py --listen 127.0.0.1:PORT --to HOST:PORT --delay-ms 200 --jitter-ms 50

Each chunk read is written after ``delay ± jitter`` ms (uniform), never before the chunk read
before it (TCP keeps order): 200 ± 50 ms one way, so a round trip costs 400 ± 100 ms. A
connection's close is passed on after its last delayed byte. Prints ``ready PORT`` once
listening (PORT 0 picks a free one). Run inside the node's network namespace for the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import socket
import sys


async def _pump(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float, jitter: float
) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, chunk = await queue.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            if not chunk:
                with contextlib.suppress(OSError):
                    writer.close()
                return
            writer.write(chunk)
            with contextlib.suppress(OSError):
                await writer.drain()

    sender = asyncio.create_task(deliver())
    last_due = 0.0
    try:
        while True:
            try:
                chunk = await reader.read(65536)
            except OSError:
                chunk = b""
            last_due = max(last_due, loop.time() + delay + random.uniform(-jitter, jitter))
            queue.put_nowait((last_due, chunk))
            if not chunk:
                break
        await sender
    finally:
        sender.cancel()


async def _serve(args: argparse.Namespace) -> None:
    host, port = args.listen.rsplit(":", 1)
    to_host, to_port = args.to.rsplit(":", 1)
    delay, jitter = args.delay_ms / 1000, args.jitter_ms / 1000

    async def handle(c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        try:
            u_reader, u_writer = await asyncio.open_connection(to_host, int(to_port))
        except OSError:
            c_writer.close()
            return
        for w in (c_writer, u_writer):  # the delay is ours to add, not Nagle's
            sock = w.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(
            _pump(c_reader, u_writer, delay, jitter),
            _pump(u_reader, c_writer, delay, jitter),
            return_exceptions=True,
        )

    server = await asyncio.start_server(handle, host, int(port))
    bound = server.sockets[0].getsockname()[1]
    print(f"ready {bound}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", required=True)
    parser.add_argument("--to", required=True)
    parser.add_argument("--delay-ms", type=float, default=200)
    parser.add_argument("--jitter-ms", type=float, default=50)
    args = parser.parse_args()
    if args.jitter_ms > args.delay_ms:
        sys.exit("delay_relay: jitter must not exceed the delay")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))


if __name__ == "__main__":
    main()
