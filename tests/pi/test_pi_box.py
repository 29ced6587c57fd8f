"""A Pi in a box (issue 17): for each Pi CPU, the offline bundle installed by the node playbook
into an emulated Debian bookworm root, then run there: the config check, the face self-test
on mock pins, the serial self-test against ``qizhong emulate-clock`` on the host, and a node
with a serial board (the clock emulator on the host, socket://) and a simulated board playing
a short game against a private Mosquitto on the host, checked at a station."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from host_clock import KEY_FOR_ASK, HostClock
from pi_box import OFFLINE, NodeSetup, apply_node_playbook, clean_root, free_port
from support.broker import new_broker_dir
from support.station import station_config

from broker_config import MosquittoProcess, Roster
from clock_service import Side
from firmware_bridge.serial.emulator import ClockEmulator
from qizhong.deploy.piroot import PiRoot, root_env

# Minutes, not seconds: the install and every start run emulated (docs/deploy.md has the times).
pytestmark = [pytest.mark.pi, pytest.mark.slow, pytest.mark.timeout(3600)]

ROSTER = """\
venue = "test"
[[node]]
id = "pi-01"
boards = ["1", "2"]
"""
VENV = "/opt/qizhong/venv"
CONFIG = "/etc/qizhong/node.toml"
# Emulated start-up is slow (the node imports pydantic, aiomqtt, luma under qemu): bounds
# generous enough that a busy 2-core machine never trips them.
ONLINE_S = 240.0
STEP_S = 60.0


@dataclass
class Installed:
    root: PiRoot
    broker: MosquittoProcess
    setup: NodeSetup
    work: Path
    ansible_output: str

    def run(self, argv: list[str], *, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return self.root.run(argv, binds=[self.work], env=root_env(OFFLINE), timeout=timeout)


@pytest.fixture(scope="module")
def installed(
    pi_root: PiRoot, pi_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Installed]:
    """node.yml applied to pi-01 inside the root (a fresh install on every run)."""
    work = tmp_path_factory.mktemp(f"pi-{pi_root.machine}")
    work.chmod(0o755)
    directory = new_broker_dir()
    broker = MosquittoProcess.from_roster(
        Roster.build(venue="test", nodes={"pi-01": ["1", "2"]}), directory
    )
    clean_root(pi_root)
    try:
        setup = NodeSetup(broker=broker, emulator_port=free_port())
        out = apply_node_playbook(pi_root, pi_bundle, work, setup, ROSTER)
        yield Installed(pi_root, broker, setup, work, out)
    finally:
        broker.close()
        shutil.rmtree(directory, ignore_errors=True)
        clean_root(pi_root)


PROBE = """
import importlib, json, platform, sys
mods = {}
for name in ("PIL", "cbor2", "greenlet", "pydantic_core", "sqlalchemy", "serial", "luma.core",
             "luma.led_matrix.device", "gpiozero", "aiomqtt", "qizhong", "board_nodes.node"):
    mods[name] = importlib.import_module(name).__file__
print(json.dumps({"machine": platform.machine(), "python": sys.version_info[:2],
                  "prefix": sys.prefix, "modules": mods}))
"""


def test_the_playbook_installed_the_bundle_for_this_cpu(installed: Installed) -> None:
    out = installed.run([f"{VENV}/bin/python", "-c", PROBE])
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert got["machine"] == installed.root.machine
    assert got["python"] == [3, 11] and got["prefix"] == VENV
    cfg = (installed.root.path / VENV.lstrip("/") / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = true" in cfg
    system = {n for n, f in got["modules"].items() if f.startswith("/usr/lib/python3/")}
    if installed.root.machine == "armv7l":
        # PyPI has no armv7 wheel for these: Debian's packages stand in (the recipe's list).
        assert {"PIL", "cbor2", "greenlet"} <= system
    else:
        assert system == set(), system  # everything from the bundle
    assert all(f.startswith(VENV) for n, f in got["modules"].items() if n not in system)
    # The playbook's own checks ran inside: node.toml validated, the mock self-test passed.
    assert "Write node.toml" in installed.ansible_output
    assert "Self-test the face code on mock pins" in installed.ansible_output


def test_node_check_inside_the_root(installed: Installed) -> None:
    ok = installed.run([f"{VENV}/bin/qizhong", "node", "--check", "--config", CONFIG])
    assert ok.returncode == 0 and "ok (2 boards)" in ok.stdout, ok.stdout + ok.stderr
    bad = installed.work / "bad-node.toml"
    text = (installed.root.path / CONFIG.lstrip("/")).read_text()
    bad.write_text(text.replace('face = "simulated"', 'face = "lever"'))
    out = installed.run([f"{VENV}/bin/qizhong", "node", "--check", "--config", str(bad)])
    assert out.returncode == 2
    assert "board[1].face" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_face_self_test_on_mock_pins_inside_the_root(installed: Installed) -> None:
    out = installed.run(
        [f"{VENV}/bin/qizhong", "self-test", "--mock", "--timeout", "10", "--segments-s", "0.2",
         "--lang", "en"],
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "FAIL" not in out.stdout and "PASS" in out.stdout, out.stdout


def test_serial_self_test_inside_the_root_against_emulate_clock_on_the_host(
    installed: Installed, tmp_path: Path
) -> None:
    """``qizhong self-test --url socket://`` from the installed bundle, against the host's
    ``qizhong emulate-clock``; each key it asks for is typed on the emulator's keyboard."""
    clock = HostClock(log=tmp_path / "emulate-clock.out")
    asked: list[str] = []
    lines: queue.Queue[str | None] = queue.Queue()
    test: subprocess.Popen[str] | None = None
    try:
        test = subprocess.Popen(
            installed.root.command(
                [f"{VENV}/bin/qizhong", "self-test", "--url", clock.url, "--timeout",
                 str(int(STEP_S)), "--lang", "en"],
            ),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=root_env({**OFFLINE, "PYTHONUNBUFFERED": "1"}),  # each ask seen when printed
            start_new_session=True,
        )  # fmt: skip
        assert test.stdout is not None
        reader = threading.Thread(target=_lines, args=(test.stdout, lines), daemon=True)
        reader.start()
        out: list[str] = []
        while (line := lines.get(timeout=ONLINE_S)) is not None:
            out.append(line)
            if line.startswith("Please "):
                what = line.removeprefix("Please ").split(", within ")[0]
                asked.append(what)
                clock.type(KEY_FOR_ASK[what])
        code = test.wait(timeout=STEP_S)
    finally:
        if test is not None and test.poll() is None:
            os.killpg(test.pid, signal.SIGKILL)
            test.wait()
        emulator_code = clock.close()
    text = "".join(out)
    assert code == 0, text[-3000:]
    assert "clock 0x51a00001, firmware 1.0.0" in text, text
    assert "acknowledged round trip PASS" in text and "acknowledged PASS" in text, text
    assert asked == list(KEY_FOR_ASK), asked  # every key the emulated clock has, in order
    assert text.count("  PASS ") == 6 and "FAIL" not in text, text
    assert "Self-test PASSED: all 8 checks fine." in text, text
    assert emulator_code == 0, clock.output()[-2000:]


def _lines(stream: Any, into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


async def _wait(predicate: Any, timeout: float, what: str, node: subprocess.Popen[str]) -> None:
    try:
        async with asyncio.timeout(timeout):
            while not await predicate():
                if node.poll() is not None:
                    pytest.fail(f"the node exited ({node.returncode}) waiting for {what}")
                await asyncio.sleep(0.2)
    except TimeoutError:
        pytest.fail(f"no {what} within {timeout:.0f} s")


async def test_a_short_game_inside_the_root_reaches_the_station(
    installed: Installed, tmp_path: Path, start_station: Any
) -> None:
    setup = installed.setup
    serial, simulated = setup.serial_board, setup.simulated_board
    station = await start_station(station_config(tmp_path, installed.broker))
    store = station.store
    log = (tmp_path / "node.log").open("w+")
    async with ClockEmulator() as emulator:
        await emulator.listen(f"socket://127.0.0.1:{setup.emulator_port}")
        node = subprocess.Popen(
            installed.root.command([f"{VENV}/bin/qizhong", "node", "--config", CONFIG]),
            stdout=log, stderr=subprocess.STDOUT, text=True, env=root_env(),
            start_new_session=True,  # proot and the emulated node: one group to signal
        )  # fmt: skip
        try:

            async def online() -> bool:
                views = {v["board"]: v for v in station.board_views()}
                return all(views.get(b, {}).get("online") for b in (serial, simulated))

            await _wait(online, ONLINE_S, "both boards online at the station", node)
            await emulator.wait_connected(timeout=STEP_S)
            for board in (serial, simulated):
                game = f"r1-b{board}"
                result = await station.send_command(
                    board, "set_game", {"game": game, "tc": "35m+5s"}
                )
                assert result.ok, result.as_dict()
            for board in (serial, simulated):
                assert (await station.send_command(board, "start")).ok

            async def moves(board: str, n: int) -> bool:
                return len(await store.events(board=board, types=["move"])) >= n

            # The serial clock: four moves a side, pressed on the emulated device.
            for n in range(1, 9):
                side = Side.RED if n % 2 else Side.BLACK
                await emulator.press(side)
                await _wait(lambda n=n: moves(serial, n), STEP_S, f"move {n} on board 1", node)
            # The simulated board plays by itself (a move every ~0.4 s).
            await _wait(lambda: moves(simulated, 6), ONLINE_S, "6 moves on board 2", node)
            assert (await station.send_command(serial, "pause")).ok
        finally:
            os.killpg(node.pid, signal.SIGTERM)
            try:
                node.wait(timeout=STEP_S)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait()
            log.seek(0)
            node_log = log.read()
            log.close()
    assert node.returncode == 0, node_log[-4000:]
    assert " ERROR " not in node_log, node_log[-4000:]

    played = await store.events(board=serial, types=["move"])
    assert [(e["data"]["side"], e["data"]["move"]) for e in played] == [
        (s, n) for n in range(1, 5) for s in ("red", "black")
    ]
    assert all(e["game"] == "r1-b1" and e["data"]["used_ms"] >= 0 for e in played)
    # Every event each board sent is stored once, numbered without gaps.
    seqs = await store.seqs_by_board()
    for board in (serial, simulated):
        got = seqs[board]
        assert got == list(range(got[0], got[0] + len(got))), (board, got)
    other = await store.events(board=simulated, types=["move"], limit=1000)
    assert len(other) >= 6 and {e["game"] for e in other} == {"r1-b2"}
