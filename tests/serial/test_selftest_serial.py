"""``qizhong self-test`` for a serial clock (issue 13 build item 5): the link round trip,
the display, every key the clock says it has."""

from __future__ import annotations

import argparse
import socket
import threading

from firmware_bridge import selftest
from firmware_bridge.serial.emulator import ClockEmulator

FAST = ("--timeout", "1", "--lang", "en")


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    selftest.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_mock_serial_clock_passes_link_display_and_every_key(capsys) -> None:
    assert selftest.run(parse("--mock", "--serial", *FAST)) == 0
    out = capsys.readouterr().out
    assert "clock 0x51a00001, firmware 1.0.0" in out
    assert "acknowledged round trip PASS" in out
    assert "every segment lit, full brightness and a beep, acknowledged PASS" in out
    assert out.count("  PASS ") == 6  # red, black, pause, arbiter, power off, power on
    assert "Self-test PASSED: all 8 checks fine." in out


def test_a_dead_key_on_a_serial_clock_fails_with_exit_code_1(capsys) -> None:
    assert selftest.run(parse("--mock", "--serial", "--mock-dead", "arbiter_key", *FAST)) == 1
    assert "1 of 8 checks failed: arbiter_key:arbiter_key" in capsys.readouterr().out


def test_an_unreachable_serial_clock_is_exit_code_2(capsys) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert selftest.run(parse("--url", f"socket://127.0.0.1:{port}", *FAST)) == 2
    assert "cannot open" in capsys.readouterr().err


def test_a_serial_board_of_the_node_config_is_checked_over_its_url(tmp_path, capsys) -> None:
    # A clock with no keys pressed: the link and the display pass, the keys time out.
    import asyncio

    ready = threading.Event()
    stop = threading.Event()
    url: dict[str, str] = {}

    def serve() -> None:
        async def main() -> None:
            async with ClockEmulator() as emu:
                url["url"] = await emu.listen()
                ready.set()
                while not stop.is_set():
                    await asyncio.sleep(0.05)

        asyncio.run(main())

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        assert ready.wait(10)
        f = tmp_path / "node.toml"
        f.write_text(f'[[board]]\nid = "13"\nface = "serial"\nurl = "{url["url"]}"\n')
        args = parse("--config", str(f), "--board", "13", "--timeout", "0.3", "--lang", "en")
        assert selftest.run(args) == 1
        out = capsys.readouterr().out
        assert "acknowledged round trip PASS" in out and "acknowledged PASS" in out
        assert "6 of 8 checks failed" in out
    finally:
        stop.set()
        thread.join(10)
