"""``qizhong self-test`` on MockFactory: the robot presses every key; a dead key fails."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from firmware_bridge import selftest
from firmware_bridge.displays import Cell, NullDisplay
from firmware_bridge.gpio_face import GpioClockFace, GpioFaceConfig


def parse(*argv):
    parser = argparse.ArgumentParser()
    selftest.add_arguments(parser)
    return parser.parse_args(list(argv))


FAST = ("--timeout", "0.5", "--segments-s", "0", "--lang", "en")


def test_mock_run_passes_every_check(capsys):
    assert selftest.run(parse("--mock", *FAST)) == 0
    out = capsys.readouterr().out
    assert out.count("PASS ") == 6  # red, black, pause, arbiter, power off, power on
    assert "Self-test PASSED: all 6 checks fine." in out


def test_dead_key_fails_with_exit_code_1(capsys):
    assert selftest.run(parse("--mock", "--mock-dead", "pause_key", *FAST)) == 1
    out = capsys.readouterr().out
    assert "FAIL: nothing within" in out
    assert "1 of 6 checks failed: pause_key:pause_key" in out


def test_lever_from_a_gpio_file_in_chinese(tmp_path, capsys):
    f = tmp_path / "face.toml"
    f.write_text(
        "red_button = 17\nblack_button = 27\nlever = true\npause_key = 22\narbiter_key = 23\n"
        'power_sense = 24\n[display]\ndriver = "tm1637"\nleft_clk = 20\nleft_dio = 21\n'
        "right_clk = 19\nright_dio = 26\n",
        encoding="utf-8",
    )
    assert (
        selftest.run(parse("--mock", "--gpio", str(f), "--timeout", "0.5", "--segments-s", "0"))
        == 0
    )
    assert "自检通过" in capsys.readouterr().out


def test_board_from_node_config(tmp_path, capsys):
    f = tmp_path / "node.toml"
    f.write_text(
        '[[board]]\nid = "12"\nface = "gpio"\n[board.gpio]\nred_button = 17\n'
        "black_button = 27\npause_key = 22\narbiter_key = 23\npower_sense = 24\n"
        '[[board]]\nid = "13"\nface = "serial"\n',
        encoding="utf-8",
    )
    assert selftest.run(parse("--mock", "--config", str(f), "--board", "12", *FAST)) == 0
    assert selftest.run(parse("--config", str(f), "--board", "13")) == 2
    assert "board 13: a serial face needs url" in capsys.readouterr().err
    assert selftest.run(parse("--config", str(f), "--board", "99")) == 2
    assert "no board '99'" in capsys.readouterr().err


def test_bad_wiring_is_refused_with_exit_code_2(tmp_path, capsys):
    f = tmp_path / "face.toml"
    f.write_text("red_button = 17\nblack_button = 17\n", encoding="utf-8")
    assert selftest.run(parse("--gpio", str(f))) == 2
    assert "bad wiring config" in capsys.readouterr().err
    assert selftest.run(parse()) == 2


async def test_every_segment_is_lit_first_and_wrong_keys_are_reported(mock_factory):
    cfg = GpioFaceConfig.model_validate({**selftest.DEMO_WIRING, "display": {"driver": "none"}})
    display = NullDisplay()
    face = GpioClockFace(cfg, pin_factory=mock_factory, display=display)
    lines: list[str] = []
    seen_lit: list[bool] = []

    def out(line):
        lines.append(line)
        if line.startswith("Every segment"):
            seen_lit.append(display.cells == (Cell("8", True),) * 16)

    def hands(step):
        if step.key == "red_button":
            mock_factory.pin(27).drive_low()  # the wrong wire: black answers for red
            mock_factory.pin(27).drive_high()

    async with face:
        mock_factory.pin(24).drive_high()
        await asyncio.sleep(0.1)  # past sense_debounce_ms: the clock is on
        results = await selftest.run_selftest(
            face, timeout_s=0.2, segments_s=0, lang="en", out=out, on_ask=hands
        )
    assert seen_lit == [True]
    assert [r.ok for r in results] == [False] * 6
    assert results[0].others and results[0].others[0].side.value == "black"
    assert any("also seen: <FaceEvent press black" in line for line in lines)


@pytest.mark.parametrize("lever_side", ["red", "black"])
def test_plan_asks_a_lever_for_the_other_side_first(mock_factory, lever_side):
    face = GpioClockFace(GpioFaceConfig.model_validate({**selftest.DEMO_WIRING, "lever": True}))
    face.lever_side = selftest.Side(lever_side)
    first = selftest.plan_steps(face, power_off_now=True)
    assert first[0].side is selftest.Side(lever_side).other
    assert [s.kind.value for s in first[-3:]] == ["power_on", "power_off", "power_on"]
