"""``qizhong demo`` end to end: the venue comes up, --info is true, it stops by itself."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request

import aiomqtt
import pytest

from qizhong.simulation.arbiter_client import ArbiterClient

pytestmark = [pytest.mark.broker, pytest.mark.slow]


def _port_open(host: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


async def _states(info: dict, boards: int) -> dict[str, dict]:
    ro = info["read_only"]
    host, port = info["broker"]["url"].removeprefix("mqtt://").split(":")
    states: dict[str, dict] = {}
    async with aiomqtt.Client(
        host, int(port), username=ro["username"], password=ro["password"],
        protocol=aiomqtt.ProtocolVersion.V5,
    ) as client:  # fmt: skip
        await client.subscribe(f"qz/v1/{info['venue']}/board/+/state", qos=1)
        # a read-only account cannot command a board: the broker drops it
        await client.publish(f"qz/v1/{info['venue']}/board/1/cmd", b'{"txn":"x","cmd":"reset"}')
        async with asyncio.timeout(15):
            async for message in client.messages:
                state = json.loads(message.payload)
                states[state["board"]] = state
                if len(states) >= boards and all(s["game"] for s in states.values()):
                    break
    return states


async def test_the_demo_runs_a_venue_and_describes_it(tmp_path):
    info_file = tmp_path / "info.json"
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "qizhong", "demo", "--boards", "6", "--speed", "30",
            "--duration", "25", "--quiet", "--info", str(info_file), "--dir", str(tmp_path / "w"),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not info_file.exists() and time.monotonic() < deadline and proc.poll() is None:
            await asyncio.sleep(0.2)
        assert info_file.exists(), proc.stdout.read().decode() if proc.poll() is not None else ""
        info = json.loads(info_file.read_text())
        assert info["boards"] == 6 and len(info["nodes"]) == 2
        states = await _states(info, 6)
        assert sorted(states, key=int) == ["1", "2", "3", "4", "5", "6"]
        assert {s["game"] for s in states.values()} == {f"r1-b{b}" for b in range(1, 7)}
        assert all(s["red"] and s["black"] for s in states.values())  # players paired
        with urllib.request.urlopen(info["station"]["display"], timeout=5) as page:
            assert page.status == 200
        api = ArbiterClient(info["station"]["url"])
        api.login(info["arbiter"]["username"], info["arbiter"]["password"])
        assert api.csrf
        boards = api.request("GET", "/api/boards")
        assert len(boards if isinstance(boards, list) else boards["boards"]) == 6
        out, _ = await asyncio.to_thread(proc.communicate, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out.decode()
    assert "arbiter" in out.decode() and "stopping" in out.decode()
    host, port = info["broker"]["url"].removeprefix("mqtt://").split(":")
    assert not _port_open(host, int(port))  # the broker is gone
    assert not _port_open("127.0.0.1", int(info["station"]["url"].rsplit(":", 1)[1]))
